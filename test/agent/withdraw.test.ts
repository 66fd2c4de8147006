/** agent.withdraw(id): a front end takes back one pending input before it reaches the log. */
import { describe, expect, it } from 'vitest'
import { type AgentNotification, textOf, type UserMessageData } from '../../src/index.js'
import { agentHarness } from '../support/agent-harness.js'
import { gate } from './tools.js'

const context = (text: string): UserMessageData => ({
  content: [{ type: 'text', text }],
  source: { kind: 'plugin', name: 'p' },
})
const deliveryEnds = (notifications: AgentNotification[]) =>
  notifications.filter(
    (n): n is Extract<AgentNotification, { type: 'delivery/end' }> => n.type === 'delivery/end',
  )

describe('agent.withdraw', () => {
  it('takes back a queued prompt: it never runs, its delivery says withdrawn, the rest runs', async () => {
    const release = gate()
    const harness = agentHarness([{ text: 'first', hold: release.promise }, { text: 'third' }])
    const first = harness.agent.send('P1')
    const second = harness.agent.send('P2')
    const third = harness.agent.send('P3')
    const item = harness.agent.withdraw(second.id)
    expect(item).toMatchObject({ id: second.id, kind: 'prompt' })
    expect(textOf(item?.data.content ?? [])).toBe('P2')
    expect(await second.result).toEqual({ status: 'discarded', reason: 'withdrawn' })
    expect(harness.agent.pending().queued.map((queued) => queued.id)).toEqual([third.id])
    expect(deliveryEnds(harness.notifications)).toEqual([
      {
        type: 'delivery/end',
        id: second.id,
        kind: 'prompt',
        result: { status: 'discarded', reason: 'withdrawn' },
      },
    ])
    release.open()
    expect(await first.result).toMatchObject({ status: 'completed', turn: 1 })
    expect(await third.result).toMatchObject({ status: 'completed', turn: 2, text: 'third' })
    expect(harness.notation()).toBe(
      'T+1 U(P1) S+1 H A S-1 T-1(completed) T+2 U(P3) S+1 A S-1 T-2(completed)',
    )
  })

  it('takes back staged steering and a staged context before the next drain', async () => {
    const release = gate()
    const harness = agentHarness([{ text: 'answer', hold: release.promise }])
    const prompt = harness.agent.send('P')
    const steering = harness.agent.steer('S')
    const injected = harness.agent.inject(context('C'))
    expect(harness.agent.withdraw(steering.id)).toMatchObject({ kind: 'steering' })
    expect(harness.agent.withdraw(injected.id)).toMatchObject({ kind: 'context' })
    expect(harness.agent.pending()).toEqual({ queued: [], staged: [] })
    release.open()
    await prompt.result
    expect(await steering.result).toEqual({ status: 'discarded', reason: 'withdrawn' })
    expect(await injected.result).toEqual({ status: 'discarded', reason: 'withdrawn' })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A S-1 T-1(completed)')
  })

  it('changes nothing for an input no longer pending, or an unknown id', async () => {
    const harness = agentHarness([{ text: 'done' }])
    const prompt = harness.agent.send('P')
    // Admission has begun: the prompt is no longer queued.
    expect(harness.agent.withdraw(prompt.id)).toBeUndefined()
    expect(await prompt.result).toMatchObject({ status: 'completed' })
    expect(harness.agent.withdraw(prompt.id)).toBeUndefined()
    expect(harness.agent.withdraw('msg_unknown')).toBeUndefined()
    expect(deliveryEnds(harness.notifications).map((end) => end.result.status)).toEqual([
      'completed',
    ])
  })

  it('throws on a disposed agent', async () => {
    const harness = agentHarness([])
    await harness.agent.dispose()
    expect(() => harness.agent.withdraw('msg_x')).toThrowError(
      expect.objectContaining({ code: 'DISPOSED' }),
    )
  })
})
