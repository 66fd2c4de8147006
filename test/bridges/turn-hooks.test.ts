/**
 * SessionStart, UserPromptSubmit and Stop hooks of both dialects, through a real agent with a
 * scripted model.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { type EventMap, openStore, type SessionEvent } from '../../src/index.js'
import { dialogueOf, writeUnreadSession } from '../frontends/unread-history.js'
import {
  bridged,
  bridgedOver,
  FIELD,
  hooks,
  record,
  runRecords,
  sandbox,
  until,
} from './support.js'

const files = [
  ['claude', 'home/.claude/settings.json'],
  ['codex', 'project/.codex/hooks.json'],
] as const

describe('UserPromptSubmit', () => {
  it.each(files)(
    '%s: exit 2 blocks the prompt; nothing is logged and the reason reaches the caller',
    async (_dialect, file) => {
      const box = sandbox()
      const check = box.script(
        'check.sh',
        `${record('check')}\n${FIELD}\nif [[ "$(field prompt)" == *sk-* ]]; then printf '\\e[31mlooks like an API key\\e[0m' >&2; exit 2; fi`,
      )
      box.json(file, { hooks: hooks({ UserPromptSubmit: [{ command: check }] }) })
      const h = bridged(box, [{ text: 'never' }])
      const result = await h.agent.send('use sk-12345').result
      expect(result).toEqual({
        status: 'blocked',
        reason: '\u001b[31mlooks like an API key\u001b[0m',
      })
      expect(h.session.residentEvents).toEqual([])
      expect(h.provider.requests).toHaveLength(0)
      expect(box.payloads('check')[0]).toMatchObject({
        hook_event_name: 'UserPromptSubmit',
        prompt: 'use sk-12345',
        session_id: h.session.header.id,
      })
    },
  )

  it.each(files)(
    '%s: additionalContext and plain stdout arrive verbatim as contexts with the hook source',
    async (_dialect, file) => {
      const box = sandbox()
      const json = box.script(
        'json.sh',
        `cat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"<system-reminder>branch: main</system-reminder>"}}'`,
      )
      const plain = box.script('plain.sh', `cat > /dev/null\nprintf 'plain context\\nline two\\n'`)
      box.json(file, {
        // A matcher on UserPromptSubmit is ignored, as both products document.
        hooks: hooks({
          UserPromptSubmit: [{ command: json, matcher: 'NoSuchThing' }, { command: plain }],
        }),
      })
      const h = bridged(box, [{ text: 'done' }])
      await h.agent.send('P').result
      expect(h.notation()).toBe(
        'T+1 U(P) U(<system-reminder>branch: main</system-reminder>) U(plain context\nline two) hook/run hook/run S+1 H A S-1 T-1(completed)',
      )
      const contexts = h.session.residentEvents
        .filter((event) => event.type === 'user/message')
        .slice(1)
        .map((event) => (event.data as EventMap['user/message']).source)
      expect(contexts).toEqual([
        { kind: 'hook', hook: 'prompt-submit', name: json },
        { kind: 'hook', hook: 'prompt-submit', name: plain },
      ])
      expect(h.requestTexts(0)).toEqual([
        'P',
        '<system-reminder>branch: main</system-reminder>',
        'plain context\nline two',
      ])
    },
  )

  it('Claude Code: decision block blocks with its reason; continue:false blocks with its stopReason', async () => {
    const box = sandbox()
    const file = box.json('home/.claude/settings.json', {
      hooks: hooks({
        UserPromptSubmit: [
          {
            command: box.script(
              'block.sh',
              `cat >/dev/null\necho '{"decision":"block","reason":"not on Fridays"}'`,
            ),
          },
        ],
      }),
    })
    const h = bridged(box, [{ text: 'never' }])
    expect(await h.agent.send('P').result).toEqual({ status: 'blocked', reason: 'not on Fridays' })
    box.json('home/.claude/settings.json', {
      hooks: hooks({
        UserPromptSubmit: [
          {
            command: box.script(
              'stop.sh',
              `cat >/dev/null\necho '{"continue":false,"stopReason":"maintenance window"}'`,
            ),
          },
        ],
      }),
    })
    expect(file).toContain('settings.json')
    const second = bridged(box, [{ text: 'never' }])
    expect(await second.agent.send('P').result).toEqual({
      status: 'blocked',
      reason: 'maintenance window',
    })
    expect([...h.session.residentEvents, ...second.session.residentEvents]).toEqual([])
  })
})

describe('SessionStart', () => {
  it.each(files)(
    '%s: plain stdout and additionalContext are injected before the first prompt, with the source; records join the first turn',
    async (_dialect, file) => {
      const box = sandbox()
      const start = box.script('start.sh', `${record('start')}\necho "Current branch: feature/x"`)
      const json = box.script(
        'json.sh',
        `cat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Open issue: #42"}}'`,
      )
      box.json(file, {
        hooks: hooks({
          SessionStart: [
            { matcher: 'startup', command: start },
            { matcher: 'resume', command: box.script('resume.sh', 'echo never') },
            { command: json },
          ],
        }),
      })
      const h = bridged(box, [{ text: 'hi' }])
      await h.agent.send('P').result
      expect(h.notation()).toBe(
        'U(Current branch: feature/x) U(Open issue: #42) T+1 U(P) hook/run hook/run S+1 H A S-1 T-1(completed)',
      )
      expect((h.session.residentEvents[0]!.data as EventMap['user/message']).source).toEqual({
        kind: 'hook',
        hook: 'session-start',
        name: start,
      })
      expect(box.payloads('start')[0]).toMatchObject({
        hook_event_name: 'SessionStart',
        source: 'startup',
        model: 'scripted',
      })
    },
  )
})

describe('Stop', () => {
  it.each(files)(
    '%s: block once, then allow: two steps, stop_hook_active false then true',
    async (_dialect, file) => {
      const box = sandbox()
      const gate = box.script(
        'gate.sh',
        `${record('gate')}\n${FIELD}\nif [ "$(field stop_hook_active)" = "false" ]; then echo '{"decision":"block","reason":"run the tests first"}'; else echo '{}'; fi`,
      )
      box.json(file, { hooks: hooks({ Stop: [{ command: gate }] }) })
      const h = bridged(box, [{ text: 'first' }, { text: 'tests pass' }])
      expect(await h.agent.send('P').result).toMatchObject({
        status: 'completed',
        text: 'tests pass',
      })
      expect(h.notation()).toBe(
        'T+1 U(P) S+1 H A S-1 hook/run G(run the tests first) S+2 A S-2 hook/run T-1(completed)',
      )
      expect(box.payloads('gate').map((payload) => payload.stop_hook_active)).toEqual([false, true])
      expect(box.payloads('gate').map((payload) => payload.last_assistant_message)).toEqual([
        'first',
        'tests pass',
      ])
      const steering = h.session.residentEvents.find((event) => event.type === 'steering/message')
      expect((steering!.data as EventMap['steering/message']).source).toEqual({
        kind: 'hook',
        hook: 'turn-stopping',
        name: gate,
      })
    },
  )

  it.each(files)(
    '%s: a hook that always blocks ends the turn at the cap with stop-limit',
    async (_dialect, file) => {
      const box = sandbox()
      box.json(file, {
        hooks: hooks({
          Stop: [
            { command: box.script('forever.sh', `cat > /dev/null\necho 'keep going' >&2\nexit 2`) },
          ],
        }),
      })
      const h = bridged(
        box,
        Array.from({ length: 3 }, (_, index) => ({ text: `r${index}` })),
        { maxStopContinuations: 2 },
      )
      expect(await h.agent.send('P').result).toMatchObject({ status: 'stop-limit' })
      // Three stop attempts: two continuations, then the cap (the third steering is logged, unanswered).
      expect(h.session.residentEvents.filter((event) => event.type === 'step/start')).toHaveLength(
        3,
      )
      expect(runRecords(h.session.residentEvents).map((run) => run.decision)).toEqual([
        'block',
        'block',
        'block',
      ])
    },
  )

  it.each(files)(
    '%s: continue:false ends the turn, its stopReason shown to the person only',
    async (_dialect, file) => {
      const box = sandbox()
      box.json(file, {
        hooks: hooks({
          Stop: [
            {
              command: box.script(
                'block.sh',
                `cat > /dev/null\necho '{"decision":"block","reason":"go on"}'`,
              ),
            },
            {
              command: box.script(
                'halt.sh',
                `cat > /dev/null\necho '{"continue":false,"stopReason":"build is red"}'`,
              ),
            },
          ],
        }),
      })
      const h = bridged(box, [{ text: 'first' }, { text: 'never' }])
      expect(await h.agent.send('P').result).toMatchObject({ status: 'completed', text: 'first' })
      expect(h.notation()).toBe('T+1 U(P) S+1 H A S-1 hook/run hook/run T-1(completed)')
      expect(h.notices).toContainEqual({
        level: 'warning',
        source: 'hook:Stop',
        message: 'build is red',
      })
      expect(h.provider.requests).toHaveLength(1)
    },
  )

  it('Codex: plain text from a Stop hook is an error and the turn ends normally', async () => {
    const box = sandbox()
    box.json('project/.codex/hooks.json', {
      hooks: hooks({
        Stop: [{ command: box.script('text.sh', 'cat > /dev/null\necho not json') }],
      }),
    })
    const h = bridged(box, [{ text: 'done' }])
    expect(await h.agent.send('P').result).toMatchObject({ status: 'completed' })
    expect(runRecords(h.session.residentEvents)[0]).toMatchObject({ decision: 'error' })
    expect(h.notices.some((notice) => notice.message.includes('plain text is invalid'))).toBe(true)
  })
})

describe('systemMessage and continue:false from tool hooks', () => {
  it('Claude Code: PostToolUse continue:false ends the turn after the batch; systemMessage goes to the person', async () => {
    const box = sandbox()
    box.json('home/.claude/settings.json', {
      hooks: hooks({
        PostToolUse: [
          {
            command: box.script(
              'stop.sh',
              `cat > /dev/null\necho '{"continue":false,"stopReason":"formatter broke","systemMessage":"formatting took 3s"}'`,
            ),
          },
        ],
      }),
    })
    const h = bridged(box, [
      { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'echo hi' } }] },
      { text: 'never' },
    ])
    expect(await h.agent.send('P').result).toMatchObject({ status: 'completed' })
    expect(h.notation()).toBe('T+1 U(P) S+1 H A TC(c1) hook/run TR(c1) S-1 T-1(completed)')
    expect(h.notices.map((notice) => notice.message)).toEqual([
      'formatting took 3s',
      'formatter broke',
    ])
  })
})

describe('StopFailure and SessionEnd (Claude Code)', () => {
  it('StopFailure hears of a turn that ended in an error; SessionEnd runs when the session ends', async () => {
    const box = sandbox()
    const failed = box.script('failed.sh', record('failed'))
    const ended = box.script('ended.sh', record('ended'))
    box.json('home/.claude/settings.json', {
      hooks: hooks({
        StopFailure: [{ command: failed }],
        SessionEnd: [{ matcher: 'other', command: ended }],
      }),
    })
    const h = bridged(
      box,
      [
        { text: 'partial' },
        { error: { code: 'rate_limit_exceeded', message: '429 Too Many Requests' } },
      ],
      {
        hooks: {
          'turn-stopping': ({ stopCount }) => void (stopCount === 0 && h.agent.steer('more')),
        },
      },
    )
    expect(await h.agent.send('P').result).toMatchObject({ status: 'error' })
    await until(() => box.payloads('failed').length === 1)
    expect(box.payloads('failed')[0]).toMatchObject({
      hook_event_name: 'StopFailure',
      error: 'rate_limit',
      error_details: '429 Too Many Requests',
    })
    await h.bridge.end()
    expect(box.payloads('ended')[0]).toMatchObject({
      hook_event_name: 'SessionEnd',
      reason: 'other',
    })
  })
})

describe('more stop paths (Claude Code)', () => {
  it('Stop additionalContext keeps the turn going as steering', async () => {
    const box = sandbox()
    const feedback = box.script(
      'feedback.sh',
      `input=$(cat)\n${FIELD}\nif [ "$(field stop_hook_active)" = "false" ]; then echo '{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"run the linter too"}}'; fi`,
    )
    box.json('home/.claude/settings.json', { hooks: hooks({ Stop: [{ command: feedback }] }) })
    const h = bridged(box, [{ text: 'first' }, { text: 'linted' }])
    expect(await h.agent.send('P').result).toMatchObject({ status: 'completed', text: 'linted' })
    expect(h.notation()).toContain('S-1 hook/run G(run the linter too) S+2')
  })

  it('PreToolUse continue:false denies the call and ends the turn at the next step', async () => {
    const box = sandbox()
    box.json('home/.claude/settings.json', {
      hooks: hooks({
        PreToolUse: [
          {
            command: box.script(
              'halt.sh',
              `cat > /dev/null\necho '{"continue":false,"stopReason":"freeze in effect"}'`,
            ),
          },
        ],
      }),
    })
    const h = bridged(box, [
      { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'echo hi' } }] },
      { text: 'never' },
    ])
    expect(await h.agent.send('P').result).toMatchObject({ status: 'completed' })
    expect(h.notation()).toBe('T+1 U(P) S+1 H A hook/run TR(c1) S-1 T-1(completed)')
    const result = h.session.residentEvents.find((event) => event.type === 'tool/result')
    expect((result!.data as EventMap['tool/result']).error?.message).toContain('freeze in effect')
    expect(h.notices.map((notice) => notice.message)).toContain('freeze in effect')
  })
})

describe('a resumed session whose history the store did not read', () => {
  it('gives hooks the turn after its last, the whole log as the transcript, and the last answer', async () => {
    const box = sandbox()
    box.json('project/.codex/hooks.json', {
      hooks: hooks({
        UserPromptSubmit: [{ command: box.script('prompt.sh', record('prompt')) }],
        Stop: [{ command: box.script('stop.sh', record('stop')) }],
      }),
    })
    const url = `jsonl:${join(box.dir, 'store')}`
    const stored = await writeUnreadSession(url, { cwd: box.cwd })
    const store = await openStore(url)
    const session = await store.open(stored.id)
    expect(session.residentFrom).toBeGreaterThan(0)
    const h = bridgedOver(box, [{ text: 'third answer' }], session)
    onTestFinished(async () => {
      await h.agent.dispose()
      await session.close()
      await store.close()
    })
    expect(await h.agent.send('third question').result).toMatchObject({
      status: 'completed',
      turn: 3,
    })
    const [prompt] = box.payloads('prompt')
    expect(prompt).toMatchObject({ hook_event_name: 'UserPromptSubmit', turn_id: '3' })
    const [stop] = box.payloads('stop')
    expect(stop).toMatchObject({ turn_id: '3', last_assistant_message: 'third answer' })
    // The transcript the Stop hook was given holds the whole log up to it, the unread part too.
    const transcript = readFileSync(stop!.transcript_path as string, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as SessionEvent)
    expect(transcript.slice(0, stored.events.length)).toEqual(
      JSON.parse(JSON.stringify(stored.events)),
    )
    expect(transcript.map((event) => event.seq)).toEqual(transcript.map((_, seq) => seq))
    expect(dialogueOf(transcript).slice(-2)).toEqual(['third question', 'third answer'])
  })
})
