/**
 * Turns over ACP while something else happens: cancel during a held stream, a second prompt
 * queued behind a running turn, steering into a running turn, many sessions on one connection,
 * and stdin closing under a running turn. Timing is held with the scripted model's
 * `holdUntilFile`, released by the test; nothing waits on a clock.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import { notation } from '../../support/agent-harness.js'
import { checkedSessions, startAcp } from './acp-process.js'

const textOf = (notification: acp.SessionNotification): string | undefined => {
  const update = notification.update
  return update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text'
    ? update.content.text
    : undefined
}

/** The index in `lines` of the first line for which `test` holds. */
const lineIndex = (lines: readonly string[], test: (message: Record<string, unknown>) => boolean) =>
  lines.findIndex((line) => test(JSON.parse(line) as Record<string, unknown>))

describe('rudder acp: turns', () => {
  it('session/cancel cancels the running turn and the prompts queued before it, after all updates', async () => {
    const child = await startAcp({
      script: [{ text: 'partial answer', holdUntilFile: 'never' }, { text: 'after the cancel' }],
    })
    const sessionId = await child.ready()
    const first = child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'one' }],
    })
    await child.untilText('answer')
    const queued = child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'two' }],
    })
    await child.agent.notify('session/cancel', { sessionId })
    expect(await first).toEqual({ stopReason: 'cancelled' })
    expect(await queued).toEqual({ stopReason: 'cancelled' })
    // A prompt sent after the cancel runs.
    const later = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'three' }],
    })
    expect(later.stopReason).toBe('end_turn')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toBe(
      'T+1 U(one) S+1 H A{interrupted} S-1 T-1(canceled) T+2 U(three) S+1 A S-1 T-2(completed)',
    )
    // The canceled prompt's response follows every update of its turn, and precedes the next turn's.
    const response = lineIndex(
      child.fromAgent,
      (message) => (message.result as { stopReason?: string })?.stopReason === 'cancelled',
    )
    const turnOneEnds = child.fromAgent.findLastIndex(
      (line) => line.includes('partial') || line.includes(' answer'),
    )
    const turnThree = lineIndex(child.fromAgent, (message) =>
      JSON.stringify(message).includes('after th'),
    )
    expect(turnOneEnds).toBeGreaterThan(0)
    expect(response).toBeGreaterThan(turnOneEnds)
    expect(response).toBeLessThan(turnThree)
  })

  it('a cancel sent right behind a prompt cancels it, whatever order the SDK runs their handlers in', async () => {
    const child = await startAcp({ script: [{ text: 'should not complete' }, { text: 'next' }] })
    const sessionId = await child.ready()
    // Written back to back: the SDK starts both handlers without waiting for either.
    const prompt = child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'one' }],
    })
    void child.agent.notify('session/cancel', { sessionId })
    expect(await prompt).toEqual({ stopReason: 'cancelled' })
    const next = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'two' }],
    })
    expect(next.stopReason).toBe('end_turn')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    // Canceled before its turn opened, or as it began: never completed.
    expect(notation(session!.events)).not.toContain('U(one) S+1 H A S-1 T-1(completed)')
    expect(notation(session!.events)).toMatch(/U\(two\) S\+1 H? ?A S-1 T-\d\(completed\)$/)
  })

  it('a second prompt during a turn is queued as the next turn, and its updates follow the first response', async () => {
    const child = await startAcp({
      script: [{ text: 'first answer', holdUntilFile: 'release-1' }, { text: 'second answer' }],
    })
    const sessionId = await child.ready()
    const first = child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'one' }],
    })
    await child.untilText('answer')
    const second = child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'two' }],
    })
    child.release('release-1')
    expect(await first).toEqual({ stopReason: 'end_turn' })
    expect(await second).toEqual({ stopReason: 'end_turn' })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toBe(
      'T+1 U(one) S+1 H A S-1 T-1(completed) T+2 U(two) S+1 A S-1 T-2(completed)',
    )
    const firstResponse = lineIndex(
      child.fromAgent,
      (message) =>
        'result' in message &&
        (message.result as { stopReason?: string })?.stopReason === 'end_turn',
    )
    const secondTurn = lineIndex(child.fromAgent, (message) =>
      JSON.stringify(message).includes('second'),
    )
    expect(firstResponse).toBeGreaterThan(0)
    expect(firstResponse).toBeLessThan(secondTurn)
  })

  it('_session/steering during a running tool lands in that turn before its next step', async () => {
    const child = await startAcp({
      script: [
        {
          toolCalls: [
            {
              id: 'c1',
              name: 'bash',
              args: { command: 'until [ -e go ]; do sleep 0.02; done; echo ran' },
            },
          ],
        },
        { text: 'steered' },
      ],
    })
    const sessionId = await child.ready()
    const prompt = child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'run it' }],
    })
    await child.until(
      (notification) =>
        notification.update.sessionUpdate === 'tool_call_update' &&
        notification.update.status === 'in_progress',
    )
    const steering = await child.agent.request<{ outcome: string }>('_session/steering', {
      sessionId,
      prompt: [{ type: 'text', text: 'use tabs' }],
    })
    expect(steering).toMatchObject({ outcome: 'injected' })
    // The command waits for this file in the workspace.
    writeFileSync(join(child.workspace, 'go'), '')
    expect(await prompt).toEqual({ stopReason: 'end_turn' })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toBe(
      'T+1 U(run it) S+1 H A TC(c1) TR(c1) S-1 G(use tabs) S+2 A S-2 T-1(completed)',
    )
  })

  it('_session/steering with no turn running starts one, or asks for a prompt when told to', async () => {
    const child = await startAcp({ script: [{ text: 'started by steering' }] })
    const sessionId = await child.ready()
    const asked = await child.agent.request<{ outcome: string; reason?: string }>(
      '_session/steering',
      {
        sessionId,
        prompt: [{ type: 'text', text: 'hello?' }],
        _meta: { steering: { idleBehavior: 'promptRequired' } },
      },
    )
    expect(asked).toEqual({ outcome: 'promptRequired', reason: 'noRunningTurn' })
    const started = await child.agent.request<{ outcome: string }>('_session/steering', {
      sessionId,
      prompt: [{ type: 'text', text: 'hello' }],
    })
    expect(started).toEqual({ outcome: 'startedNewTurn' })
    await child.untilText('steering')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toMatch(/^T\+1 U\(hello\) S\+1 H A S-1 T-1\(completed\)/)
  })

  it('serves many sessions at once on one connection, each update under its own session', async () => {
    const child = await startAcp({ script: [{ text: 'working on it', holdUntilFile: 'go' }] })
    const first = await child.ready()
    const { sessionId: second } = await child.agent.request('session/new', {
      cwd: child.workspace,
      mcpServers: [],
    })
    const prompts = [first, second].map((sessionId) =>
      child.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: `for ${sessionId}` }],
      }),
    )
    // Both turns are streaming before either ends.
    await child.untilText('on it', first)
    await child.untilText('on it', second)
    child.release('go')
    expect(await Promise.all(prompts)).toEqual([
      { stopReason: 'end_turn' },
      { stopReason: 'end_turn' },
    ])
    const text = (sessionId: string) =>
      child.updates
        .filter((update) => update.sessionId === sessionId)
        .map((update) => textOf(update) ?? '')
        .join('')
    expect(text(first)).toBe('working on it')
    expect(text(second)).toBe('working on it')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const sessions = await checkedSessions(child)
    expect(sessions.map((session) => notation(session.events)).sort()).toEqual(
      [
        `T+1 U(for ${first}) S+1 H A S-1 T-1(completed)`,
        `T+1 U(for ${second}) S+1 H A S-1 T-1(completed)`,
      ].sort(),
    )
  })

  it('exits cleanly when stdin closes under a running turn: the turn is canceled, the log closed, the lease released', async () => {
    const child = await startAcp({ script: [{ text: 'still going', holdUntilFile: 'never' }] })
    const sessionId = await child.ready()
    void child.agent
      .request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'long task' }] })
      .catch(() => {
        // The connection closes under this request; its answer never comes.
      })
    await child.untilText('going')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    expect(child.stderr()).toBe('')
    const [session] = await checkedSessions(child)
    // Closed by rudder itself (canceled), not repaired after a crash (interrupted).
    expect(notation(session!.events)).toBe(
      'T+1 U(long task) S+1 H A{interrupted} S-1 T-1(canceled)',
    )
    const { openStore } = await import('../../../src/index.js')
    const store = await openStore(`sqlite:${child.home}/sessions.db`)
    try {
      const reopened = await store.open(sessionId)
      expect(reopened.repairs).toEqual([])
      await reopened.close()
    } finally {
      await store.close()
    }
  })
})
