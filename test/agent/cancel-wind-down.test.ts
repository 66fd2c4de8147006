/**
 * Input around a cancel (docs/spec.md §5.5): nothing from a canceled turn lands after its
 * `turn/end`, and input accepted while it winds down is new input, never stranded.
 * Issue 9 items 13 and 14.
 */
import { describe, expect, it } from 'vitest'
import type { UserMessageData } from '../../src/index.js'
import { agentHarness } from '../support/agent-harness.js'
import { echo, gate, toolWith } from './tools.js'

const context = (text: string, name = 'test-plugin'): UserMessageData => ({
  content: [{ type: 'text', text }],
  source: { kind: 'plugin', name },
})
const call = (id: string, name = 'echo', args: object = { text: id }) => ({
  id,
  name,
  args: args as never,
})

describe('a canceled batch', () => {
  it('drops the tool-post context of a call that finished before cancel but is logged after it', async () => {
    const release = gate()
    const started = gate()
    const posted = gate()
    const slow = toolWith('slow', async () => {
      started.open()
      await release.promise
    })
    const harness = agentHarness(
      [{ toolCalls: [call('c1', 'slow', {}), call('c2')] }, { text: 'second' }],
      {
        tools: [slow, echo],
        hooks: {
          'tool-post': async (event, next) => {
            const result = await next()
            if (event.call.id === 'c2') posted.open()
            return { ...result, additionalContexts: [context(`post-${event.call.id}`)] }
          },
        },
      },
    )
    const prompt = harness.agent.send('P')
    await started.promise
    // c2 has finished and its tool-post listener has answered; its result waits for c1's.
    await posted.promise
    harness.agent.cancel()
    release.open()
    expect(await prompt.result).toMatchObject({ status: 'canceled', turn: 1 })
    await harness.agent.idle()
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(c1) TC(c2) TR(c1) TR(c2) S-1 T-1(canceled)',
    )
    expect(await harness.agent.send('Q').result).toMatchObject({ status: 'completed', turn: 2 })
    expect(harness.requestTexts(1).some((text) => text.startsWith('post-'))).toBe(false)
  })
})

describe('input accepted while a canceled turn winds down', () => {
  it('a steer from a tool reacting to the abort becomes a queued prompt that runs next', async () => {
    const started = gate()
    let steer: ReturnType<typeof harness.agent.steer> | undefined
    const waiting = toolWith('waiting', async (toolContext) => {
      started.open()
      await new Promise<void>((resolve) =>
        toolContext.signal.addEventListener('abort', () => resolve(), { once: true }),
      )
      steer = harness.agent.steer('after cancel')
    })
    const harness = agentHarness([{ toolCalls: [call('c1', 'waiting', {})] }, { text: 'next' }], {
      tools: [waiting],
    })
    const prompt = harness.agent.send('P')
    await started.promise
    harness.agent.cancel()
    expect(await prompt.result).toMatchObject({ status: 'canceled', turn: 1 })
    expect(await steer?.result).toMatchObject({ status: 'completed', turn: 2, text: 'next' })
    await harness.agent.idle()
    expect(harness.agent.pending()).toEqual({ queued: [], staged: [] })
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(c1) TR(c1) S-1 T-1(canceled) T+2 U(after cancel) S+1 A S-1 T-2(completed)',
    )
  })

  it('a steer made right after cancel() returned is a queued prompt, not discarded', async () => {
    const harness = agentHarness([
      { text: 'partial', hold: new Promise(() => {}) },
      { text: 'redirected' },
    ])
    const prompt = harness.agent.send('P')
    await new Promise<void>((resolve) => {
      const unsubscribe = harness.agent.subscribe((notification) => {
        if (notification.type === 'assistant/delta') {
          unsubscribe()
          resolve()
        }
      })
    })
    harness.agent.cancel()
    const steer = harness.agent.steer('S')
    expect(harness.agent.pending().queued.map((item) => item.id)).toEqual([steer.id])
    expect(await prompt.result).toMatchObject({ status: 'canceled', turn: 1 })
    expect(await steer.result).toMatchObject({ status: 'completed', turn: 2, text: 'redirected' })
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A{interrupted} S-1 T-1(canceled) T+2 U(S) S+1 A S-1 T-2(completed)',
    )
  })

  it('an inject made while the canceled turn winds down lands right after its turn/end', async () => {
    const started = gate()
    let injected: ReturnType<typeof harness.agent.inject> | undefined
    const waiting = toolWith('waiting', async (toolContext) => {
      started.open()
      await new Promise<void>((resolve) =>
        toolContext.signal.addEventListener('abort', () => resolve(), { once: true }),
      )
      injected = harness.agent.inject(context('late'))
    })
    const harness = agentHarness([{ toolCalls: [call('c1', 'waiting', {})] }], {
      tools: [waiting],
    })
    const prompt = harness.agent.send('P')
    await started.promise
    harness.agent.cancel()
    expect(await prompt.result).toMatchObject({ status: 'canceled' })
    await harness.agent.idle()
    const result = await injected?.result
    expect(result).toMatchObject({ status: 'logged' })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TC(c1) TR(c1) S-1 T-1(canceled) U(late)')
    expect(result).not.toHaveProperty('turn')
  })
})
