/**
 * A tool call the policy asks about becomes `session/request_permission`: allow or reject,
 * once or always, and a client that fails or cancels refuses the call (fail closed).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import type { SessionEvent } from '../../../src/index.js'
import { notation } from '../../support/agent-harness.js'
import { checkedSessions, type PermissionAnswer, startAcp } from './acp-process.js'

const choose = (optionId: string): acp.RequestPermissionResponse => ({
  outcome: { outcome: 'selected', optionId },
})

const twoCalls = [
  { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'echo one' } }] },
  { toolCalls: [{ id: 'c2', name: 'bash', args: { command: 'echo one' } }] },
  { text: 'finished' },
]

const results = (events: readonly SessionEvent[]) =>
  events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const data = event.data as { isError: boolean; content: { text?: string }[] }
      return { isError: data.isError, text: data.content[0]?.text ?? '' }
    })

async function run(permission: PermissionAnswer) {
  const child = await startAcp({ script: twoCalls, permission })
  const sessionId = await child.ready()
  const response = await child.agent.request('session/prompt', {
    sessionId,
    prompt: [{ type: 'text', text: 'run it twice' }],
  })
  expect(response.stopReason).toBe('end_turn')
  expect(await child.exit()).toEqual({ code: 0, signal: null })
  const [session] = await checkedSessions(child)
  return { child, events: session!.events }
}

describe('rudder acp: permissions', () => {
  it('asks with the four options and the call as the editor shows it; allow once runs it and asks again', async () => {
    const { child, events } = await run(choose('allow_once'))
    expect(child.permissions).toHaveLength(2)
    expect(child.permissions[0]).toMatchObject({
      toolCall: {
        toolCallId: 'c1',
        title: 'echo one',
        kind: 'execute',
        rawInput: { command: 'echo one' },
      },
      options: [
        { optionId: 'allow_once', kind: 'allow_once' },
        { optionId: 'allow_always', kind: 'allow_always' },
        { optionId: 'reject_once', kind: 'reject_once' },
        { optionId: 'reject_always', kind: 'reject_always' },
      ],
    })
    expect(results(events)).toEqual([
      { isError: false, text: 'one\n\n\n[exit code 0]' },
      { isError: false, text: 'one\n\n\n[exit code 0]' },
    ])
    const finals = child.updates
      .map((update) => update.update)
      .filter(
        (update) => update.sessionUpdate === 'tool_call_update' && update.status === 'completed',
      )
    expect(finals).toHaveLength(2)
  })

  it('allow always is remembered for the session', async () => {
    const { child, events } = await run(choose('allow_always'))
    expect(child.permissions).toHaveLength(1)
    expect(results(events).map((result) => result.isError)).toEqual([false, false])
  })

  it.each([
    ['reject once', choose('reject_once'), 2, 'The user did not approve this call to bash.'],
    [
      'reject always',
      choose('reject_always'),
      1,
      'The user refused this call for the rest of the session.',
    ],
    [
      'a cancelled request',
      { outcome: { outcome: 'cancelled' } } as acp.RequestPermissionResponse,
      2,
      'The user did not approve this call to bash: the permission request was cancelled',
    ],
    [
      'a client whose permission handler fails',
      () => Promise.reject(new Error('dialog crashed')),
      2,
      "Approval for bash failed (the editor's permission request failed",
    ],
    ['an option that was not offered', choose('maybe'), 2, 'not one of the options offered'],
  ])(
    '%s refuses the call (fail closed) and tells the model why',
    async (_name, answer, asked, reason) => {
      const { child, events } = await run(answer as PermissionAnswer)
      expect(child.permissions).toHaveLength(asked)
      const [first, second] = results(events)
      expect(first).toMatchObject({ isError: true })
      expect(first!.text).toContain(asked === 1 ? 'did not approve' : reason)
      expect(second).toMatchObject({ isError: true })
      expect(second!.text).toContain(reason)
      // Refused calls never started: results without tool/call events.
      expect(notation(events)).toBe(
        'T+1 U(run it twice) S+1 H A TR(c1) S-1 S+2 A TR(c2) S-2 S+3 A S-3 T-1(completed)',
      )
      const failed = child.updates
        .map((update) => update.update)
        .filter(
          (update) => update.sessionUpdate === 'tool_call_update' && update.status === 'failed',
        )
      expect(failed).toHaveLength(2)
    },
  )

  it('shows a write as the diff against the file on disk while asking', async () => {
    const child = await startAcp({
      script: [
        { toolCalls: [{ id: 'w1', name: 'write', args: { path: 'a.txt', content: 'new\n' } }] },
        { text: 'written' },
      ],
    })
    writeFileSync(join(child.workspace, 'a.txt'), 'old\n')
    const sessionId = await child.ready()
    await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'rewrite a' }],
    })
    expect(child.permissions[0]!.toolCall).toMatchObject({
      kind: 'edit',
      title: 'Write a.txt',
      content: [
        { type: 'diff', path: join(child.workspace, 'a.txt'), oldText: 'old\n', newText: 'new\n' },
      ],
    })
    expect(readFileSync(join(child.workspace, 'a.txt'), 'utf8')).toBe('new\n')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    await checkedSessions(child)
  })
})
