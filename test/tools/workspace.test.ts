import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { resolveWorkspacePath } from '../../src/tools/builtin/workspace.js'
import { editTool, globTool, grepTool, lsTool, readTool, writeTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

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
