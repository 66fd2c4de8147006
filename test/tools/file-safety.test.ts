/**
 * Issue 9 item 4: `write` and `edit` never write through a hard link or a symlink swapped in
 * after the workspace check. Real hard links, and a real process swapping a file (or a
 * directory) for a symlink in a tight loop while the tools write.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { link, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { editTool, readTool, writeTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

async function layout() {
  const root = await tempDir()
  const workspace = join(root, 'workspace')
  const outside = join(root, 'outside')
  await mkdir(workspace)
  await mkdir(outside)
  await writeFile(join(outside, 'secret.txt'), 'secret\n')
  return { workspace, outside, secret: join(outside, 'secret.txt') }
}

describe('hard links', () => {
  it('write and edit refuse a file with another name, naming the setting that allows it', async () => {
    const { workspace, secret } = await layout()
    await link(secret, join(workspace, 'linked.txt'))
    const write = await runTool(writeTool({ workspace }), {
      path: 'linked.txt',
      content: 'owned\n',
    })
    expect(write).toMatchObject({
      isError: true,
      text: 'linked.txt has 2 hard links (other names for the same file, possibly outside the workspace), so it was not written. If the user wants such files written (they are replaced, so the other names keep the old content), they can set "tools": { "allowHardLinks": true } in rudder\'s config.',
    })
    const edit = await runTool(editTool({ workspace }), {
      path: 'linked.txt',
      oldText: 'secret',
      newText: 'owned',
    })
    expect(edit.isError).toBe(true)
    expect(edit.text).toContain('linked.txt has 2 hard links')
    expect(await readFile(secret, 'utf8')).toBe('secret\n')
  })

  it('when allowed, replaces the file: its other name keeps the old content', async () => {
    const { workspace, secret } = await layout()
    await link(secret, join(workspace, 'linked.txt'))
    const edit = await runTool(editTool({ workspace, allowHardLinks: true }), {
      path: 'linked.txt',
      oldText: 'secret',
      newText: 'edited',
    })
    expect(edit).toMatchObject({ isError: false })
    expect(await readFile(join(workspace, 'linked.txt'), 'utf8')).toBe('edited\n')
    expect(await readFile(secret, 'utf8')).toBe('secret\n')
    expect((await stat(secret)).nlink).toBe(1)
  })
})

describe('atomic replacement', () => {
  it('keeps the mode of the file it replaces and leaves no temporary file', async () => {
    const { workspace } = await layout()
    const script = join(workspace, 'run.sh')
    await writeFile(script, 'echo old\n', { mode: 0o750 })
    const edit = await runTool(editTool({ workspace }), {
      path: 'run.sh',
      oldText: 'old',
      newText: 'new',
    })
    expect(edit.isError).toBe(false)
    expect((await stat(script)).mode & 0o777).toBe(0o750)
    await runTool(writeTool({ workspace }), { path: 'deep/er/new.txt', content: 'x' })
    expect(await readFile(join(workspace, 'deep/er/new.txt'), 'utf8')).toBe('x')
    expect(await readdir(workspace)).toEqual(['deep', 'run.sh'])
  })
})

/**
 * Starts a process that swaps `path` between a regular file (or directory) and a symlink to
 * `target` as fast as it can, for at most `rounds` rounds; resolves once it has started.
 */
async function startSwapper(path: string, target: string, kind: 'file' | 'directory') {
  const code = `
    const fs = require('node:fs')
    const [path, target, kind] = process.argv.slice(1)
    const spare = path + '.swap'
    const step = (action) => { try { action() } catch {} }
    process.stdout.write('ready\\n')
    for (let round = 0; round < 2000000; round++) {
      if (kind === 'file') {
        step(() => fs.symlinkSync(target, spare))
        step(() => fs.renameSync(spare, path))
        step(() => fs.writeFileSync(spare, 'inside\\n'))
        step(() => fs.renameSync(spare, path))
      } else {
        step(() => fs.symlinkSync(target, spare + '-link'))
        step(() => fs.renameSync(path, spare))
        step(() => fs.renameSync(spare + '-link', path))
        step(() => fs.renameSync(path, spare + '-link'))
        step(() => fs.renameSync(spare, path))
      }
    }
  `
  const child = spawn(process.execPath, ['-e', code, path, target, kind], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((ready) => child.stdout.once('data', () => ready()))
  return {
    stop: () =>
      new Promise<void>((done) => {
        child.once('close', () => done())
        child.kill('SIGKILL')
      }),
  }
}

describe('a symlink swapped in between the check and the write', () => {
  it('never lets write, edit or read escape through a swapped file (real race, zero escapes)', async () => {
    const { workspace, outside, secret } = await layout()
    await writeFile(join(workspace, 'target'), 'inside\n')
    const swapper = await startSwapper(join(workspace, 'target'), secret, 'file')
    const read = readTool({ workspace })
    const write = writeTool({ workspace })
    const edit = editTool({ workspace })
    let leaks = 0
    try {
      for (let round = 0; round < 300; round++) {
        await runTool(write, { path: 'target', content: 'written\n' })
        await runTool(edit, { path: 'target', oldText: 'inside', newText: 'edited' })
        const seen = await runTool(read, { path: 'target' })
        if (seen.text.includes('\tsecret')) leaks++
      }
    } finally {
      await swapper.stop()
    }
    expect(await readFile(secret, 'utf8')).toBe('secret\n')
    expect(await readdir(outside)).toEqual(['secret.txt'])
    expect(leaks).toBe(0)
  })

  // Only Linux lets a path go through an open directory (/proc/self/fd); elsewhere the
  // directory is verified by device and inode just before use, which narrows the race only.
  if (existsSync('/proc/self/fd'))
    it('never lets write escape through a directory swapped on the path (Linux: writes go through the opened directory)', async () => {
      const { workspace, outside } = await layout()
      await mkdir(join(workspace, 'dir'))
      const swapper = await startSwapper(join(workspace, 'dir'), outside, 'directory')
      const write = writeTool({ workspace })
      try {
        for (let round = 0; round < 300; round++)
          await runTool(write, { path: 'dir/new.txt', content: 'written\n' })
      } finally {
        await swapper.stop()
      }
      expect(await readdir(outside)).toEqual(['secret.txt'])
    })
})
