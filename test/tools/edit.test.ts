import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { unifiedDiff } from '../../src/tools/builtin/diff.js'
import { editTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

async function fileWith(content: string): Promise<{ workspace: string; path: string }> {
  const workspace = await tempDir()
  await writeFile(join(workspace, 'f.ts'), content)
  return { workspace, path: join(workspace, 'f.ts') }
}

describe('edit', () => {
  it('replaces one exact occurrence and puts a unified diff in meta', async () => {
    const { workspace, path } = await fileWith('a\nb\nconst x = 1\nc\nd\n')
    const result = await runTool(editTool({ workspace }), {
      path: 'f.ts',
      oldText: 'const x = 1',
      newText: 'const x = 2\nconst y = 3',
    })
    expect(result).toMatchObject({
      isError: false,
      text: 'Edited f.ts: replaced 1 occurrence (line 3).',
    })
    expect(await readFile(path, 'utf8')).toBe('a\nb\nconst x = 2\nconst y = 3\nc\nd\n')
    expect(result.meta).toEqual({
      path: 'f.ts',
      replacements: 1,
      diff: '--- a/f.ts\n+++ b/f.ts\n@@ -1,5 +1,6 @@\n a\n b\n-const x = 1\n+const x = 2\n+const y = 3\n c\n d',
    })
  })

  it('refuses text that is not there, telling the model to copy it exactly', async () => {
    const { workspace, path } = await fileWith('function f() {\n\treturn 1\n}\n')
    const result = await runTool(editTool({ workspace }), {
      path: 'f.ts',
      oldText: '  return 1',
      newText: '  return 2',
    })
    expect(result.isError).toBe(true)
    expect(result.text).toBe(
      'oldText was not found in f.ts. It must match the file exactly, including whitespace, indentation and line breaks, without line numbers. Read the file again and copy the text exactly. The first line of oldText appears, with different indentation or surroundings, at line 2.',
    )
    expect(await readFile(path, 'utf8')).toBe('function f() {\n\treturn 1\n}\n')
  })

  it('refuses ambiguous text, naming the lines and both ways out', async () => {
    const { workspace, path } = await fileWith('x = 1\ny = 2\nx = 1\n')
    const result = await runTool(editTool({ workspace }), {
      path: 'f.ts',
      oldText: 'x = 1',
      newText: 'x = 9',
    })
    expect(result.isError).toBe(true)
    expect(result.text).toBe(
      'oldText occurs 2 times in f.ts (at lines 1, 3). Add surrounding lines to oldText so that it matches exactly one place, or set replaceAll to true to replace every occurrence.',
    )
    expect(await readFile(path, 'utf8')).toBe('x = 1\ny = 2\nx = 1\n')
  })

  it('replaces every occurrence with replaceAll', async () => {
    const { workspace, path } = await fileWith('x = 1\ny = 2\nx = 1\n')
    const result = await runTool(editTool({ workspace }), {
      path: 'f.ts',
      oldText: 'x = 1',
      newText: 'x = $&',
      replaceAll: true,
    })
    expect(result).toMatchObject({
      isError: false,
      text: 'Edited f.ts: replaced 2 occurrences (lines 1, 3).',
    })
    // `$&` is literal text here, not a replacement pattern.
    expect(await readFile(path, 'utf8')).toBe('x = $&\ny = 2\nx = $&\n')
    expect((result.meta as { replacements: number }).replacements).toBe(2)
  })

  it('keeps CRLF line endings when the model writes LF', async () => {
    const { workspace, path } = await fileWith('one\r\ntwo\r\nthree\r\n')
    const result = await runTool(editTool({ workspace }), {
      path: 'f.ts',
      oldText: 'one\ntwo',
      newText: 'one\nTWO\nmore',
    })
    expect(result.isError).toBe(false)
    expect(await readFile(path, 'utf8')).toBe('one\r\nTWO\r\nmore\r\nthree\r\n')
  })

  it('refuses empty oldText, no-op edits, missing files and binary files', async () => {
    const { workspace } = await fileWith('text\n')
    await writeFile(join(workspace, 'blob'), Buffer.from([1, 0, 2]))
    const tool = editTool({ workspace })
    const empty = await runTool(tool, { path: 'f.ts', oldText: '', newText: 'x' })
    expect(empty.text).toContain('oldText is empty. To create or replace a whole file use write')
    const same = await runTool(tool, { path: 'f.ts', oldText: 'text', newText: 'text' })
    expect(same.text).toBe('oldText and newText are the same, so nothing would change.')
    const missing = await runTool(tool, { path: 'nope.ts', oldText: 'a', newText: 'b' })
    expect(missing.text).toBe('nope.ts: it does not exist; check the path with ls or glob.')
    const binary = await runTool(tool, { path: 'blob', oldText: 'a', newText: 'b' })
    expect(binary.text).toBe('blob is a binary file; edit only changes text files.')
    expect([empty, same, missing, binary].every((result) => result.isError)).toBe(true)
  })
})

describe('edit: the result of a completed write (issue 9 item 10)', () => {
  it('a replaceAll over 200 000 lines succeeds, with the diff in meta capped and marked', async () => {
    const { workspace, path } = await fileWith('x = 1\n'.repeat(200_000))
    const result = await runTool(editTool({ workspace }), {
      path: 'f.ts',
      oldText: 'x = 1',
      newText: 'x = 2',
      replaceAll: true,
    })
    expect(result.isError).toBe(false)
    expect(result.text).toBe(
      'Edited f.ts: replaced 200000 occurrences (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …).',
    )
    expect(await readFile(path, 'utf8')).toBe('x = 2\n'.repeat(200_000))
    const meta = result.meta as { diff: string; isDiffTruncated: boolean; replacements: number }
    expect(meta).toMatchObject({ path: 'f.ts', replacements: 200_000, isDiffTruncated: true })
    expect(meta.diff.length).toBeLessThanOrEqual(50_000)
    expect(
      meta.diff.startsWith('--- a/f.ts\n+++ b/f.ts\n@@ -1,200000 +1,200000 @@\n-x = 1\n'),
    ).toBe(true)
  })

  it('many separate small changes diff in linear time, numbered correctly', () => {
    const before = Array.from({ length: 9000 }, (_, index) =>
      index % 10 === 0 ? 'old' : `line ${index}`,
    ).join('\n')
    const after = before.replaceAll('old', 'new')
    const diff = unifiedDiff('f', `${before}\n`, `${after}\n`)
    expect(diff.match(/^@@/gm)).toHaveLength(900)
    expect(diff.split('\n').at(-9)).toBe('@@ -8988,7 +8988,7 @@')
  })
})

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('f', 'a\n', 'a\n')).toBe('')
  })

  it('writes separate hunks for distant changes and merges near ones', () => {
    const before = Array.from({ length: 20 }, (_, index) => `l${index + 1}`).join('\n')
    const after = before.replace('l2\n', 'L2\n').replace('l18', 'L18')
    expect(unifiedDiff('f', before, after)).toBe(
      [
        '--- a/f',
        '+++ b/f',
        '@@ -1,5 +1,5 @@',
        ' l1',
        '-l2',
        '+L2',
        ' l3',
        ' l4',
        ' l5',
        '@@ -15,6 +15,6 @@',
        ' l15',
        ' l16',
        ' l17',
        '-l18',
        '+L18',
        ' l19',
        ' l20',
      ].join('\n'),
    )
    const near = before.replace('l2\n', 'L2\n').replace('l7\n', 'L7\n')
    expect(unifiedDiff('f', before, near).match(/@@/g)).toHaveLength(2)
  })

  it('describes insertions into and deletions from empty ranges', () => {
    expect(unifiedDiff('f', '', 'new\n')).toBe('--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+new')
    expect(unifiedDiff('f', 'old\n', '')).toBe('--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-old')
  })

  it('finds the shortest edit between interleaved lines', () => {
    expect(unifiedDiff('f', 'a\nb\nc\na\nb\nb\na\n', 'c\nb\na\nb\na\nc\n')).toBe(
      '--- a/f\n+++ b/f\n@@ -1,7 +1,6 @@\n-a\n-b\n c\n+b\n a\n b\n-b\n a\n+c',
    )
  })
})
