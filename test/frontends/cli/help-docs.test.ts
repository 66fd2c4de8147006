/** `rudder --help` and docs/cli.md stay in step: every flag the help shows is documented. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cleanEnv, ROOT, runCli } from './run-cli.js'

/** Long flags (`--output-format`) and short ones (`-p`) as a text mentions them. */
function flagsIn(text: string): Set<string> {
  return new Set(text.match(/(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])/g) ?? [])
}

describe('rudder --help', () => {
  it('mentions only flags that docs/cli.md documents', async () => {
    const help = await runCli(['--help'], { env: cleanEnv() })
    const sessions = await runCli(['sessions', '--help'], { env: cleanEnv() })
    const docs = flagsIn(readFileSync(join(ROOT, 'docs/cli.md'), 'utf8'))
    const shown = new Set([...flagsIn(help.stdout), ...flagsIn(sessions.stdout)])
    expect(shown.size).toBeGreaterThan(25)
    expect([...shown].filter((flag) => !docs.has(flag))).toEqual([])
  })

  it('names every exit code docs/cli.md lists', async () => {
    const help = await runCli(['--help'], { env: cleanEnv() })
    for (const code of ['0', '1', '2', '130', '143'])
      expect(help.stdout).toMatch(new RegExp(`\\b${code} [a-z]`))
  })
})
