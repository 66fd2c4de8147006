/**
 * PreToolUse, PostToolUse, PermissionRequest and Notification hooks of both dialects, as real
 * bash scripts run by the bridge around a real agent, a scripted model and the built-in tools.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { EventMap } from '../../src/index.js'
import { bridged, FIELD, hooks, isGone, record, runRecords, sandbox, until } from './support.js'

const bash = (command: string, id = 'c1') => ({ id, name: 'bash', args: { command } })
const results = (events: readonly { type: string; data: unknown }[]) =>
  events
    .filter((event) => event.type === 'tool/result')
    .map((event) => event.data as EventMap['tool/result'])
const calls = (events: readonly { type: string; data: unknown }[]) =>
  events
    .filter((event) => event.type === 'tool/call')
    .map((event) => (event.data as EventMap['tool/call']).args)

describe('PreToolUse', () => {
  it('Claude Code: a guard denies rm -rf with pretty-printed JSON; the model sees the reason; the payload is complete', async () => {
    const box = sandbox()
    const guard = box.script(
      'guard.sh',
      `${record('guard')}\n${FIELD}\nprintf '%s' "$CLAUDE_PROJECT_DIR" > "$(dirname "$0")/project-dir"\nif [[ "$(field tool_input.command)" == *"rm -rf"* ]]; then
cat <<'JSON'
{
  "hookSpecificOutput": {
    "hookEventName": "PreToolUse",
    "permissionDecision": "deny",
    "permissionDecisionReason": "rm -rf is not allowed in this repository"
  }
}
JSON
fi`,
    )
    box.json('home/.claude/settings.json', {
      hooks: hooks({ PreToolUse: [{ matcher: 'Bash', command: guard }] }),
    })
    const h = bridged(box, [{ toolCalls: [bash('rm -rf build')] }, { text: 'ok' }])
    await h.agent.send('clean up').result
    const [result] = results(h.session.residentEvents)
    expect(result).toMatchObject({ isError: true, error: { code: 'denied' } })
    expect(result!.error!.message).toContain('rm -rf is not allowed in this repository')
    expect(calls(h.session.residentEvents)).toEqual([])
    expect(h.requestTexts(1).at(-1)).toContain('rm -rf is not allowed in this repository')

    const [payload] = box.payloads('guard')
    expect(payload).toMatchObject({
      session_id: h.session.header.id,
      cwd: box.cwd,
      hook_event_name: 'PreToolUse',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf build' },
      tool_use_id: 'c1',
    })
    expect(existsSync(payload!.transcript_path as string)).toBe(true)
    expect(readFileSync(join(box.dir, 'project-dir'), 'utf8')).toBe(box.cwd)
    // The run is on record inside the turn, so `rudder sessions show` explains the denial.
    expect(runRecords(h.session.residentEvents)).toEqual([
      expect.objectContaining({
        event: 'PreToolUse',
        dialect: 'claude',
        matcher: 'Bash',
        command: guard,
        callId: 'c1',
        exitCode: 0,
        decision: 'deny',
        reason: 'rm -rf is not allowed in this repository',
      }),
    ])
  })

  it('Codex: exit 2 denies with stderr as the reason; the payload has turn_id, model and permission_mode', async () => {
    const box = sandbox()
    const guard = box.script(
      'guard.sh',
      `${record('guard')}\n${FIELD}\nif [[ "$(field tool_input.command)" == *"rm -rf"* ]]; then echo "no rm -rf, says codex" >&2; exit 2; fi`,
    )
    box.json('project/.codex/hooks.json', {
      hooks: hooks({ PreToolUse: [{ matcher: '^Bash$', command: guard }] }),
    })
    const h = bridged(box, [{ toolCalls: [bash('rm -rf /tmp/x')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(results(h.session.residentEvents)[0]!.error!.message).toContain('no rm -rf, says codex')
    expect(box.payloads('guard')[0]).toMatchObject({
      hook_event_name: 'PreToolUse',
      turn_id: '1',
      model: 'scripted',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /tmp/x' },
      tool_use_id: 'c1',
    })
    expect(runRecords(h.session.residentEvents)[0]).toMatchObject({
      dialect: 'codex',
      exitCode: 2,
      decision: 'deny',
      stderr: 'no rm -rf, says codex',
    })
  })

  it('Codex: exit 2 with nothing on stderr is a failure, not a block', async () => {
    const box = sandbox()
    box.json('project/.codex/hooks.json', {
      hooks: hooks({ PreToolUse: [{ command: box.script('mute.sh', 'exit 2') }] }),
    })
    const h = bridged(box, [{ toolCalls: [bash('echo ran')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(results(h.session.residentEvents)[0]!.isError).toBe(false)
    expect(h.notices.map((notice) => notice.message).join('\n')).toContain(
      'did not write a blocking reason to stderr',
    )
  })

  it.each([
    ['claude', 'project/.claude/settings.json'],
    ['codex', 'project/.codex/hooks.json'],
  ])('%s: updatedInput rewrites the command, and the log shows what ran', async (dialect, file) => {
    const box = sandbox()
    // The whole tool_input comes back with one field changed, as scripts usually do it.
    const rewrite = box.script(
      'rewrite.sh',
      `input=$(cat)\nprintf '%s' "$input" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const i=JSON.parse(s).tool_input;i.command="echo rewritten";console.log(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"allow",updatedInput:i}}))})'`,
    )
    box.json(file, { hooks: hooks({ PreToolUse: [{ matcher: 'Bash', command: rewrite }] }) })
    const args =
      dialect === 'claude' ? { command: 'echo original', timeout: 5 } : { command: 'echo original' }
    const h = bridged(box, [{ toolCalls: [{ id: 'c1', name: 'bash', args }] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(calls(h.session.residentEvents)).toEqual([{ ...args, command: 'echo rewritten' }])
    const text = results(h.session.residentEvents)[0]!
      .content.map((block) => (block.type === 'text' ? block.text : ''))
      .join('')
    expect(text).toContain('rewritten')
    expect(text).not.toContain('original')
  })

  it('Claude Code: Edit shows file_path absolute and old_string/new_string; updatedInput maps back keeping the path as written', async () => {
    const box = sandbox()
    writeFileSync(join(box.cwd, 'a.txt'), 'hello x\n')
    const rewrite = box.script(
      'edit.sh',
      `${record('edit')}\nprintf '%s' "$input" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const i=JSON.parse(s).tool_input;i.new_string="z";console.log(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",updatedInput:i}}))})'`,
    )
    box.json('home/.claude/settings.json', {
      hooks: hooks({ PreToolUse: [{ matcher: 'Edit|Write', command: rewrite }] }),
    })
    const edit = { path: 'a.txt', oldText: 'x', newText: 'y' }
    const h = bridged(box, [
      { toolCalls: [{ id: 'c1', name: 'edit', args: edit }] },
      { text: 'ok' },
    ])
    await h.agent.send('go').result
    expect(box.payloads('edit')[0]).toMatchObject({
      tool_name: 'Edit',
      tool_input: { file_path: join(box.cwd, 'a.txt'), old_string: 'x', new_string: 'y' },
    })
    expect(calls(h.session.residentEvents)).toEqual([{ path: 'a.txt', oldText: 'x', newText: 'z' }])
    expect(readFileSync(join(box.cwd, 'a.txt'), 'utf8')).toBe('hello z\n')
  })

  it('runs matching hooks in parallel and merges deny > ask > allow in config order', async () => {
    const box = sandbox()
    // Each waits until the others have started: run one after another, they would time out.
    const waiting = (name: string, answer: string) =>
      box.script(
        `${name}.sh`,
        `cat > /dev/null\ntouch "$(dirname "$0")/${name}.started"\nfor other in allow ask deny; do while [ ! -f "$(dirname "$0")/$other.started" ]; do sleep 0.01; done; done\n${answer}`,
      )
    const decision = (value: string, reason: string) =>
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"${value}","permissionDecisionReason":"${reason}"}}'`
    box.json('home/.claude/settings.json', {
      hooks: hooks({
        PreToolUse: [
          { command: waiting('allow', decision('allow', 'fine')), timeout: 10 },
          { command: waiting('ask', decision('ask', 'please check')), timeout: 10 },
          { command: waiting('deny', decision('deny', 'never')), timeout: 10 },
        ],
      }),
    })
    let asked = 0
    const h = bridged(box, [{ toolCalls: [bash('echo x')] }, { text: 'ok' }], {
      approve: () => {
        asked++
        return true
      },
    })
    await h.agent.send('go').result
    expect(results(h.session.residentEvents)[0]!.error).toMatchObject({ code: 'denied' })
    expect(results(h.session.residentEvents)[0]!.error!.message).toContain('never')
    expect(asked).toBe(0)
    expect(runRecords(h.session.residentEvents).map((run) => run.decision)).toEqual([
      'allow',
      'ask',
      'deny',
    ])
  })

  it('ask (without a deny) goes to the approval path with the hook reason', async () => {
    const box = sandbox()
    box.json('home/.claude/settings.json', {
      hooks: hooks({
        PreToolUse: [
          {
            command: box.script(
              'allow.sh',
              `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","additionalContext":"pre note"}}'`,
            ),
          },
          {
            command: box.script(
              'ask.sh',
              `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"sure?"}}'`,
            ),
          },
        ],
      }),
    })
    const reasons: (string | undefined)[] = []
    const h = bridged(box, [{ toolCalls: [bash('echo x')] }, { text: 'ok' }], {
      approve: ({ reason }) => {
        reasons.push(reason)
        return false
      },
    })
    await h.agent.send('go').result
    expect(reasons).toEqual(['sure?'])
    expect(results(h.session.residentEvents)[0]!.error).toMatchObject({ code: 'not-approved' })
    // PreToolUse additionalContext lands after the batch, with its source.
    expect(h.notation()).toContain('TR(c1) S-1 U(pre note) S+2')
    const note = h.session.residentEvents.find(
      (event) =>
        event.type === 'user/message' &&
        (event.data as EventMap['user/message']).source.kind === 'hook',
    )
    expect((note!.data as EventMap['user/message']).source).toMatchObject({
      kind: 'hook',
      hook: 'tool-pre',
    })
  })

  it('identical commands in two files run once', async () => {
    const box = sandbox()
    const counter = box.script(
      'count.sh',
      `cat > /dev/null\necho run >> "$(dirname "$0")/count.txt"`,
    )
    const config = { hooks: hooks({ PreToolUse: [{ matcher: 'Bash', command: counter }] }) }
    box.json('home/.claude/settings.json', config)
    box.json('project/.claude/settings.json', config)
    const h = bridged(box, [{ toolCalls: [bash('echo x')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(readFileSync(join(box.dir, 'count.txt'), 'utf8')).toBe('run\n')
  })

  it('a hook that sleeps past its timeout is killed with its children; the call goes on', async () => {
    const box = sandbox()
    const slow = box.script(
      'slow.sh',
      `cat > /dev/null\nsleep 30 &\necho "$$ $!" > "$(dirname "$0")/pids"\nwait`,
    )
    box.json('home/.claude/settings.json', {
      hooks: hooks({ PreToolUse: [{ command: slow, timeout: 1 }] }),
    })
    const h = bridged(box, [{ toolCalls: [bash('echo went-on')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(results(h.session.residentEvents)[0]!.isError).toBe(false)
    expect(runRecords(h.session.residentEvents)[0]).toMatchObject({
      outcome: 'timed-out',
      decision: 'error',
    })
    expect(h.notices.some((notice) => /timed out after 1/.test(notice.message))).toBe(true)
    const pids = readFileSync(join(box.dir, 'pids'), 'utf8').trim().split(' ').map(Number)
    await until(() => pids.every(isGone))
  })

  it('cancel kills running hooks', async () => {
    const box = sandbox()
    const hang = box.script(
      'hang.sh',
      `cat > /dev/null\nsleep 30 &\necho "$$ $!" > "$(dirname "$0")/pids.tmp"\nmv "$(dirname "$0")/pids.tmp" "$(dirname "$0")/pids"\nwait`,
    )
    box.json('home/.claude/settings.json', { hooks: hooks({ PreToolUse: [{ command: hang }] }) })
    const h = bridged(box, [{ toolCalls: [bash('echo never')] }, { text: 'ok' }])
    const delivery = h.agent.send('go')
    const pidFile = join(box.dir, 'pids')
    await until(() => existsSync(pidFile))
    h.agent.cancel()
    expect(await delivery.result).toMatchObject({ status: 'canceled' })
    const pids = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number)
    await until(() => pids.every(isGone))
    expect(calls(h.session.residentEvents)).toEqual([])
  })
})

describe('PostToolUse', () => {
  it('Claude Code: additionalContext and a block reason arrive after the batch, verbatim, with the hook source', async () => {
    const box = sandbox()
    const post = box.script(
      'post.sh',
      `${record('post')}\necho '{"decision":"block","reason":"lint failed","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"<system-reminder>generated file</system-reminder>"}}'`,
    )
    box.json('home/.claude/settings.json', {
      hooks: hooks({ PostToolUse: [{ matcher: 'Bash', command: post }] }),
    })
    const h = bridged(box, [
      { toolCalls: [bash('echo out', 'c1'), bash('echo two', 'c2')] },
      { text: 'ok' },
    ])
    await h.agent.send('go').result
    expect(h.notation()).toContain(
      'TC(c1) hook/run TR(c1) TC(c2) hook/run TR(c2) S-1 U(<system-reminder>generated file</system-reminder>) U(lint failed) U(<system-reminder>generated file</system-reminder>) U(lint failed) S+2',
    )
    const context = h.session.residentEvents.find(
      (event) =>
        event.type === 'user/message' &&
        (event.data as EventMap['user/message']).source.kind === 'hook',
    )
    expect((context!.data as EventMap['user/message']).source).toEqual({
      kind: 'hook',
      hook: 'tool-post',
      name: post,
    })
    expect(results(h.session.residentEvents)[0]!.content[0]).toMatchObject({
      text: expect.stringContaining('out'),
    })
    expect(box.payloads('post')[0]).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'echo out' },
      tool_response: expect.stringContaining('out'),
    })
  })

  it('Claude Code: a failed call fires PostToolUseFailure with the error text', async () => {
    const box = sandbox()
    const failure = box.script('failure.sh', `${record('failure')}`)
    box.json('home/.claude/settings.json', {
      hooks: hooks({ PostToolUseFailure: [{ matcher: 'Bash', command: failure }] }),
    })
    const h = bridged(box, [{ toolCalls: [bash('exit 3')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(box.payloads('failure')[0]).toMatchObject({
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      error: expect.stringContaining('exit code 3'),
      is_interrupt: false,
    })
  })

  it('Codex: decision block replaces the tool result with the feedback', async () => {
    const box = sandbox()
    box.json('project/.codex/hooks.json', {
      hooks: hooks({
        PostToolUse: [
          {
            matcher: 'Bash',
            command: box.script(
              'review.sh',
              `cat > /dev/null\necho '{"decision":"block","reason":"output needs review"}'`,
            ),
          },
        ],
      }),
    })
    const h = bridged(box, [{ toolCalls: [bash('echo secret')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(results(h.session.residentEvents)[0]!.content).toEqual([
      { type: 'text', text: 'output needs review' },
    ])
  })
})

describe('around approval', () => {
  it('PermissionRequest allow approves without asking; Notification hooks hear of the prompt', async () => {
    const box = sandbox()
    const notified = box.script('notify.sh', record('notify'))
    box.json('home/.claude/settings.json', {
      hooks: {
        ...hooks({
          PreToolUse: [
            {
              command: box.script(
                'ask.sh',
                `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'`,
              ),
            },
          ],
          PermissionRequest: [
            {
              matcher: 'Bash',
              command: box.script(
                'permit.sh',
                `cat >/dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`,
              ),
            },
          ],
        }),
        Notification: [
          { matcher: 'permission_prompt', hooks: [{ type: 'command', command: notified }] },
        ],
      },
    })
    let asked = 0
    const h = bridged(box, [{ toolCalls: [bash('echo allowed')] }, { text: 'ok' }], {
      approve: () => {
        asked++
        return false
      },
    })
    await h.agent.send('go').result
    expect(asked).toBe(0)
    expect(results(h.session.residentEvents)[0]!.isError).toBe(false)
    await until(() => box.payloads('notify').length === 1)
    expect(box.payloads('notify')[0]).toMatchObject({
      hook_event_name: 'Notification',
      notification_type: 'permission_prompt',
      message: 'rudder needs your permission to use Bash',
      title: 'Permission needed',
    })
  })
})

describe('more tool outcomes', () => {
  it('Codex: a PermissionRequest deny refuses with its message', async () => {
    const box = sandbox()
    const pr = 'cat > "$(dirname "$0")/pr.payloads"\n'
    box.json('project/.codex/hooks.json', {
      hooks: hooks({
        PermissionRequest: [
          {
            matcher: 'Bash',
            command: box.script(
              'deny.sh',
              `${pr}echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Blocked by repository policy."}}}'`,
            ),
          },
        ],
      }),
    })
    let asked = 0
    const h = bridged(box, [{ toolCalls: [bash('echo x')] }, { text: 'ok' }], {
      hooks: { 'tool-pre': () => ({ action: 'ask', reason: 'needs a look' }) },
      approve: () => {
        asked++
        return true
      },
    })
    await h.agent.send('go').result
    expect(asked).toBe(0)
    expect(results(h.session.residentEvents)[0]!.error).toMatchObject({
      code: 'not-approved',
      message: 'Blocked by repository policy.',
    })
    expect(box.payloads('pr')[0]).toMatchObject({
      hook_event_name: 'PermissionRequest',
      turn_id: '1',
      tool_name: 'Bash',
      tool_input: { command: 'echo x', description: 'needs a look' },
    })
  })

  it('Claude Code: updatedToolOutput (text) replaces what the model sees', async () => {
    const box = sandbox()
    box.json('home/.claude/settings.json', {
      hooks: hooks({
        PostToolUse: [
          {
            command: box.script(
              'redact.sh',
              `cat >/dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"[redacted]"}}'`,
            ),
          },
        ],
      }),
    })
    const h = bridged(box, [{ toolCalls: [bash('echo secret')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(results(h.session.residentEvents)[0]!.content).toEqual([
      { type: 'text', text: '[redacted]' },
    ])
  })
})

describe('exec form', () => {
  it('a command with args runs without a shell, each argument as written', async () => {
    const box = sandbox()
    box.json('home/.claude/settings.json', {
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [
              {
                type: 'command',
                command: process.execPath,
                args: [
                  '-e',
                  'process.stdout.write(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"deny",permissionDecisionReason:process.argv[1]}}))',
                  '$HOME is not expanded',
                ],
              },
            ],
          },
        ],
      },
    })
    const h = bridged(box, [{ toolCalls: [bash('echo x')] }, { text: 'ok' }])
    await h.agent.send('go').result
    expect(results(h.session.residentEvents)[0]!.error!.message).toContain('$HOME is not expanded')
  })
})
