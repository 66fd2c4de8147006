/**
 * Issue 9 item 6: patterns from the model or a repository cannot block rudder. Globs (the
 * `glob` tool, `.gitignore` rules, grep's file filter) run on a linear-time automaton; grep's
 * JavaScript regex runs in a worker that a deadline or a cancel terminates. The hostile cases
 * run in a child process with a deadline, so a regression fails fast instead of hanging.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileGlob } from '../../src/tools/builtin/glob-pattern.js'
import { compileWildcard } from '../../src/tools/glob-match.js'
import { runWithDeadline } from '../support/deadline.js'

/** The regex translation the automaton replaced: the oracle for ordinary patterns. */
function referenceRegex(pattern: string): RegExp {
  const escapeText = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  let source = ''
  let depth = 0
  let index = 0
  while (index < pattern.length) {
    const char = pattern[index]!
    if (char === '*') {
      const isDouble = pattern[index + 1] === '*'
      const startsSegment = index === 0 || pattern[index - 1] === '/'
      const after = index + (isDouble ? 2 : 1)
      const endsSegment = after === pattern.length || pattern[after] === '/'
      if (isDouble && startsSegment && endsSegment) {
        source += after === pattern.length ? '.*' : '(?:[^/]*/)*'
        index = after === pattern.length ? after : after + 1
        continue
      }
      source += '[^/]*'
      index = after
      continue
    }
    if (char === '?') source += '[^/]'
    else if (char === '[' && pattern.indexOf(']', index + 2) !== -1) {
      const end = pattern.indexOf(']', index + 2)
      let body = pattern.slice(index + 1, end)
      const isNegated = body.startsWith('!') || body.startsWith('^')
      if (isNegated) body = body.slice(1)
      source += `[${isNegated ? '^/' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`
      index = end + 1
      continue
    } else if (char === '{') {
      depth++
      source += '(?:'
    } else if (char === '}' && depth > 0) {
      depth--
      source += ')'
    } else if (char === ',' && depth > 0) source += '|'
    else if (char === '\\' && index + 1 < pattern.length) source += escapeText(pattern[++index]!)
    else source += escapeText(char)
    index++
  }
  return new RegExp(depth > 0 ? `^${escapeText(pattern)}$` : `^${source}$`)
}

describe('the linear glob matcher', () => {
  it('agrees with the regex translation on ordinary patterns (property, fixed seed)', () => {
    const token = fc.constantFrom(
      'a',
      'b',
      '.',
      '/',
      '*',
      '**',
      '**/',
      '?',
      '[ab]',
      '[!a]',
      '[a-c]',
      '{a,b}',
      '{a,*}',
      '{,b/}',
      '\\*',
      '{',
      '}',
      ',',
    )
    const pattern = fc.array(token, { maxLength: 7 }).map((tokens) => tokens.join(''))
    const subject = fc
      .array(fc.constantFrom('a', 'b', 'c', '.', '/', '*'), { maxLength: 10 })
      .map((chars) => chars.join(''))
    fc.assert(
      fc.property(pattern, subject, (glob, path) => {
        expect(compileGlob(glob).test(path)).toBe(referenceRegex(glob).test(path))
      }),
      { seed: 9006, numRuns: 3000 },
    )
  })

  it('matches case-insensitively when asked', () => {
    expect(compileGlob('SRC/*.[a-c]S', { ignoreCase: true }).test('src/x.Bs')).toBe(true)
    expect(compileGlob('src/*.ts', { ignoreCase: true }).test('SRC/X.TS')).toBe(true)
    expect(compileGlob('src/*.ts').test('SRC/X.TS')).toBe(false)
  })

  it('wildcards: * is any text including spaces and slashes, ? one character', () => {
    expect(compileWildcard('git diff*').test('git diff --stat a/b')).toBe(true)
    expect(compileWildcard('rm *').test('rm')).toBe(false)
    expect(compileWildcard('a?c').test('a/c')).toBe(true)
    expect(compileWildcard('[x]').test('[x]')).toBe(true)
    expect(compileWildcard('*a*a*a*a*a*a*a*a*a*b').test('a'.repeat(5000))).toBe(false)
  })

  it('glob and .gitignore rules built to backtrack finish, in a child process with a deadline', async () => {
    const run = await runWithDeadline(`
      import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
      import { tmpdir } from 'node:os'
      import { join } from 'node:path'
      import { globTool } from '@src/tools/index.ts'
      const workspace = mkdtempSync(join(tmpdir(), 'rudder-hostile-'))
      const deep = join(workspace, ...Array(15).fill('a'.repeat(120)))
      mkdirSync(deep, { recursive: true })
      writeFileSync(join(deep, 'a'.repeat(200)), 'x')
      const hostile = '**/'.repeat(30) + '*a*a*a*a*a*a*a*a*a*a*b'
      writeFileSync(join(workspace, '.gitignore'), hostile + '\\n' + '*a*a*a*a*a*a*a*a*a*a*a*b\\n')
      const context = { signal: new AbortController().signal, callId: 'c', cwd: workspace,
        update() {}, concludeTurn() {} }
      const tool = globTool({ workspace })
      const hostileGlob = await tool.execute({ pattern: hostile }, context)
      const everything = await tool.execute({ pattern: '**' }, context)
      rmSync(workspace, { recursive: true, force: true })
      console.log(JSON.stringify([hostileGlob.content[0].text, everything.content[0].text.length]))
    `)
    expect(run).toMatchObject({ isTimedOut: false, code: 0 })
    const [hostileText, listed] = JSON.parse(run.stdout) as [string, number]
    expect(hostileText).toMatch(/^No files match /)
    expect(listed).toBeGreaterThan(1800)
  })
})

describe('grep with a catastrophic regular expression (JavaScript engine)', () => {
  const setup = `
    import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
    import { tmpdir } from 'node:os'
    import { join } from 'node:path'
    import { grepTool } from '@src/tools/index.ts'
    const workspace = mkdtempSync(join(tmpdir(), 'rudder-redos-'))
    writeFileSync(join(workspace, 'a.txt'), 'fine\\n' + 'a'.repeat(45) + '!\\n')
    const controller = new AbortController()
    const context = { signal: controller.signal, callId: 'c', cwd: workspace,
      update() {}, concludeTurn() {} }
  `

  it('is stopped at its deadline with an error that says why and what to do', async () => {
    const run = await runWithDeadline(`${setup}
      const tool = grepTool({ workspace, ripgrep: false, regexTimeoutMs: 300 })
      const result = await tool.execute({ pattern: '^(a+)+$' }, context)
      const quick = await tool.execute({ pattern: 'fi.e' }, context)
      rmSync(workspace, { recursive: true, force: true })
      console.log(JSON.stringify([result, quick.content[0].text]))
    `)
    expect(run).toMatchObject({ isTimedOut: false, code: 0 })
    const [slow, quick] = JSON.parse(run.stdout) as [
      { isError: boolean; content: { text: string }[] },
      string,
    ]
    expect(slow.isError).toBe(true)
    expect(slow.content[0]!.text).toBe(
      "the search was stopped after 0.3s: the regular expression is too slow on these files (nested repetition such as (a+)+ makes JavaScript's regex engine backtrack)\nSimplify the pattern (no nested repetition), narrow the search with path or glob, or set literal to true to search for plain text.",
    )
    expect(quick).toBe('a.txt:1:fine')
  })

  it('honours cancel while the regular expression runs', async () => {
    const run = await runWithDeadline(`${setup}
      const tool = grepTool({ workspace, ripgrep: false, regexTimeoutMs: 600000 })
      const pending = tool.execute({ pattern: '^(a+)+$' }, context)
      setTimeout(() => controller.abort(), 200)
      const result = await pending
      rmSync(workspace, { recursive: true, force: true })
      console.log(JSON.stringify(result))
    `)
    expect(run).toMatchObject({ isTimedOut: false, code: 0 })
    expect(JSON.parse(run.stdout)).toMatchObject({
      isError: true,
      content: [{ text: 'grep was canceled before it finished.' }],
    })
  })
})
