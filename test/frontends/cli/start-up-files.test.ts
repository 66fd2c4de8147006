/**
 * What the built command line loads (bench B10, docs/decisions/0136): `--help` reads the
 * bundle's entry and its `cli` chunk only; a one-answer headless run reads a handful of files
 * of the bundle, none of the TUI, ACP or web host, each with the code cache the build wrote
 * beside it. Counted with a hook on CommonJS loading, so the figures do not move with the
 * machine's load.
 */

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { KEYS, runInTerminal } from '../tui/pty.js'
import { BIN, cleanEnv } from './run-cli.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-start-up-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

// The bundle is CommonJS: every file of it goes through Module.prototype.load.
const HOOK = join(scratch, 'count-files.cjs')
writeFileSync(
  HOOK,
  "const Module = require('node:module'); const load = Module.prototype.load; Module.prototype.load = function (filename) { process.stderr.write('loaded-file ' + filename + '\\n'); return load.call(this, filename) }",
)

/** A file of the bundle by name, without its directory and chunk hash. */
const nameOf = (path: string) =>
  path.replace(/^.*\/dist\/bundle\/cli-cached\//, '').replace(/-[\w-]{8}\.cjs$/, '')

/** The files of the CommonJS bundle named in `text` (the hook's lines), in order. */
const cachedFilesIn = (text: string) =>
  text
    .split(/\r?\n/)
    .filter((line) => line.startsWith('loaded-file ') && line.includes('/dist/bundle/cli-cached/'))
    .map((line) => nameOf(line.slice('loaded-file '.length)))

/** Runs the bin with stdin, stdout and stderr on one pseudo-terminal, the hook loaded first. */
function inTerminal(args: readonly string[]) {
  return runInTerminal(args, {
    env: cleanEnv({ NODE_OPTIONS: `--require ${HOOK}` }),
    cwd: scratch,
    columns: 400,
  })
}

/** The paths of the files of rudder's bundle that a command loads, in order. */
function bundlePathsLoaded(args: readonly string[]): string[] {
  const result = spawnSync(process.execPath, ['--require', HOOK, BIN, ...args], {
    env: cleanEnv(),
    cwd: scratch,
    encoding: 'utf8',
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stderr
    .split('\n')
    .filter((line) => line.startsWith('loaded-file ') && line.includes('/dist/bundle/cli-cached/'))
    .map((line) => line.slice('loaded-file '.length))
}

describe('start-up of the built command line', () => {
  it('--help loads the entry and the cli chunk only', () => {
    expect(bundlePathsLoaded(['--help']).map(nameOf)).toEqual(['main.cjs', 'cli'])
  })

  it('a one-answer headless run loads a handful of files, each with a code cache, and no other front end', () => {
    const script = join(scratch, 'script.json')
    writeFileSync(script, JSON.stringify([{ text: 'ready' }]))
    const paths = bundlePathsLoaded([
      '--store',
      'memory:',
      '--provider',
      `scripted:${script}`,
      '--cwd',
      scratch,
      'hi',
    ])
    for (const path of paths) expect(existsSync(`${path}.cache`), path).toBe(true)
    const files = paths.map(nameOf)
    expect(files).toContain('run-path')
    expect(files.length).toBeLessThanOrEqual(8)
    for (const frontEnd of ['app', 'serve-command', 'command', 'bridge'])
      expect(files).not.toContain(frontEnd)
  })

  // Decision 0137: on a terminal the parsed command picks the build, not stdin's kind.
  it('on a terminal, --help and a headless task load the cached build; the terminal UI loads the ES build', async () => {
    const help = inTerminal(['--help'])
    expect(await help.exited).toBe(0)
    expect(cachedFilesIn(help.output())).toEqual(['main.cjs', 'cli'])

    const script = join(scratch, 'script-tty.json')
    writeFileSync(script, JSON.stringify([{ text: 'ready' }, { text: 'ready' }]))
    const provider = ['--provider', `scripted:${script}`, '--store', 'memory:', '--cwd', scratch]
    const task = inTerminal([...provider, 'hi'])
    expect(await task.exited).toBe(0)
    const taskFiles = cachedFilesIn(task.output())
    expect(taskFiles).toContain('run-path')
    expect(taskFiles).not.toContain('app')

    // Only the entry and its argument parser come from the cached build; the UI is ES.
    const ui = inTerminal(provider)
    await ui.waitFor(/session \w{8} · (turn \d+ · )?idle/, 'the idle status')
    ui.type(KEYS.ctrlD)
    expect(await ui.exited).toBe(0)
    expect(cachedFilesIn(ui.output())).toEqual(['main.cjs', 'cli'])
  })
})
