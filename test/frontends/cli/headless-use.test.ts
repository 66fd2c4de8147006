/**
 * The headless CLI as people use it (issue 10), through the built bin: pipes closed early,
 * stdin piped, SIGTERM, servers that hang or refuse, refusals, output formats, overrides.
 */

import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkLog, openStore } from '../../../src/index.js'
import { cleanEnv, runCli, runShell, scratchSpace } from './run-cli.js'

const { dir: scratch, script, workspace } = scratchSpace('rudder-cli-use-')
let files = 0
function jsonlStore(): string {
  return `jsonl:${mkdtempSync(join(scratch, 'store-'))}`
}

/** The user messages a session logged, as text. */
async function userTexts(store: string, id: string): Promise<string[]> {
  const opened = await openStore(store)
  try {
    const { events } = await opened.read(id)
    return events
      .filter((event) => event.type === 'user/message')
      .map((event) =>
        (event.data as { content: { type: string; text?: string }[] }).content
          .map((part) => part.text ?? '')
          .join(''),
      )
  } finally {
    await opened.close()
  }
}

type Final = {
  type: string
  status: string
  text: string
  sessionId: string
  usage: { inputTokens: number; outputTokens: number }
  durationMs: number
  denials: { tool: string; code: string; args: unknown }[]
}

describe('the task from stdin', () => {
  it('reads the task from a pipe when no task is given, and from stdin for "-"', async () => {
    const env = cleanEnv()
    const store = jsonlStore()
    const flags = `--store ${store} --provider ${script([{ text: 'ok' }])} --cwd ${workspace()} --output-format json`
    const piped = await runShell(`printf 'fix the bug\\n' | $RUDDER ${flags}`, { env })
    expect(piped.code).toBe(0)
    const dash = await runShell(`$RUDDER ${flags} - < <(printf 'from a file')`, { env })
    expect(dash.code).toBe(0)
    const both = await runShell(`printf 'the notes' | $RUDDER ${flags} "summarize these"`, { env })
    expect(both.code).toBe(0)
    const ids = [piped, dash, both].map((run) => (JSON.parse(run.stdout) as Final).sessionId)
    expect(await userTexts(store, ids[0]!)).toEqual(['fix the bug'])
    expect(await userTexts(store, ids[1]!)).toEqual(['from a file'])
    expect(await userTexts(store, ids[2]!)).toEqual(['summarize these\n\nthe notes'])
  })

  it('exits 2 with usage on stderr when there is no task and nothing on stdin', async () => {
    const result = await runShell('$RUDDER < /dev/null', { env: cleanEnv() })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('no task given')
    expect(result.stderr).toContain('Usage: rudder [options] "task"')
  })
})

describe('usage errors exit 2 naming the argument', () => {
  const file = join(scratch, 'a-file')
  writeFileSync(file, '')
  it.each([
    [['--cwd', join(scratch, 'missing'), 'task'], '--cwd', 'does not exist'],
    [['--cwd', file, 'task'], '--cwd', 'is not a directory'],
    [['--provider', 'Bad Name!', 'task'], '--provider', 'expected a provider name'],
    [['--provider', 'foo', 'task'], '--provider "foo": no such provider', 'deepseek, anthropic'],
    [['--provider', 'ollama', 'task'], '--provider ollama serves any model', '--model ollama/'],
    [['sessions', 'fork', 'abc', '--at', '-1'], '--at', 'whole number'],
    [['sessions'], 'rudder sessions needs a command', 'rudder sessions list'],
    [['sessions', 'frobnicate'], 'unknown sessions command "frobnicate"', 'Usage:'],
    [['--output-format', 'xml', 'task'], '--output-format', 'text, json, stream-json'],
    [['--approval', 'maybe', 'task'], '--approval', 'auto-edit'],
    [['--timeout', 'soon', 'task'], '--timeout', '30s'],
    [['--retries', '-1', 'task'], '--retries', 'whole number'],
    [['-c', 'model=x', '-c', '9bad=1', 'task'], '-c takes key=value', '9bad'],
    [['--json', '--output-format', 'text', 'task'], '--json', 'stream-json'],
  ])('%j', async (args, first, second) => {
    const result = await runCli(args, { env: cleanEnv() })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(first)
    expect(result.stderr).toContain(second)
    expect(result.stderr).not.toContain('    at ')
  })

  it('a bad -c value is a configuration error naming the key and the command line', async () => {
    const result = await runCli(
      [
        '-c',
        'retry.maxRetries=many',
        '--provider',
        script([{ text: 'x' }]),
        '--cwd',
        workspace(),
        'hi',
      ],
      { env: cleanEnv() },
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('the command line (-c')
    expect(result.stderr).toContain('retry.maxRetries')
  })

  it('sessions --help and sessions list --help print the sessions usage and exit 0', async () => {
    for (const args of [
      ['sessions', '--help'],
      ['sessions', 'list', '--help'],
      ['sessions', 'help'],
    ]) {
      const result = await runCli(args, { env: cleanEnv() })
      expect(result).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout).toContain('rudder sessions prune --older-than')
    }
  })

  it('errors are also a JSON object on stdout when a JSON format is on', async () => {
    const result = await runCli(
      ['--output-format', 'json', '--model', 'deepseek/deepseek-chat', '--cwd', workspace(), 'hi'],
      { env: cleanEnv() },
    )
    expect(result.code).toBe(2)
    expect(JSON.parse(result.stdout)).toMatchObject({ type: 'error', code: 'CONFIG', exitCode: 2 })
    expect(result.stderr).toContain('DEEPSEEK_API_KEY')
  })

  it('file errors name the path and the cause, exit 2, and show no stack', async () => {
    const env = cleanEnv()
    const missing = await runCli(['sessions', 'import', join(scratch, 'nope.jsonl')], { env })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(join(scratch, 'nope.jsonl'))
    expect(missing.stderr).toContain('no such file')
    expect(missing.stderr).not.toContain('unexpected failure')
    const store = jsonlStore()
    const run = await runCli(
      [
        '--store',
        store,
        '--output-format',
        'json',
        '--provider',
        script([{ text: 'x' }]),
        '--cwd',
        workspace(),
        'hi',
      ],
      { env },
    )
    const id = (JSON.parse(run.stdout) as Final).sessionId
    const out = join(scratch, 'no-dir', 'x.jsonl')
    const exported = await runCli(['sessions', 'export', id, '--store', store, '--out', out], {
      env,
    })
    expect(exported.code).toBe(2)
    expect(exported.stderr).toContain(out)
    expect(exported.stderr).not.toContain('unexpected failure')
  })

  it('a store that cannot be opened is a setup error: exit 2 naming the path, for runs and session commands', async () => {
    const env = cleanEnv()
    const file = join(scratch, `plain-file-${++files}`)
    writeFileSync(file, 'not a directory')
    const store = `sqlite:${join(file, 'sessions.db')}`
    const run = await runCli(
      ['--store', store, '--provider', script([{ text: 'x' }]), '--cwd', workspace(), 'hi'],
      { env },
    )
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(join(file, 'sessions.db'))
    expect(run.stderr).toContain('a file is in the way of a store directory')
    expect(run.stderr).not.toContain('unexpected failure')
    expect(run.stderr).not.toMatch(/^\s+at /m)
    const listed = await runCli(['sessions', 'list', '--store', store], { env })
    expect(listed.code).toBe(2)
    expect(listed.stderr).toContain(join(file, 'sessions.db'))
  })
})

describe('pipes closed early', () => {
  it('rudder --json | head -1: no stack trace, exit 0, and the session is logged whole', async () => {
    const env = cleanEnv()
    const store = jsonlStore()
    // Far more output than a pipe holds, so writes after head exits must meet a closed pipe.
    const long = 'word '.repeat(100_000)
    const result = await runShell(
      `$RUDDER --json --store ${store} --provider ${script([{ text: long }])} --cwd ${workspace()} "talk" | head -1; echo "rudder exit \${PIPESTATUS[0]}" >&2`,
      { env },
    )
    expect(result.stderr).toBe('rudder exit 0\n')
    const first = JSON.parse(result.stdout) as { type: string; sessionId: string }
    expect(first.type).toBe('session')
    const opened = await openStore(store)
    try {
      const { events } = await opened.read(first.sessionId)
      expect(events.at(-1)).toMatchObject({
        type: 'turn/end',
        data: { reason: { kind: 'completed' } },
      })
      expect(checkLog(events)).toEqual([])
    } finally {
      await opened.close()
    }
    const exported = await runShell(
      `$RUDDER sessions export ${first.sessionId} --store ${store} | head -c 10; echo; echo "rudder exit \${PIPESTATUS[0]}" >&2`,
      { env },
    )
    expect(exported.stderr).toBe('rudder exit 0\n')
  })
})

// SIGTERM (exit 143) is tested beside SIGINT in headless.test.ts.

/** A local server for an OpenAI-compatible provider that never answers, or counts and fails. */
async function server(
  handle: (count: number, respond: (status: number) => void) => void,
): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let count = 0
  const http: Server = createServer((request, response) => {
    count++
    request.resume()
    handle(count, (status) => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: `status ${status}` } }))
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      }),
  }
}

describe('waiting for a server', () => {
  it('--timeout ends a request to a server that never answers, and names the flag’s limit', async () => {
    const hanging = await server(() => {
      // Never answers.
    })
    try {
      const result = await runCli(
        [
          '-m',
          'openai/gpt-4.1',
          '--timeout',
          '300ms',
          '--retries',
          '0',
          '--cwd',
          workspace(),
          'hi',
        ],
        { env: cleanEnv({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: hanging.url }) },
      )
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('within 300 ms')
      expect(result.stderr).toContain('OPENAI_BASE_URL')
      expect(result.stderr).not.toContain('..')
      expect(hanging.requests()).toBe(1)
    } finally {
      await hanging.close()
    }
  })

  it('--retries and -c set how often a failing request is tried', async () => {
    const failing = await server((_count, respond) => respond(503))
    try {
      const result = await runCli(
        [
          '-m',
          'openai/gpt-4.1',
          '--retries',
          '2',
          '-c',
          'retry.baseDelayMs=1',
          '--cwd',
          workspace(),
          'hi',
        ],
        { env: cleanEnv({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: failing.url }) },
      )
      expect(result.code).toBe(1)
      expect(failing.requests()).toBe(3)
      // Progress is for a terminal; a pipe gets none.
      expect(result.stderr).not.toContain('waiting for')
    } finally {
      await failing.close()
    }
  })

  it('a refused connection names the base URL and where it came from', async () => {
    const closed = await server(() => {})
    const url = closed.url
    await closed.close()
    const result = await runCli(
      ['-m', 'openai/gpt-4.1', '--retries', '0', '--cwd', workspace(), 'hi'],
      {
        env: cleanEnv({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: url }),
      },
    )
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(url)
    expect(result.stderr).toContain('OPENAI_BASE_URL')
  })
})

describe('approvals', () => {
  const bashThenDone = () =>
    script([
      { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'echo hi > made.txt' } }] },
      { text: 'Done.' },
    ])

  it('shows each refusal on stderr and lists it in the JSON result', async () => {
    const cwd = workspace()
    const result = await runCli(
      ['--output-format', 'json', '--provider', bashThenDone(), '--cwd', cwd, 'go'],
      {
        env: cleanEnv(),
      },
    )
    expect(result.code).toBe(0)
    expect(result.stderr).toContain('refused bash echo hi > made.txt')
    expect(result.stderr).toContain("--allow 'bash:echo hi > made.txt'")
    const final = JSON.parse(result.stdout) as Final
    expect(final.denials).toEqual([
      expect.objectContaining({
        tool: 'bash',
        code: 'not-approved',
        args: { command: 'echo hi > made.txt' },
      }),
    ])
    expect(() => readFileSync(join(cwd, 'made.txt'))).toThrow()
  })

  it.each([
    [['--allow', 'bash:echo hi*']],
    [['--allow', 'Bash(echo *)']],
    [['--approval', 'yolo']],
    [['--yes']],
  ])('%j lets the call run', async (flags) => {
    const cwd = workspace()
    const result = await runCli(
      ['--output-format', 'json', ...flags, '--provider', bashThenDone(), '--cwd', cwd, 'go'],
      {
        env: cleanEnv(),
      },
    )
    expect(result.code).toBe(0)
    expect((JSON.parse(result.stdout) as Final).denials).toEqual([])
    expect(readFileSync(join(cwd, 'made.txt'), 'utf8')).toBe('hi\n')
  })

  it('--allow of another command, and --approval auto-edit, still refuse bash; --quiet hides it', async () => {
    for (const flags of [['--allow', 'bash:npm test'], ['--approval', 'auto-edit'], ['--quiet']]) {
      const result = await runCli(
        [
          '--output-format',
          'json',
          ...flags,
          '--provider',
          bashThenDone(),
          '--cwd',
          workspace(),
          'go',
        ],
        {
          env: cleanEnv(),
        },
      )
      expect((JSON.parse(result.stdout) as Final).denials).toHaveLength(1)
      expect(result.stderr.includes('refused bash')).toBe(!flags.includes('--quiet'))
    }
  })
})

describe('what users of the peers expect', () => {
  it('--provider replay:<id prefix> replays a recorded session, like --resume takes a prefix', async () => {
    const env = cleanEnv()
    const store = jsonlStore()
    const cwd = workspace()
    const recorded = await runCli(
      [
        '--store',
        store,
        '--output-format',
        'json',
        '--provider',
        script([{ text: 'recorded answer' }]),
        '--cwd',
        cwd,
        'hi',
      ],
      { env },
    )
    const id = (JSON.parse(recorded.stdout) as Final).sessionId
    const replayed = await runCli(
      ['--store', store, '--provider', `replay:${id.slice(0, 8)}`, '--cwd', cwd, 'hi'],
      { env },
    )
    expect(replayed).toMatchObject({ code: 0, stdout: 'recorded answer\n' })
    const unknown = await runCli(
      ['--store', store, '--provider', 'replay:zzzz', '--cwd', cwd, 'hi'],
      { env },
    )
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('"zzzz"')
  })

  it('--output-format json: one object with status, text, usage, duration, session id and denials', async () => {
    const result = await runCli(
      [
        '-p',
        '--output-format',
        'json',
        '--provider',
        script([{ text: 'Hello.' }]),
        '--cwd',
        workspace(),
        'hi',
      ],
      {
        env: cleanEnv(),
      },
    )
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const final = JSON.parse(result.stdout) as Final
    expect(final).toMatchObject({ type: 'final', status: 'completed', text: 'Hello.', denials: [] })
    expect(final.usage.inputTokens).toBeGreaterThan(0)
    expect(final.durationMs).toBeGreaterThanOrEqual(0)
    expect(final.sessionId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('--output-last-message writes the final text; --append-system-prompt reaches the request', async () => {
    const out = join(scratch, 'last.txt')
    const result = await runCli(
      [
        '--output-format',
        'stream-json',
        '--output-last-message',
        out,
        '--append-system-prompt',
        'Answer in French.',
        '--provider',
        script([{ text: 'Bonjour.' }]),
        '--cwd',
        workspace(),
        'hi',
      ],
      { env: cleanEnv() },
    )
    expect(result.code).toBe(0)
    expect(readFileSync(out, 'utf8')).toBe('Bonjour.\n')
    const header = result.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { type: string; event?: { type: string; data: { system: string } } },
      )
      .find((line) => line.event?.type === 'request/header')
    expect(header?.event?.data.system).toMatch(/You are rudder[\s\S]*\n\nAnswer in French\.$/)
  })

  it('a bare --resume continues the newest session here; an id prefix resumes that session', async () => {
    const env = cleanEnv()
    const store = jsonlStore()
    const cwd = workspace()
    const first = await runCli(
      [
        '--store',
        store,
        '--output-format',
        'json',
        '--provider',
        script([{ text: 'a' }]),
        '--cwd',
        cwd,
        'one',
      ],
      { env },
    )
    const id = (JSON.parse(first.stdout) as Final).sessionId
    const second = await runCli(
      [
        '--store',
        store,
        '--output-format',
        'json',
        '--provider',
        script([{ text: 'b' }]),
        '--cwd',
        cwd,
        '--resume',
        'two words',
      ],
      { env },
    )
    expect((JSON.parse(second.stdout) as Final).sessionId).toBe(id)
    const third = await runCli(
      [
        '--store',
        store,
        '--output-format',
        'json',
        '--provider',
        script([{ text: 'c' }]),
        '--cwd',
        cwd,
        '-r',
        id.slice(0, 8),
        'three',
      ],
      { env },
    )
    expect((JSON.parse(third.stdout) as Final).sessionId).toBe(id)
    expect(await userTexts(store, id)).toEqual(['one', 'two words', 'three'])
  })

  it('rudder models lists provider/model pairs and which keys are set', async () => {
    const result = await runCli(['models'], { env: cleanEnv({ OPENAI_API_KEY: 'k' }) })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^openai\/gpt-4\.1 +\d+ +set \(OPENAI_API_KEY\)$/m)
    expect(result.stdout).toMatch(
      /^deepseek\/deepseek-chat +\d+ +missing \(set DEEPSEEK_API_KEY\)$/m,
    )
    const json = await runCli(['models', '--json'], { env: cleanEnv() })
    expect(JSON.parse(json.stdout.split('\n')[0]!)).toHaveProperty('hasKey')
  })
})

describe('configuration', () => {
  it('finds .rudder/config.json up to the repository root, and a -c override beats it', async () => {
    const root = workspace()
    mkdirSync(join(root, '.git'))
    mkdirSync(join(root, '.rudder'))
    mkdirSync(join(root, 'packages', 'app'), { recursive: true })
    // A project file may tighten approval untrusted: reading is denied in this repository.
    writeFileSync(
      join(root, '.rudder', 'config.json'),
      JSON.stringify({ approval: { tools: { read: 'deny' } } }),
    )
    const readThenDone = () =>
      script([{ toolCalls: [{ id: 'r', name: 'read', args: { path: 'x.txt' } }] }, { text: 'ok' }])
    const env = cleanEnv()
    const inside = await runCli(
      [
        '--output-format',
        'json',
        '--provider',
        readThenDone(),
        '--cwd',
        join(root, 'packages', 'app'),
        'go',
      ],
      { env },
    )
    expect((JSON.parse(inside.stdout) as Final).denials).toEqual([
      expect.objectContaining({ tool: 'read', code: 'denied' }),
    ])
    // Outside a repository only the directory itself is looked at.
    const outside = workspace()
    mkdirSync(join(outside, '.rudder'))
    writeFileSync(
      join(outside, '.rudder', 'config.json'),
      JSON.stringify({ approval: { tools: { read: 'deny' } } }),
    )
    mkdirSync(join(outside, 'sub'))
    const below = await runCli(
      [
        '--output-format',
        'json',
        '--provider',
        readThenDone(),
        '--cwd',
        join(outside, 'sub'),
        'go',
      ],
      { env },
    )
    expect((JSON.parse(below.stdout) as Final).denials).toEqual([])
  })
})
