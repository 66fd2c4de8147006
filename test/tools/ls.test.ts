import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lsTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

describe('ls', () => {
  it('lists entries sorted, marking directories and symlinks, hidden ones included', async () => {
    const workspace = await tempDir()
    await mkdir(join(workspace, 'src'))
    await mkdir(join(workspace, 'node_modules'))
    await writeFile(join(workspace, 'b.txt'), '')
    await writeFile(join(workspace, '.env'), '')
    await symlink('b.txt', join(workspace, 'a-link'))
    const result = await runTool(lsTool({ workspace }), {})
    expect(result).toMatchObject({
      isError: false,
      text: '.env\na-link -> b.txt\nb.txt\nnode_modules/\nsrc/',
    })
    expect(result.meta).toEqual({ path: '.', total: 5, isTruncated: false })
  })

  it('lists a subdirectory, limited, with a note', async () => {
    const workspace = await tempDir()
    await mkdir(join(workspace, 'dir'))
    for (const name of ['a', 'b', 'c']) await writeFile(join(workspace, 'dir', name), '')
    const result = await runTool(lsTool({ workspace }), { path: 'dir', limit: 2 })
    expect(result.text).toBe('a\nb\n\n[Showing 2 of 3 entries; use glob to find specific files.]')
  })

  it('says when a directory is empty, missing, or a file', async () => {
    const workspace = await tempDir()
    const empty = await runTool(lsTool({ workspace }), {})
    expect(empty).toMatchObject({ isError: false, text: 'The workspace is empty.' })
    await writeFile(join(workspace, 'f.txt'), '')
    await mkdir(join(workspace, 'e'))
    expect((await runTool(lsTool({ workspace }), { path: 'e' })).text).toBe('e is empty.')
    const missing = await runTool(lsTool({ workspace }), { path: 'nope' })
    expect(missing).toMatchObject({
      isError: true,
      text: 'nope: it does not exist; check the path with ls or glob.',
    })
    const file = await runTool(lsTool({ workspace }), { path: 'f.txt' })
    expect(file).toMatchObject({
      isError: true,
      text: 'f.txt is a file, not a directory; use read to see its content.',
    })
  })
})
