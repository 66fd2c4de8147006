import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compileGlob, staticPrefix } from '../../src/tools/builtin/glob-pattern.js'
import { isIgnored, parseIgnoreFile } from '../../src/tools/builtin/ignore-rules.js'
import { globTool } from '../../src/tools/index.js'
import { runTool, tempDir } from './context.js'

async function project(): Promise<string> {
  const workspace = await tempDir()
  for (const path of [
    'README.md',
    'src/index.ts',
    'src/util/strings.ts',
    'src/util/strings.test.ts',
    'src/util/z.js',
    'src-other/x.ts',
    'node_modules/pkg/index.ts',
    '.git/HEAD',
    'dist/out.ts',
    'logs/keep.log',
    'logs/drop.log',
    '.env.ts',
  ]) {
    await mkdir(dirname(join(workspace, path)), { recursive: true })
    await writeFile(join(workspace, path), '')
  }
  await writeFile(join(workspace, '.gitignore'), '/dist\n*.log\n!keep.log\n')
  return workspace
}

describe('glob', () => {
  it('lists matching files sorted, skipping .git, node_modules and .gitignore matches', async () => {
    const workspace = await project()
    const result = await runTool(globTool({ workspace }), { pattern: '**/*.ts' })
    expect(result.isError).toBe(false)
    expect(result.text).toBe(
      [
        '.env.ts',
        'src/index.ts',
        'src/util/strings.test.ts',
        'src/util/strings.ts',
        'src-other/x.ts',
      ].join('\n'),
    )
    expect(result.meta).toEqual({ total: 5, isTruncated: false })
  })

  it('honours negated .gitignore rules', async () => {
    const workspace = await project()
    const result = await runTool(globTool({ workspace }), { pattern: '**/*.log' })
    expect(result.text).toBe('logs/keep.log')
  })

  it('matches relative to path, with alternatives and single-level stars', async () => {
    const workspace = await project()
    const result = await runTool(globTool({ workspace }), {
      pattern: '*.{ts,js}',
      path: 'src/util',
    })
    expect(result.text).toBe('src/util/strings.test.ts\nsrc/util/strings.ts\nsrc/util/z.js')
    const top = await runTool(globTool({ workspace }), { pattern: 'src/*.ts' })
    expect(top.text).toBe('src/index.ts')
  })

  it('lists an ignored directory when the pattern names it explicitly', async () => {
    const workspace = await project()
    const result = await runTool(globTool({ workspace }), { pattern: 'node_modules/pkg/*.ts' })
    expect(result.text).toBe('node_modules/pkg/index.ts')
  })

  it('limits the paths and says how many there are', async () => {
    const workspace = await project()
    const result = await runTool(globTool({ workspace }), { pattern: '**/*.ts', limit: 2 })
    expect(result.text).toBe(
      '.env.ts\nsrc/index.ts\n\n[Showing 2 of 5 paths. Use a more specific pattern or path, or raise limit (at most 5000).]',
    )
    expect(result.meta).toEqual({ total: 5, isTruncated: true })
  })

  it('does not follow symlinked directories', async () => {
    const workspace = await project()
    await symlink(join(workspace, 'src'), join(workspace, 'alias'))
    const result = await runTool(globTool({ workspace }), { pattern: 'alias/**/*.ts' })
    expect(result.text).toBe('src/index.ts\nsrc/util/strings.test.ts\nsrc/util/strings.ts')
    const all = await runTool(globTool({ workspace }), { pattern: '**/index.ts' })
    expect(all.text).toBe('src/index.ts')
  })

  it('says when nothing matches, and refuses .. and absolute patterns', async () => {
    const workspace = await project()
    const none = await runTool(globTool({ workspace }), { pattern: '**/*.rs' })
    expect(none).toMatchObject({ isError: false, text: 'No files match **/*.rs in the workspace.' })
    const missing = await runTool(globTool({ workspace }), { pattern: 'nope/**/*.ts' })
    expect(missing.text).toBe('No files match nope/**/*.ts in the workspace.')
    for (const pattern of ['../**', '/etc/*']) {
      const result = await runTool(globTool({ workspace }), { pattern })
      expect(result.isError).toBe(true)
      expect(result.text).toContain('must be relative and must not contain ".."')
    }
  })
})

describe('compileGlob', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'dir/a.ts', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'x/y/a.ts', true],
    ['src/**', 'src/a/b', true],
    ['src/**/b', 'src/b', true],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', false],
    ['[ab].ts', 'b.ts', true],
    ['[!ab].ts', 'c.ts', true],
    ['[!ab].ts', 'a.ts', false],
    ['{src,lib}/*.js', 'lib/x.js', true],
    ['\\*.ts', '*.ts', true],
    ['\\*.ts', 'a.ts', false],
    ['a.b', 'axb', false],
    ['{unclosed', '{unclosed', true],
  ])('%s against %s is %s', (pattern, path, expected) => {
    expect(compileGlob(pattern).test(path)).toBe(expected)
  })

  it('finds the fixed leading directories', () => {
    expect(staticPrefix('src/util/**/*.ts')).toBe('src/util')
    expect(staticPrefix('*.ts')).toBe('')
    expect(staticPrefix('src/index.ts')).toBe('src')
  })
})

describe('ignore rules', () => {
  const base = '/w'
  it('anchors patterns with a slash, matches names at any depth otherwise, last rule wins', () => {
    const file = parseIgnoreFile(base, '# comment\n\n/build\nout/\n*.tmp\n!keep.tmp\n')
    expect(isIgnored([file], '/w/build', true)).toBe(true)
    expect(isIgnored([file], '/w/sub/build', true)).toBe(false)
    expect(isIgnored([file], '/w/sub/out', true)).toBe(true)
    expect(isIgnored([file], '/w/sub/out', false)).toBe(false)
    expect(isIgnored([file], '/w/a/b.tmp', false)).toBe(true)
    expect(isIgnored([file], '/w/a/keep.tmp', false)).toBe(false)
  })

  it('lets a deeper file override a shallower one', () => {
    const outer = parseIgnoreFile('/w', '*.gen\n')
    const inner = parseIgnoreFile('/w/pkg', '!*.gen\n')
    expect(isIgnored([outer, inner], '/w/pkg/a.gen', false)).toBe(false)
    expect(isIgnored([outer, inner], '/w/other/a.gen', false)).toBe(true)
  })
})
