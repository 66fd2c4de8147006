/**
 * What the CLI does when it runs in a terminal (a real pseudo-terminal): progress on stderr,
 * and no task with a terminal on stdin is the interactive front end's entry.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn as spawnPty } from '@lydell/node-pty'
import { afterAll, describe, expect, it } from 'vitest'
import { BIN, cleanEnv, ROOT } from './run-cli.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-cli-tty-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Runs the bin with stdin, stdout and stderr all on one pseudo-terminal. */
function inTerminal(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const terminal = spawnPty(process.execPath, [BIN, ...args], {
      cols: 200,
      rows: 50,
      cwd: ROOT,
      env,
    })
    let output = ''
    terminal.onData((data) => {
      output += data
    })
    terminal.onExit(({ exitCode }) => resolve({ code: exitCode, output }))
  })
}

describe('rudder in a terminal', () => {
  // With no task and no -p, a terminal opens the terminal UI: test/frontends/tui.
  it('with -p and no task, in a terminal, exits 2 with usage instead of opening the UI', async () => {
    const print = await inTerminal(['-p'], cleanEnv())
    expect(print.code).toBe(2)
    expect(print.output).toContain('rudder -p needs a task')
  })

  it('shows retries and tool calls as progress on a terminal stderr; --quiet hides them', async () => {
    let requests = 0
    const server = createServer((request, response) => {
      requests++
      request.resume()
      response.writeHead(503, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'overloaded' } }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
    try {
      const env = cleanEnv({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: url })
      const args = [
        '-m',
        'openai/gpt-4.1',
        '--retries',
        '1',
        '-c',
        'retry.baseDelayMs=1',
        '--cwd',
        scratch,
        'hi',
      ]
      const shown = await inTerminal(args, env)
      expect(shown.code).toBe(1)
      expect(shown.output).toMatch(/waiting for openai\/gpt-4\.1 \(attempt 2\/2, retrying in 1 s\)/)
      const quiet = await inTerminal(['--quiet', ...args], env)
      expect(quiet.code).toBe(1)
      expect(quiet.output).not.toContain('waiting for')
      expect(requests).toBe(4)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
    const script = join(scratch, 'tools.json')
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ id: 'a', name: 'bash', args: { command: 'echo from-the-tool' } }] },
        { text: 'Finished.' },
      ]),
    )
    const tools = await inTerminal(
      ['--yes', '--provider', `scripted:${script}`, '--cwd', scratch, 'go'],
      cleanEnv(),
    )
    expect(tools.code).toBe(0)
    expect(tools.output).toContain('rudder: → bash echo from-the-tool')
    expect(tools.output).toContain('Finished.')
  })
})
