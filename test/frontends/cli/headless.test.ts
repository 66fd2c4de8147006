/** `rudder "task"` as a subprocess: the stdout / stderr / exit-code contract of docs/spec.md §11. */
import { cpSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { checkLog, openStore } from '../../../src/index.js'
import { writeUnreadSession } from '../unread-history.js'
import { cleanEnv, ROOT, runCli, scratchSpace } from './run-cli.js'

const { dir: scratch, script, workspace } = scratchSpace('rudder-cli-')

describe('rudder "task"', () => {
  it('prints the final text on stdout, nothing on stderr, and exits 0 when the turn completes', async () => {
    const result = await runCli(
      ['--provider', script([{ text: 'All done.' }]), '--cwd', workspace(), 'say done'],
      { env: cleanEnv() },
    )
    expect(result).toMatchObject({ code: 0, stdout: 'All done.\n', stderr: '' })
  })

  it('exits 1 with the reason on stderr when the turn ends in an error', async () => {
    const result = await runCli(
      [
        '--provider',
        script([{ error: { code: 'bad-request', message: 'the model refused' } }]),
        '--cwd',
        workspace(),
        'go',
      ],
      { env: cleanEnv() },
    )
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('the model refused')
  })

  it.each([
    [['--continue'], 'need a task'],
    [['--resume', 'x', '--continue', 'task'], 'either --resume'],
    [['--no-such-flag', 'task'], "Unknown option '--no-such-flag'"],
    [['--max-steps', 'zero', 'task'], '--max-steps takes a whole number'],
    [['--provider', 'Bad Name!', 'task'], 'expected a provider name'],
    [['sessions', 'frobnicate'], 'unknown sessions command'],
  ])('exits 2 for usage mistakes: %j', async (args, message) => {
    const result = await runCli(args, { env: cleanEnv() })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(message)
  })

  it('exits 2 naming the variable to set when a key is missing', async () => {
    const result = await runCli(['--model', 'deepseek/deepseek-chat', '--cwd', workspace(), 'hi'], {
      env: cleanEnv(),
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('DEEPSEEK_API_KEY')
  })

  it('exits 2 naming the file and key of a bad config', async () => {
    const env = cleanEnv()
    writeFileSync(
      join(env.RUDDER_HOME!, 'config.json'),
      JSON.stringify({ approval: { tools: { bash: 'sometimes' } } }),
    )
    const result = await runCli(
      ['--provider', script([{ text: 'x' }]), '--cwd', workspace(), 'hi'],
      { env },
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(join(env.RUDDER_HOME!, 'config.json'))
    expect(result.stderr).toContain('approval.tools.bash')
  })

  it('--json streams the session, every durable event, live notifications and the result as JSON lines', async () => {
    const event = z.object({
      seq: z.number(),
      time: z.number(),
      type: z.string(),
      data: z.unknown(),
    })
    const line = z.discriminatedUnion('type', [
      z.object({
        type: z.literal('session'),
        sessionId: z.string(),
        model: z.string(),
        repairs: z.array(z.unknown()),
      }),
      z.object({ type: z.literal('event'), event }),
      z.object({
        type: z.literal('live'),
        notification: z.object({ type: z.string() }).passthrough(),
      }),
      z.object({
        type: z.literal('result'),
        sessionId: z.string(),
        result: z.object({ status: z.string() }).passthrough(),
      }),
    ])
    const result = await runCli(
      ['--json', '--provider', script([{ text: 'streamed answer' }]), '--cwd', workspace(), 'go'],
      { env: cleanEnv() },
    )
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((text) => line.parse(JSON.parse(text)))
    expect(lines[0]!.type).toBe('session')
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      result: { status: 'completed', text: 'streamed answer' },
    })
    const events = lines.flatMap((l) => (l.type === 'event' ? [l.event] : []))
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i))
    expect(events.map((e) => e.type)).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/header',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const live = lines.flatMap((l) => (l.type === 'live' ? [l.notification.type] : []))
    expect(live).toContain('assistant/delta')
    expect(live).toContain('request/start')
  })

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s cancels the turn cleanly: exit %i and a canceled turn in the store',
    async (signal, exitCode) => {
      const env = cleanEnv()
      const store = `jsonl:${join(scratch, `${signal}-store`)}`
      let sessionId = ''
      const result = await runCli(
        [
          '--json',
          '--store',
          store,
          '--provider',
          script([{ text: 'thinking…', delayMs: 600_000 }]),
          '--cwd',
          workspace(),
          'wait',
        ],
        {
          env,
          onLine: (text, child) => {
            const parsed = JSON.parse(text) as {
              type: string
              sessionId?: string
              notification?: { type: string }
            }
            if (parsed.type === 'session') sessionId = parsed.sessionId!
            if (parsed.type === 'live' && parsed.notification?.type === 'request/start')
              child.kill(signal)
          },
        },
      )
      expect(result.code).toBe(exitCode)
      const opened = await openStore(store)
      try {
        const { events } = await opened.read(sessionId)
        expect(events.at(-1)).toMatchObject({
          type: 'turn/end',
          data: { turn: 1, reason: { kind: 'canceled' } },
        })
        expect(checkLog(events)).toEqual([])
      } finally {
        await opened.close()
      }
    },
  )

  it('--continue and --resume carry on a session: turn numbers continue and history is in the request', async () => {
    const env = cleanEnv()
    const cwd = workspace()
    const first = await runCli(
      ['--json', '--provider', script([{ text: 'first' }]), '--cwd', cwd, 'one'],
      { env },
    )
    const sessionId = (JSON.parse(first.stdout.split('\n')[0]!) as { sessionId: string }).sessionId
    const second = await runCli(
      ['--continue', '--provider', script([{ text: 'second' }]), '--cwd', cwd, 'two'],
      { env },
    )
    expect(second).toMatchObject({ code: 0, stdout: 'second\n', stderr: '' })
    const third = await runCli(
      [
        '--json',
        '--resume',
        sessionId,
        '--provider',
        script([{ text: 'third' }]),
        '--cwd',
        cwd,
        'three',
      ],
      { env },
    )
    expect(JSON.parse(third.stdout.trimEnd().split('\n').at(-1)!)).toMatchObject({
      sessionId,
      result: { status: 'completed', turn: 3 },
    })
  })

  it('--resume of a session whose history the store did not read: the turn number follows it, the stream starts at its end', async () => {
    const cwd = workspace()
    const store = `jsonl:${join(scratch, 'unread-store')}`
    const stored = await writeUnreadSession(store, { cwd })
    const result = await runCli(
      [
        '--json',
        '--store',
        store,
        '--resume',
        stored.id,
        '--provider',
        script([{ text: 'third answer' }]),
        '--cwd',
        cwd,
        'third question',
      ],
      { env: cleanEnv() },
    )
    expect(result.code).toBe(0)
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map(
        (text) => JSON.parse(text) as { type: string; event?: { seq: number }; result?: unknown },
      )
    expect(lines.at(-1)).toMatchObject({ result: { status: 'completed', turn: 3 } })
    const seqs = lines.flatMap((line) => (line.event ? [line.event.seq] : []))
    expect(seqs[0]).toBe(stored.events.length)
    expect(seqs).toEqual(seqs.map((_, index) => stored.events.length + index))
    const opened = await openStore(store)
    try {
      const { events } = await opened.read(stored.id)
      expect(checkLog(events)).toEqual([])
      expect(events.slice(0, stored.events.length)).toEqual(stored.events)
      expect(events).toHaveLength(stored.events.length + seqs.length)
    } finally {
      await opened.close()
    }
  })

  it('--continue with no session in this directory exits 2 and says how to start one', async () => {
    const result = await runCli(
      ['--continue', '--provider', script([]), '--cwd', workspace(), 'more'],
      { env: cleanEnv() },
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('no session')
  })

  it('the offline demo really fixes the failing test', async () => {
    const project = join(scratch, 'demo')
    cpSync(join(ROOT, 'examples/fix-test/project'), project, { recursive: true })
    const { spawnSync } = await import('node:child_process')
    expect(spawnSync(process.execPath, ['--test'], { cwd: project }).status).not.toBe(0)
    // The demo's .rudder/config.json allows edit and node --test: it applies once trusted.
    const env = cleanEnv()
    expect((await runCli(['trust', project], { env })).code).toBe(0)
    const result = await runCli(
      [
        '--provider',
        'scripted:examples/fix-test/script.json',
        '--cwd',
        project,
        'fix the failing test',
      ],
      { env },
    )
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain('all three tests pass')
    expect(spawnSync(process.execPath, ['--test'], { cwd: project }).status).toBe(0)
  })
})
