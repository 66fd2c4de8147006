import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { writeTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

describe('write', () => {
  it('creates a file and its missing parent directories', async () => {
    const workspace = await tempDir()
    const result = await runTool(writeTool({ workspace }), {
      path: 'a/b/c.txt',
      content: 'héllo\n',
    })
    expect(result).toMatchObject({ isError: false, text: 'Created a/b/c.txt (7 bytes).' })
    expect(result.meta).toEqual({ path: 'a/b/c.txt', isCreated: true, bytes: 7 })
    expect(await readFile(join(workspace, 'a/b/c.txt'), 'utf8')).toBe('héllo\n')
  })

  it('overwrites an existing file', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), 'old content')
    const result = await runTool(writeTool({ workspace }), { path: 'a.txt', content: 'new' })
    expect(result).toMatchObject({ isError: false, text: 'Overwrote a.txt (3 bytes).' })
    expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('new')
  })

  it('refuses to write over a directory', async () => {
    const workspace = await tempDir()
    await mkdir(join(workspace, 'dir'))
    const result = await runTool(writeTool({ workspace }), { path: 'dir', content: 'x' })
    expect(result).toMatchObject({
      isError: true,
      text: 'dir is a directory; give a file path inside it.',
    })
  })

  it('reports a parent that is a file', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'file'), 'x')
    const result = await runTool(writeTool({ workspace }), { path: 'file/child.txt', content: 'x' })
    expect(result.isError).toBe(true)
    expect(result.text).toMatch(/^file\/child\.txt: /)
  })

  it('runs alone in a batch', () => {
    expect(writeTool({ workspace: '.' }).concurrency).toBe('exclusive')
  })
})
