/**
 * The conformance scenarios of docs/spec.md §13 (1–24, 28, 29) as tests over the log. Scenario 28 (each
 * request equals the projection at its step/start) is verified after every test by the harness.
 */
import { describe, expect, it } from 'vitest'
import { type AgentNotification, textOf, type UserMessageData } from '../../src/index.js'
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
const firstDelta = (notifications: AgentNotification[]) =>
  new Promise<void>((resolve) => {
    const check = () =>
      notifications.some((n) => n.type === 'assistant/delta') ? resolve() : setImmediate(check)
    check()
  })

describe('docs/spec.md §13 conformance scenarios', () => {
  it('1. simple turn', async () => {
    const harness = agentHarness([{ text: 'hello' }])
    const result = await harness.agent.send('P').result
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A S-1 T-1(completed)')
    expect(harness.provider.requests).toHaveLength(1)
    expect(harness.requestTexts(0)).toEqual(['P'])
    expect(result).toEqual({ status: 'completed', turn: 1, text: 'hello' })
  })

  it('2. tool round trip', async () => {
    const harness = agentHarness([{ toolCalls: [call('c1')] }, { text: 'done' }], { tools: [echo] })
    await harness.agent.send('P').result
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TC(c1) TR(c1) S-1 S+2 A S-2 T-1(completed)')
    expect(harness.requestTexts(1)).toEqual(['P', 'assistant:', 'tool:echo: c1'])
  })

  it('3. idle inject: exactly U(X), no turn, no request, idle at once', async () => {
    const harness = agentHarness([{ text: 'later' }])
    const statuses: string[] = []
    harness.agent.subscribe((n) => n.type === 'status/change' && statuses.push(n.status))
    const delivery = harness.agent.inject({ ...context('X'), meta: { tag: 1 } })
    expect(harness.notation()).toBe('U(X)')
    expect(harness.session.residentEvents[0]!.data).toMatchObject({
      source: { kind: 'plugin', name: 'test-plugin' },
      meta: { tag: 1 },
    })
    expect(harness.agent.status).toBe('idle')
    let isIdle = false
    void harness.agent.idle().then(() => {
      isIdle = true
    })
    await Promise.resolve()
    expect(isIdle).toBe(true)
    expect(await delivery.result).toEqual({ status: 'logged', seq: 0 })
    expect(harness.provider.requests).toHaveLength(0)
    expect(statuses).toEqual([])
    await harness.agent.send('P').result
    expect(harness.notation()).toBe('U(X) T+1 U(P) S+1 H A S-1 T-1(completed)')
  })

  it('4. idle inject then send', async () => {
    const harness = agentHarness([{ text: 'ok' }])
    harness.agent.inject(context('X'))
    await harness.agent.send('P').result
    expect(harness.notation()).toBe('U(X) T+1 U(P) S+1 H A S-1 T-1(completed)')
    expect(harness.requestTexts(0)).toEqual(['X', 'P'])
  })

  it('5. verbatim: framing is the producer’s, source and meta never reach the request', async () => {
    const reminder = '<system-reminder>\nAlways run the tests.\n</system-reminder>'
    const harness = agentHarness([{ text: 'ok' }])
    harness.agent.inject({
      content: [{ type: 'text', text: reminder }],
      source: { kind: 'plugin', name: 'SOURCE-NAME' },
      meta: { secret: 'META-VALUE' },
    })
    await harness.agent.send('P').result
    const request = harness.provider.requests[0]!
    expect(request.messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: reminder }],
    })
    const wire = JSON.stringify(request)
    expect(wire).not.toContain('META-VALUE')
    expect(wire).not.toContain('SOURCE-NAME')
    expect(wire.match(/system-reminder/g)).toHaveLength(2)
  })

  it('6. steer during a tool joins the next step of the same turn', async () => {
    let steered: Promise<unknown> | undefined
    const tool = toolWith('work', (ctx) => {
      steered = ctx.agent.steer('S').result
    })
    const harness = agentHarness(
      [{ toolCalls: [call('c1', 'work', {})] }, { text: 'redirected' }],
      {
        tools: [tool],
      },
    )
    await harness.agent.send('P').result
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(c1) TR(c1) S-1 G(S) S+2 A S-2 T-1(completed)',
    )
    expect(await steered).toEqual({ status: 'completed', turn: 1, text: 'redirected' })
    expect(harness.requestTexts(1)).toEqual(['P', 'assistant:', 'tool:work done', 'S'])
  })

  it('7. inject during a tool: after its result, before the next step, not in request 1', async () => {
    const tool = toolWith('work', (ctx) => {
      ctx.agent.inject(context('a'))
      ctx.agent.inject(context('b'))
    })
    const harness = agentHarness([{ toolCalls: [call('c1', 'work', {})] }, { text: 'ok' }], {
      tools: [tool],
    })
    await harness.agent.send('P').result
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(c1) TR(c1) S-1 U(a) U(b) S+2 A S-2 T-1(completed)',
    )
    expect(harness.requestTexts(0)).toEqual(['P'])
    expect(harness.requestTexts(1)).toEqual(['P', 'assistant:', 'tool:work done', 'a', 'b'])
  })

  it('8. batch adjacency: both results, then both tool-post contexts FIFO by call, then the next step', async () => {
    const harness = agentHarness([{ toolCalls: [call('c1'), call('c2')] }, { text: 'ok' }], {
      tools: [echo],
      hooks: {
        'tool-post': async (event, next) => {
          const result = await next()
          return { ...result, additionalContexts: [context(`k-${event.call.id}`, 'post')] }
        },
      },
    })
    await harness.agent.send('P').result
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(c1) TC(c2) TR(c1) TR(c2) S-1 U(k-c1) U(k-c2) S+2 A S-2 T-1(completed)',
    )
  })

  it('9. admission contexts follow the prompt and keep their source', async () => {
    const harness = agentHarness([{ text: 'ok' }], {
      hooks: {
        'prompt-submit': async (_event, next) => {
          const result = await next()
          return result.action === 'admit'
            ? {
                ...result,
                additionalContexts: [...result.additionalContexts, context('C', 'admission')],
              }
            : result
        },
      },
    })
    await harness.agent.send('P').result
    expect(harness.notation()).toBe('T+1 U(P) U(C) S+1 H A S-1 T-1(completed)')
    expect(harness.session.residentEvents[2]!.data).toMatchObject({
      source: { kind: 'plugin', name: 'admission' },
    })
  })

  it('10. replaced content: the original text reaches no request', async () => {
    const harness = agentHarness([{ text: 'ok' }], {
      hooks: {
        'prompt-submit': () => ({
          action: 'admit',
          content: [{ type: 'text', text: 'new' }],
          additionalContexts: [],
        }),
      },
    })
    await harness.agent.send('ORIGINAL').result
    expect(harness.notation()).toBe('T+1 U(new) S+1 H A S-1 T-1(completed)')
    expect(JSON.stringify(harness.provider.requests)).not.toContain('ORIGINAL')
    expect(harness.session.residentEvents[1]!.data).toMatchObject({ source: { kind: 'user' } })
  })

  it('11. block: no events at all; delivery blocked with the reason', async () => {
    const harness = agentHarness([], {
      hooks: { 'prompt-submit': () => ({ action: 'block', reason: 'not today' }) },
    })
    expect(await harness.agent.send('P').result).toEqual({ status: 'blocked', reason: 'not today' })
    expect(harness.session.residentEvents).toEqual([])
    expect(harness.agent.status).toBe('idle')
  })

  it('12. block with staged context: the context lands between turns, no turn', async () => {
    const held = gate<'block'>()
    const harness = agentHarness([], {
      hooks: { 'prompt-submit': async () => ({ action: await held.promise, reason: 'no' }) },
    })
    const prompt = harness.agent.send('P')
    expect(harness.agent.status).toBe('admitting')
    const injected = harness.agent.inject(context('X'))
    expect(harness.session.residentEvents).toEqual([])
    held.open('block')
    expect(await prompt.result).toEqual({ status: 'blocked', reason: 'no' })
    expect(await injected.result).toEqual({ status: 'logged', seq: 0 })
    expect(harness.notation()).toBe('U(X)')
  })

  it('13. block with staged steering: nothing logged; the next admitted send carries both', async () => {
    const held = gate()
    let calls = 0
    const harness = agentHarness([{ text: 'ok' }], {
      hooks: {
        'prompt-submit': async (_event, next) => {
          if (++calls > 1) return next()
          await held.promise
          return { action: 'block', reason: 'no' }
        },
      },
    })
    const blocked = harness.agent.send('P')
    const steering = harness.agent.steer('S')
    harness.agent.inject(context('X'))
    held.open()
    expect(await blocked.result).toMatchObject({ status: 'blocked' })
    await harness.agent.idle()
    expect(harness.session.residentEvents).toEqual([])
    expect(harness.agent.pending().staged.map((item) => item.kind)).toEqual(['steering', 'context'])
    await harness.agent.send('W').result
    expect(harness.notation()).toBe('T+1 U(W) G(S) U(X) S+1 H A S-1 T-1(completed)')
    expect(await steering.result).toMatchObject({ status: 'completed', turn: 1 })
  })

  it('14. ownership: contexts added around a block are never written', async () => {
    const harness = agentHarness([], {
      hooks: {
        'prompt-submit': [
          async (_event, next) => ({ ...(await next()), additionalContexts: [context('K')] }),
          () => ({ action: 'block', reason: 'inner says no' }),
        ],
      },
    })
    expect(await harness.agent.send('P').result).toEqual({
      status: 'blocked',
      reason: 'inner says no',
    })
    expect(harness.session.residentEvents).toEqual([])
  })

  it('15. same boundary, same request: inputs during admission join request 1 in acceptance order', async () => {
    const held = gate()
    const harness = agentHarness([{ text: 'ok' }], {
      hooks: {
        'prompt-submit': async (_event, next) => {
          await held.promise
          return next()
        },
      },
    })
    const prompt = harness.agent.send('P')
    harness.agent.inject(context('X'))
    harness.agent.steer('S')
    held.open()
    await prompt.result
    expect(harness.notation()).toBe('T+1 U(P) U(X) G(S) S+1 H A S-1 T-1(completed)')
    expect(harness.requestTexts(0)).toEqual(['P', 'X', 'S'])
  })

  it('16. late steer from a turn/end observer is its own turn', async () => {
    const harness = agentHarness([{ text: 'one' }, { text: 'two' }])
    let second: Promise<unknown> | undefined
    harness.session.subscribe((event) => {
      if (event.type === 'turn/end' && (event.data as { turn: number }).turn === 1)
        second = harness.agent.steer('S').result
    })
    await harness.agent.send('P').result
    await harness.agent.idle()
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A S-1 T-1(completed) T+2 U(S) S+1 A S-1 T-2(completed)',
    )
    expect(await second).toMatchObject({ status: 'completed', turn: 2, text: 'two' })
  })

  it('17. inject from a turn/end observer lands right after T-1, outside any turn', async () => {
    const harness = agentHarness([{ text: 'one' }])
    harness.session.subscribe((event) => {
      if (event.type === 'turn/end') harness.agent.inject(context('X'))
    })
    await harness.agent.send('P').result
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A S-1 T-1(completed) U(X)')
  })

  it('18. queue: three sends are three turns in FIFO order', async () => {
    const harness = agentHarness([{ text: 'a' }, { text: 'b' }, { text: 'c' }])
    const results = await Promise.all(['P1', 'P2', 'P3'].map((p) => harness.agent.send(p).result))
    expect(results.map((r) => r.status === 'completed' && [r.turn, r.text])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ])
    expect(harness.notation()).toBe(
      'T+1 U(P1) S+1 H A S-1 T-1(completed) T+2 U(P2) S+1 A S-1 T-2(completed) T+3 U(P3) S+1 A S-1 T-3(completed)',
    )
  })

  it('19a. stop-continue: a turn-stopping listener that steers twice gives one turn of three steps', async () => {
    const stopCounts: number[] = []
    const harness = agentHarness([{ text: '1' }, { text: '2' }, { text: '3' }], {
      hooks: {
        'turn-stopping': ({ stopCount }) => {
          stopCounts.push(stopCount)
          if (stopCount < 2) harness.agent.steer(`again ${stopCount}`)
        },
      },
    })
    expect(await harness.agent.send('P').result).toMatchObject({
      status: 'completed',
      turn: 1,
      text: '3',
    })
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A S-1 G(again 0) S+2 A S-2 G(again 1) S+3 A S-3 T-1(completed)',
    )
    expect(stopCounts).toEqual([0, 1, 2])
  })

  it('19b. stop-continue: a listener that always steers ends at the cap with stop-limit', async () => {
    const script = Array.from({ length: 9 }, (_, i) => ({ text: `r${i}` }))
    const harness = agentHarness(script, {
      hooks: { 'turn-stopping': () => void harness.agent.steer('more') },
    })
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'stop-limit', turn: 1 })
    const events = harness.session.residentEvents
    expect(events.filter((e) => e.type === 'step/start')).toHaveLength(9)
    expect(events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'stop-limit' } },
    })
  })

  it('20. cancel mid-stream keeps the streamed text as an interrupted message', async () => {
    const harness = agentHarness([
      { text: 'partial answer', hold: new Promise(() => {}) },
      { text: 'fine' },
    ])
    const prompt = harness.agent.send('P')
    await firstDelta(harness.notifications)
    harness.agent.cancel()
    expect(await prompt.result).toMatchObject({
      status: 'canceled',
      turn: 1,
      text: 'partial answer',
    })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A{interrupted} S-1 T-1(canceled)')
    expect(harness.session.residentEvents[4]!.data).toMatchObject({
      content: [{ type: 'text', text: 'partial answer' }],
      interrupted: true,
      stopReason: 'canceled',
    })
    await harness.agent.send('Q').result
    expect(harness.requestTexts(1)).toEqual(['P', 'assistant:partial answer', 'Q'])
  })

  it('21. cancel before tools run: every call gets an error result, pairing holds', async () => {
    const held = gate()
    const harness = agentHarness([{ toolCalls: [call('c1'), call('c2')] }], {
      tools: [echo],
      hooks: {
        'tool-pre': async (_event, next) => {
          await held.promise
          return next()
        },
      },
    })
    const prompt = harness.agent.send('P')
    await new Promise<void>((resolve) => {
      const unsubscribe = harness.session.subscribe((event) => {
        if (event.type === 'assistant/message') {
          unsubscribe()
          resolve()
        }
      })
    })
    harness.agent.cancel()
    held.open()
    expect(await prompt.result).toMatchObject({ status: 'canceled' })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TR(c1) TR(c2) S-1 T-1(canceled)')
    for (const event of harness.session.residentEvents.filter((e) => e.type === 'tool/result')) {
      expect(event.data).toMatchObject({ isError: true, error: { code: 'canceled' } })
    }
  })

  it('22a. cancel discards the outbox and the queue; their deliveries resolve discarded', async () => {
    const harness = agentHarness([{ text: 'partial', hold: new Promise(() => {}) }])
    const prompt = harness.agent.send('P')
    const queued = harness.agent.send('Q')
    await firstDelta(harness.notifications)
    const staged = harness.agent.inject(context('X'))
    const steering = harness.agent.steer('S')
    const cancellation = harness.agent.cancel()
    expect(cancellation.discarded.map((item) => [item.kind, textOf(item.data.content)])).toEqual([
      ['context', 'X'],
      ['steering', 'S'],
      ['prompt', 'Q'],
    ])
    for (const delivery of [queued, staged, steering])
      expect(await delivery.result).toEqual({ status: 'discarded', reason: 'canceled' })
    expect(await prompt.result).toMatchObject({ status: 'canceled' })
    await harness.agent.idle()
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A{interrupted} S-1 T-1(canceled)')
  })

  it('22b. with keepQueue the next prompt runs after the canceled turn', async () => {
    const harness = agentHarness([
      { text: 'partial', hold: new Promise(() => {}) },
      { text: 'second' },
    ])
    const prompt = harness.agent.send('P')
    const queued = harness.agent.send('Q')
    await firstDelta(harness.notifications)
    expect(harness.agent.cancel({ keepQueue: true }).discarded).toEqual([])
    expect(await prompt.result).toMatchObject({ status: 'canceled', turn: 1 })
    expect(await queued.result).toMatchObject({ status: 'completed', turn: 2, text: 'second' })
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A{interrupted} S-1 T-1(canceled) T+2 U(Q) S+1 A S-1 T-2(completed)',
    )
  })

  it('23. an error does not stall the queue', async () => {
    const harness = agentHarness([
      { error: { code: 'bad-request', message: 'nope' } },
      { text: 'ok' },
    ])
    const first = harness.agent.send('P1')
    const second = harness.agent.send('P2')
    expect(await first.result).toEqual({
      status: 'error',
      turn: 1,
      error: { code: 'bad-request', message: 'nope' },
    })
    expect(await second.result).toMatchObject({ status: 'completed', turn: 2 })
    expect(harness.notation()).toBe(
      'T+1 U(P1) S+1 H S-1 T-1(error) T+2 U(P2) S+1 A S-1 T-2(completed)',
    )
  })

  it('24. max tokens with tool calls: calls dropped, no TC, T-(max-tokens)', async () => {
    let ran = false
    const tool = toolWith('work', () => {
      ran = true
    })
    const harness = agentHarness(
      [{ text: 'cut', toolCalls: [call('c1', 'work', {})], stop: 'max-tokens' }],
      { tools: [tool] },
    )
    expect(await harness.agent.send('P').result).toMatchObject({
      status: 'max-tokens',
      turn: 1,
      text: 'cut',
    })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A S-1 T-1(max-tokens)')
    expect(harness.session.residentEvents[4]!.data).toMatchObject({
      content: [{ type: 'text', text: 'cut' }],
      stopReason: 'max-tokens',
    })
    expect(ran).toBe(false)
  })

  it('29. re-entrancy: a session listener that calls inject, steer and send loses nothing; seq order holds', async () => {
    const harness = agentHarness([{ text: 'one' }, { text: 'two' }, { text: 'three' }])
    const seen: number[] = []
    let later: Promise<unknown> | undefined
    harness.session.subscribe((event) => {
      seen.push(event.seq)
      if (
        event.type === 'step/start' &&
        (event.data as { turn: number; step: number }).turn === 1 &&
        (event.data as { step: number }).step === 1
      ) {
        harness.agent.inject(context('X'))
        harness.agent.steer('S')
      }
      if (event.type === 'assistant/message' && seen.length < 8)
        later = harness.agent.send('Q').result
    })
    await harness.agent.send('P').result
    expect(await later).toMatchObject({ status: 'completed', turn: 2 })
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A S-1 U(X) G(S) S+2 A S-2 T-1(completed) T+2 U(Q) S+1 A S-1 T-2(completed)',
    )
    expect(seen).toEqual(harness.session.residentEvents.map((e) => e.seq))
  })
})
