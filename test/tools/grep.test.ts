import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findOnPath } from '../../src/tools/builtin/grep-search.js'
import { type GrepToolOptions, grepTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

// ripgrep is optional: its engine is tested only where `rg` is on PATH; the JavaScript
// engine is tested everywhere by configuration (`ripgrep: false`).
const ripgrep = await findOnPath('rg')
const engines: [string, Pick<GrepToolOptions, 'ripgrep'>][] = [
  ['javascript', { ripgrep: false }],
  ...(ripgrep === undefined ? [] : [['ripgrep', { ripgrep }] as [string, { ripgrep: string }]]),
]

async function project(): Promise<string> {
  const workspace = await tempDir()
  const files: Record<string, string | Buffer> = {
    'src/a.ts': 'const foo = 1\nconst Foo = 2\nbar\n',
    'src/b.js': 'foo()\n',
    'src/deep/c.ts': 'x\nfoo\n',
    '.hidden/h.txt': 'foo hidden\n',
    'node_modules/pkg/index.js': 'foo\n',
    '.git/config': 'foo\n',
    'ignored/i.ts': 'foo\n',
    'app.log': 'foo\n',
    '.gitignore': 'ignored/\n*.log\n',
    'bin.dat': Buffer.from('foo\0bar\n'),
  }
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(workspace, path)), { recursive: true })
    await writeFile(join(workspace, path), content)
  }
  return workspace
}

describe.each(engines)('grep (%s engine)', (engine, engineOptions) => {
  const grep = (workspace: string, extra: Partial<GrepToolOptions> = {}) =>
    grepTool({ workspace, ...engineOptions, ...extra })

  it('finds matches in path order, skipping .git, node_modules, ignored and binary files', async () => {
    const workspace = await project()
    const result = await runTool(grep(workspace), { pattern: 'foo' })
    expect(result.isError).toBe(false)
    expect(result.text).toBe(
      [
        '.hidden/h.txt:1:foo hidden',
        'src/a.ts:1:const foo = 1',
        'src/b.js:1:foo()',
        'src/deep/c.ts:2:foo',
      ].join('\n'),
    )
    expect(result.meta).toEqual({ engine, matches: 4, isTruncated: false })
  })

  it('takes a regular expression and a case-insensitive option', async () => {
    const workspace = await project()
    const regex = await runTool(grep(workspace), { pattern: '^const \\w+ = \\d$' })
    expect(regex.text).toBe('src/a.ts:1:const foo = 1\nsrc/a.ts:2:const Foo = 2')
    const insensitive = await runTool(grep(workspace), { pattern: 'FOO =', ignoreCase: true })
    expect(insensitive.text).toBe('src/a.ts:1:const foo = 1\nsrc/a.ts:2:const Foo = 2')
  })

  it('filters files by glob: names, paths below the searched directory, exclusions', async () => {
    const workspace = await project()
    const byName = await runTool(grep(workspace), { pattern: 'foo', glob: '*.ts' })
    expect(byName.text).toBe('src/a.ts:1:const foo = 1\nsrc/deep/c.ts:2:foo')
    const byPath = await runTool(grep(workspace), { pattern: 'foo', path: 'src', glob: 'deep/**' })
    expect(byPath.text).toBe('src/deep/c.ts:2:foo')
    const excluding = await runTool(grep(workspace), { pattern: 'foo', path: 'src', glob: '!*.ts' })
    expect(excluding.text).toBe('src/b.js:1:foo()')
  })

  it('searches one file when the path is a file', async () => {
    const workspace = await project()
    const result = await runTool(grep(workspace), { pattern: 'o', path: 'src/a.ts' })
    expect(result.text).toBe('src/a.ts:1:const foo = 1\nsrc/a.ts:2:const Foo = 2')
  })

  it('limits matches and says how to narrow the search', async () => {
    const workspace = await project()
    const result = await runTool(grep(workspace), { pattern: 'foo', limit: 2 })
    expect(result.text).toBe(
      '.hidden/h.txt:1:foo hidden\nsrc/a.ts:1:const foo = 1\n\n[Showing the first 2 matches; there are more. Narrow the search with a more specific pattern, a path or a glob, or raise limit (at most 1000).]',
    )
    expect(result.meta).toEqual({ engine, matches: 2, isTruncated: true })
  })

  it('searches plain text with literal, and explains an invalid regex', async () => {
    const workspace = await project()
    const literal = await runTool(grep(workspace), { pattern: 'foo()', literal: true })
    expect(literal.text).toBe('src/b.js:1:foo()')
    const invalid = await runTool(grep(workspace), { pattern: 'foo(' })
    expect(invalid.isError).toBe(true)
    expect(invalid.text).toContain('or set literal to true to search for plain text.')
  })

  it('says when nothing matches', async () => {
    const workspace = await project()
    const result = await runTool(grep(workspace), { pattern: 'zzz' })
    expect(result).toMatchObject({ isError: false, text: 'No matches for zzz in the workspace.' })
  })

  it('cuts long matching lines', async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'long.txt'), `foo${'-'.repeat(100)}\n`)
    const result = await runTool(grep(workspace, { maxLineChars: 10 }), { pattern: 'foo' })
    expect(result.text).toBe('long.txt:1:foo-------… [line truncated: 93 more characters]')
  })
})

describe('grep engine choice', () => {
  it('uses ripgrep from PATH when present, else the JavaScript engine', async () => {
    const workspace = await project()
    const result = await runTool(grepTool({ workspace }), { pattern: 'foo' })
    expect((result.meta as { engine: string }).engine).toBe(
      ripgrep === undefined ? 'javascript' : 'ripgrep',
    )
  })
})
