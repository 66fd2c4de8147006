import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { resolveWorkspacePath } from '../../src/tools/builtin/workspace.js'
import { editTool, globTool, grepTool, lsTool, readTool, writeTool } from '../../src/tools/index.js'
import { runTool, tempDir, toolContext } from './context.js'

/** A workspace next to an "outside" directory holding a secret. */
async function layout() {
  const root = await tempDir()
  const workspace = join(root, 'workspace')
  const outside = join(root, 'outside')
  await mkdir(workspace)
  await mkdir(outside)
  await writeFile(join(outside, 'secret.txt'), 'secret\n')
  await writeFile(join(workspace, 'inside.txt'), 'inside\n')
  return { root, workspace, outside }
}

describe('workspace confinement', () => {
  it('refuses ../ paths with a message that says what is allowed', async () => {
    const { workspace, outside } = await layout()
    const result = await runTool(readTool({ workspace }), { path: '../outside/secret.txt' })
    expect(result.isError).toBe(true)
    expect(result.text).toBe(
      `../outside/secret.txt is outside the workspace ${workspace}. Only paths inside the workspace are allowed: use a path relative to the workspace, and do not go through symlinks that point outside it.`,
    )
    expect(result.text).not.toContain('secret\n')
    expect(outside).not.toBe(workspace)
  })

  it('refuses absolute paths outside the workspace', async () => {
    const { workspace, outside } = await layout()
    const result = await runTool(readTool({ workspace }), { path: join(outside, 'secret.txt') })
    expect(result.isError).toBe(true)
    expect(result.text).toContain('is outside the workspace')
  })

  it('accepts ../ that stays inside, and absolute paths inside', async () => {
    const { workspace } = await layout()
    await mkdir(join(workspace, 'sub'))
    const relative = await runTool(readTool({ workspace }), { path: 'sub/../inside.txt' })
    expect(relative).toMatchObject({ isError: false, text: '     1\tinside' })
    const absolute = await runTool(readTool({ workspace }), { path: join(workspace, 'inside.txt') })
    expect(absolute).toMatchObject({ isError: false, text: '     1\tinside' })
  })

  it('refuses a symlink that escapes, for reading and writing', async () => {
    const { workspace, outside } = await layout()
    await symlink(join(outside, 'secret.txt'), join(workspace, 'link.txt'))
    await symlink(outside, join(workspace, 'linkdir'))
    const read = await runTool(readTool({ workspace }), { path: 'link.txt' })
    expect(read.isError).toBe(true)
    expect(read.text).toContain(
      `link.txt is outside the workspace ${workspace} (it resolves to ${join(outside, 'secret.txt')})`,
    )
    const write = await runTool(writeTool({ workspace }), { path: 'linkdir/new.txt', content: 'x' })
    expect(write.isError).toBe(true)
    expect(write.text).toContain('is outside the workspace')
    const edit = await runTool(editTool({ workspace }), {
      path: 'link.txt',
      oldText: 'secret',
      newText: 'x',
    })
    expect(edit.isError).toBe(true)
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n')
  })

  it('refuses a dangling symlink that points outside (write would create the target)', async () => {
    const { workspace, outside } = await layout()
    await symlink(join(outside, 'created-by-write.txt'), join(workspace, 'dangling'))
    const result = await runTool(writeTool({ workspace }), { path: 'dangling', content: 'x' })
    expect(result.isError).toBe(true)
    expect(result.text).toContain('is outside the workspace')
    await expect(readFile(join(outside, 'created-by-write.txt'), 'utf8')).rejects.toThrow(/ENOENT/)
  })

  it('refuses a symlink cycle with a message', async () => {
    const { workspace } = await layout()
    await symlink(join(workspace, 'b'), join(workspace, 'a'))
    await symlink(join(workspace, 'a'), join(workspace, 'b'))
    const result = await runTool(readTool({ workspace }), { path: 'a' })
    expect(result.isError).toBe(true)
    expect(result.text).toContain('too many levels of symbolic links')
  })

  it('refuses outside paths in ls, grep and glob too', async () => {
    const { workspace } = await layout()
    for (const [tool, args] of [
      [lsTool({ workspace }), { path: '..' }],
      [grepTool({ workspace, ripgrep: false }), { pattern: 'secret', path: '../outside' }],
      [globTool({ workspace }), { pattern: '*.txt', path: '../outside' }],
    ] as const) {
      const result = await runTool(tool, args)
      expect(result.isError, tool.name).toBe(true)
      expect(result.text, tool.name).toContain('is outside the workspace')
    }
  })

  it('allows extra roots and, when configured, anything', async () => {
    const { workspace, outside } = await layout()
    const extra = await runTool(readTool({ workspace, extraRoots: [outside] }), {
      path: '../outside/secret.txt',
    })
    expect(extra).toMatchObject({ isError: false, text: '     1\tsecret' })
    const open = await runTool(readTool({ workspace, allowOutsideWorkspace: true }), {
      path: join(outside, 'secret.txt'),
    })
    expect(open).toMatchObject({ isError: false, text: '     1\tsecret' })
  })

  it('resolves a new file under a symlinked directory inside the workspace to its real place', async () => {
    const { workspace } = await layout()
    await mkdir(join(workspace, 'real'))
    await symlink(join(workspace, 'real'), join(workspace, 'alias'))
    const resolved = await resolveWorkspacePath({ workspace }, 'alias/deeper/new.txt')
    expect(resolved).toEqual({
      ok: true,
      real: join(workspace, 'real', 'deeper', 'new.txt'),
      display: 'real/deeper/new.txt',
    })
  })
})

describe('path resolution limits (issue 9 items 7 and 16)', () => {
  it('refuses a path over the OS limit at once, instead of resolving 40 000 components', async () => {
    const { workspace } = await layout()
    const result = await runTool(readTool({ workspace }), { path: 'a/'.repeat(40_000) })
    expect(result.isError).toBe(true)
    expect(result.text).toMatch(
      /^a\/a\/.*…: the path is \d+ bytes long, over the limit of 4095 bytes for a file path\. Use a shorter path\.$/,
    )
  })

  it('refuses a name over 255 bytes', async () => {
    const { workspace } = await layout()
    const result = await runTool(writeTool({ workspace }), {
      path: `${'n'.repeat(256)}.txt`,
      content: 'x',
    })
    expect(result.text).toContain(
      'a file or directory name in the path is 260 bytes long, over the limit of 255 bytes for one name',
    )
  })

  it('resolves a deep missing path under the limit, component by component', async () => {
    const { workspace } = await layout()
    const deep = 'd/'.repeat(1900)
    const resolved = await resolveWorkspacePath({ workspace }, `${deep}file.txt`)
    expect(resolved).toEqual({
      ok: true,
      real: join(workspace, deep, 'file.txt'),
      display: `${deep}file.txt`,
    })
  })

  it('stops resolving when the call is canceled', async () => {
    const { workspace } = await layout()
    const controller = new AbortController()
    const pending = resolveWorkspacePath({ workspace }, 'missing/'.repeat(400), controller.signal)
    controller.abort()
    expect(await pending).toMatchObject({ ok: false, isCanceled: true })
    const context = toolContext(workspace)
    context.controller.abort()
    const result = await runTool(readTool({ workspace }), { path: 'inside.txt' }, context.context)
    expect(result.text).toBe('read was canceled before it finished.')
  })

  it('explains that ~ is not the home directory', async () => {
    const { workspace } = await layout()
    for (const path of ['~', '~/notes.txt', '~root/.bashrc']) {
      const result = await runTool(writeTool({ workspace }), { path, content: 'x' })
      expect(result.isError, path).toBe(true)
      expect(result.text, path).toContain(
        'the tools do not expand "~" (only a shell does), so this would name a directory called "~" inside the workspace, not the home directory',
      )
    }
    const literal = await runTool(writeTool({ workspace }), { path: './~/notes.txt', content: 'x' })
    expect(literal).toMatchObject({ isError: false, text: 'Created ~/notes.txt (1 bytes).' })
    const named = await runTool(writeTool({ workspace }), { path: '~notes', content: 'x' })
    expect(named.text).toBe('Created ~notes (1 bytes).')
  })

  it('shows paths relative to the workspace when the workspace is reached through a symlink', async () => {
    const { root, workspace } = await layout()
    const alias = join(root, 'alias')
    await symlink(workspace, alias)
    await mkdir(join(workspace, 'src'))
    await writeFile(join(workspace, 'src', 'a.ts'), 'needle\n')
    const grep = await runTool(grepTool({ workspace: alias, ripgrep: false }), {
      pattern: 'needle',
    })
    expect(grep.text).toBe('src/a.ts:1:needle')
    const glob = await runTool(globTool({ workspace: alias }), { pattern: '**/*.ts' })
    expect(glob.text).toBe('src/a.ts')
    const write = await runTool(writeTool({ workspace: alias }), {
      path: join(alias, 'b.txt'),
      content: 'x',
    })
    expect(write.text).toBe('Created b.txt (1 bytes).')
    const missing = await runTool(readTool({ workspace: alias }), { path: 'nope/x.txt' })
    expect(missing.text).toBe('nope/x.txt: it does not exist; check the path with ls or glob.')
  })
})
