import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readTool } from '../../src/tools/index.js'
import { runTool, tempDir, toolContext } from './context.js'

const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

describe('read', () => {
  it('returns the text with line numbers', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), 'first\nsecond\nthird\n')
    const result = await runTool(readTool({ workspace }), { path: 'a.txt' })
    expect(result.isError).toBe(false)
    expect(result.text).toBe('     1\tfirst\n     2\tsecond\n     3\tthird')
    expect(result.meta).toEqual({ path: 'a.txt', firstLine: 1, lastLine: 3, isComplete: true })
  })

  it('reads a line range and says how to continue', async () => {
    const workspace = await tempDir()
    const lines = Array.from({ length: 10 }, (_, index) => `line ${index + 1}`)
    await writeFile(join(workspace, 'a.txt'), lines.join('\n'))
    const result = await runTool(readTool({ workspace }), { path: 'a.txt', offset: 4, limit: 3 })
    expect(result.text).toBe(
      '     4\tline 4\n     5\tline 5\n     6\tline 6\n\n[a.txt continues after line 6 (the line limit was reached); call read with offset 7 to read more.]',
    )
  })

  it('caps lines at maxLines even when the call asks for more', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), 'a\nb\nc\nd\n')
    const result = await runTool(readTool({ workspace, maxLines: 2 }), {
      path: 'a.txt',
      limit: 100,
    })
    expect(result.text).toContain('     2\tb\n\n[a.txt continues after line 2')
    expect(result.text).not.toContain('\tc')
  })

  it('stops at the character limit on a line boundary', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), `${'x'.repeat(50)}\n`.repeat(10))
    const result = await runTool(readTool({ workspace, maxChars: 130 }), { path: 'a.txt' })
    expect(result.text).toContain('     2\t')
    expect(result.text).not.toContain('     3\t')
    expect(result.text).toContain(
      'continues after line 2 (the output reached its size limit); call read with offset 3',
    )
  })

  it('cuts very long lines with a note', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), 'y'.repeat(30))
    const result = await runTool(readTool({ workspace, maxLineChars: 10 }), { path: 'a.txt' })
    expect(result.text).toBe(`     1\t${'y'.repeat(10)}… [line truncated: 20 more characters]`)
  })

  it('refuses an offset past the end with the valid range', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), 'one\ntwo\n')
    const result = await runTool(readTool({ workspace }), { path: 'a.txt', offset: 5 })
    expect(result.isError).toBe(true)
    expect(result.text).toBe(
      'a.txt has 2 lines; offset 5 is past the end. Use an offset from 1 to 2.',
    )
  })

  it('says when a file is empty', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'empty.txt'), '')
    const result = await runTool(readTool({ workspace }), { path: 'empty.txt' })
    expect(result).toMatchObject({ isError: false, text: 'empty.txt is empty.' })
  })

  it('refuses binary files with a message', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'blob.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]))
    const result = await runTool(readTool({ workspace }), { path: 'blob.bin' })
    expect(result.isError).toBe(true)
    expect(result.text).toContain('blob.bin is a binary file (8 bytes)')
    expect(result.text).toContain('use bash')
  })

  it('returns images as image blocks', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'dot.png'), Buffer.from(PNG_1X1, 'base64'))
    const result = await runTool(readTool({ workspace }), { path: 'dot.png' })
    expect(result.isError).toBe(false)
    expect(result.content).toEqual([
      {
        type: 'text',
        text: `dot.png (image/png, ${Buffer.from(PNG_1X1, 'base64').length} bytes):`,
      },
      { type: 'image', mediaType: 'image/png', data: PNG_1X1 },
    ])
  })

  it('refuses images when they are turned off or too large', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'dot.png'), Buffer.from(PNG_1X1, 'base64'))
    const off = await runTool(readTool({ workspace, images: false }), { path: 'dot.png' })
    expect(off.isError).toBe(true)
    expect(off.text).toContain('images are turned off')
    const small = await runTool(readTool({ workspace, maxImageBytes: 10 }), { path: 'dot.png' })
    expect(small.isError).toBe(true)
    expect(small.text).toContain('over the 10-byte limit')
  })

  it('points at ls for a directory and at glob for a missing file', async () => {
    const workspace = await tempDir()
    await mkdir(join(workspace, 'src'))
    const directory = await runTool(readTool({ workspace }), { path: 'src' })
    expect(directory).toMatchObject({
      isError: true,
      text: 'src is a directory; use ls to list it.',
    })
    const missing = await runTool(readTool({ workspace }), { path: 'nope.txt' })
    expect(missing).toMatchObject({
      isError: true,
      text: 'nope.txt: it does not exist; check the path with ls or glob.',
    })
  })

  it('reports invalid arguments by field', async () => {
    const workspace = await tempDir()
    const result = await runTool(readTool({ workspace }), { path: 'a', offset: 0 })
    expect(result.isError).toBe(true)
    expect(result.text).toContain('- offset:')
  })

  it('returns a canceled result when the signal is already aborted', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'a.txt'), 'text')
    const { context, controller } = toolContext(workspace)
    controller.abort()
    const result = await runTool(readTool({ workspace }), { path: 'a.txt' }, context)
    expect(result).toMatchObject({ isError: true, text: 'read was canceled before it finished.' })
  })
})

describe('read of special files', () => {
  it('refuses a named pipe instead of blocking on it', async () => {
    const workspace = await tempDir()
    execFileSync('mkfifo', [join(workspace, 'pipe')])
    const result = await runTool(readTool({ workspace }), { path: 'pipe' })
    expect(result).toMatchObject({
      isError: true,
      text: 'pipe is not a regular file (a device, socket or pipe); read only reads files.',
    })
  })
})
