/**
 * What the built command line loads (bench B10, docs/decisions/0136): `--help` reads the
 * bundle's entry and its `cli` chunk only; a one-answer headless run reads a handful of files
 * of the bundle, none of the TUI, ACP or web host. Counted with a module hook, so the figures
 * do not move with the machine's load.
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BIN, cleanEnv } from './run-cli.js'

const HOOK = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent("export async function load(url, context, next) { process.stderr.write('loaded-module ' + url + '\\\\n'); return next(url, context) }"))`,
)}`

const scratch = mkdtempSync(join(tmpdir(), 'rudder-start-up-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** The files of rudder's bundle that a command loads, by name without the chunk hash. */
function bundleFilesLoaded(args: readonly string[]): string[] {
  const result = spawnSync(process.execPath, ['--import', HOOK, BIN, ...args], {
    env: cleanEnv(),
    cwd: scratch,
    encoding: 'utf8',
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stderr
    .split('\n')
    .filter((line) => line.startsWith('loaded-module ') && line.includes('/dist/bundle/cli/'))
    .map((line) => line.replace(/^.*\/dist\/bundle\/cli\//, '').replace(/-[\w-]{8}\.js$/, ''))
}

describe('start-up of the built command line', () => {
  it('--help loads the entry and the cli chunk only', () => {
    expect(bundleFilesLoaded(['--help'])).toEqual(['main.js', 'cli'])
  })

  it('a one-answer headless run loads a handful of files and no other front end', () => {
    const script = join(scratch, 'script.json')
    writeFileSync(script, JSON.stringify([{ text: 'ready' }]))
    const files = bundleFilesLoaded([
      '--store',
      'memory:',
      '--provider',
      `scripted:${script}`,
      '--cwd',
      scratch,
      'hi',
    ])
    expect(files).toContain('run-path')
    expect(files.length).toBeLessThanOrEqual(8)
    for (const frontEnd of ['app', 'serve-command', 'command', 'bridge'])
      expect(files).not.toContain(frontEnd)
  })
})
