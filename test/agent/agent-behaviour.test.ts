/** The agent's surface beyond the numbered scenarios: retries, limits, queue options, lifecycle, inputs. */
import { describe, expect, it } from 'vitest'
import {
  type AgentNotification,
  createAgent,
  createSession,
  openLiveSession,
  type Provider,
  RudderError,
  StoreError,
  type UserMessageData,
} from '../../src/index.js'
import { scriptedProvider } from '../../src/testing.js'
import { agentHarness } from '../support/agent-harness.js'
import { echo, gate } from './tools.js'

const context = (text: string): UserMessageData => ({
  content: [{ type: 'text', text }],
  source: { kind: 'plugin', name: 'p' },
})
const ofType = <T extends AgentNotification['type']>(list: AgentNotification[], type: T) =>
  list.filter((n): n is Extract<AgentNotification, { type: T }> => n.type === type)
const retryable = { code: 'overloaded', message: 'try later', retryable: true }

describe('retries', () => {
  it('retries a retryable failure inside the same step, announcing each attempt', async () => {
    const harness = agentHarness([{ text: 'lost', error: retryable }, { text: 'ok' }])
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed', text: 'ok' })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A S-1 T-1(completed)')
    expect(
      ofType(harness.notifications, 'request/start').map((n) => `${n.attempt}/${n.maxAttempts}`),
    ).toEqual(['1/5', '2/5'])
    expect(ofType(harness.notifications, 'request/retry')).toEqual([
      {
        type: 'request/retry',
        turn: 1,
        step: 1,
        attempt: 2,
        maxAttempts: 5,
        delayMs: 0,
        provider: 'scripted',
        model: harness.provider.model,
        error: { code: 'overloaded', message: 'try later' },
      },
    ])
    expect(new Set(ofType(harness.notifications, 'assistant/delta').map((n) => n.attempt))).toEqual(
      new Set([1, 2]),
    )
    expect(harness.provider.requests[0]).toEqual(harness.provider.requests[1])
  })

  it('honours retry-after', async () => {
    const harness = agentHarness([{ error: { ...retryable, retryAfterMs: 7 } }, { text: 'ok' }], {
      retry: { baseDelayMs: 10_000 },
    })
    await harness.agent.send('P').result
    expect(ofType(harness.notifications, 'request/retry')[0]!.delayMs).toBe(7)
  })

  it('ends the turn with the error once retries are exhausted', async () => {
    const harness = agentHarness(
      [{ error: retryable }, { error: retryable }, { error: retryable }],
      {
        retry: { maxRetries: 2, baseDelayMs: 0 },
      },
    )
    expect(await harness.agent.send('P').result).toEqual({
      status: 'error',
      turn: 1,
      error: { code: 'overloaded', message: 'try later' },
    })
    expect(harness.provider.requests).toHaveLength(3)
    expect(harness.notation()).toBe('T+1 U(P) S+1 H S-1 T-1(error)')
  })

  it('does not retry a non-retryable failure, and keeps streamed text as interrupted', async () => {
    const harness = agentHarness([{ text: 'half', error: { code: 'bad', message: 'broken' } }])
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'error', text: 'half' })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A{interrupted} S-1 T-1(error)')
    expect(harness.session.residentEvents[4]!.data).toMatchObject({
      stopReason: 'error',
      interrupted: true,
    })
  })

  it('treats a provider that throws as a failure with a clear message', async () => {
    const provider: Provider = {
      id: 'broken',
      model: 'm',
      // biome-ignore lint/correctness/useYield: a provider that fails before yielding anything
      async *stream() {
        throw new Error('socket closed')
      },
    }
    const session = createSession({ checkInvariants: true })
    const agent = createAgent({ session, provider })
    const result = await agent.send('P').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'provider-threw' } })
    expect(result.status === 'error' && result.error?.message).toContain('socket closed')
    await agent.dispose()
  })

  it('says which request ran past the end of the script', async () => {
    const harness = agentHarness([{ text: 'one' }])
    await harness.agent.send('P1').result
    const result = await harness.agent.send('P2').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'script-exhausted' } })
    expect(result.status === 'error' && result.error?.message).toContain('request #2')
  })
})

describe('limits and queue options', () => {
  it('ends a turn at maxSteps with step-limit', async () => {
    const loop = { toolCalls: [{ name: 'echo', args: { text: 'again' } }] }
    const harness = agentHarness([loop, loop, loop], { tools: [echo], maxSteps: 2 })
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'step-limit', turn: 1 })
    expect(harness.session.residentEvents.filter((e) => e.type === 'step/start')).toHaveLength(2)
    expect(harness.provider.requests).toHaveLength(2)
  })

  it('wakeup: false waits until something else starts the agent, then runs in FIFO order', async () => {
    const harness = agentHarness([{ text: 'a' }, { text: 'b' }])
    const sleeper = harness.agent.send('P', { wakeup: false })
    expect(harness.agent.status).toBe('idle')
    await harness.agent.idle()
    expect(harness.session.residentEvents).toEqual([])
    expect(harness.agent.pending().queued.map((item) => item.id)).toEqual([sleeper.id])
    const waker = harness.agent.send('Q')
    expect(await sleeper.result).toMatchObject({ turn: 1, text: 'a' })
    expect(await waker.result).toMatchObject({ turn: 2, text: 'b' })
  })

  it('send with target next-step is steer', async () => {
    const held = gate()
    const harness = agentHarness([{ text: 'x', hold: held.promise }, { text: 'y' }])
    const prompt = harness.agent.send('P')
    await new Promise<void>((resolve) =>
      harness.agent.subscribe((n) => n.type === 'assistant/delta' && resolve()),
    )
    harness.agent.send('S', { target: 'next-step' })
    held.open()
    await prompt.result
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A S-1 G(S) S+2 A S-2 T-1(completed)')
  })

  it('a steer or inject in the same tick as a waking send joins that prompt’s turn', async () => {
    const harness = agentHarness([{ text: 'ok' }])
    const prompt = harness.agent.send('P')
    expect(harness.agent.status).toBe('admitting')
    harness.agent.steer('S')
    harness.agent.inject(context('X'))
    expect(harness.agent.pending().staged.map((item) => item.kind)).toEqual(['steering', 'context'])
    await prompt.result
    expect(harness.notation()).toBe('T+1 U(P) G(S) U(X) S+1 H A S-1 T-1(completed)')
  })
})

describe('continue', () => {
  it('continues after an error with the current projection and trigger continue', async () => {
    const harness = agentHarness([{ error: { code: 'bad', message: 'no' } }, { text: 'recovered' }])
    await harness.agent.send('P').result
    expect(await harness.agent.continue().result).toMatchObject({
      status: 'completed',
      turn: 2,
      text: 'recovered',
    })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H S-1 T-1(error) T+2 S+1 A S-1 T-2(completed)')
    expect(harness.session.residentEvents[6]!.data).toEqual({ turn: 2, trigger: 'continue' })
    expect(harness.requestTexts(1)).toEqual(['P'])
  })

  it('continues after max-tokens, and the request includes the cut-off text', async () => {
    const harness = agentHarness([{ text: 'long answ', stop: 'max-tokens' }, { text: 'er' }])
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'max-tokens' })
    await harness.agent.continue().result
    expect(harness.requestTexts(1)).toEqual(['P', 'assistant:long answ'])
  })
})

describe('lifecycle', () => {
  it('moves idle → admitting → running → idle and sees idle when a delivery resolves', async () => {
    const harness = agentHarness([{ text: 'ok' }])
    await harness.agent.send('P').result
    expect(harness.agent.status).toBe('idle')
    expect(ofType(harness.notifications, 'status/change').map((n) => n.status)).toEqual([
      'admitting',
      'running',
      'idle',
    ])
  })

  it('streams deltas that add up to the logged text', async () => {
    const harness = agentHarness([{ thinking: 'let me think', text: 'the final answer' }])
    await harness.agent.send('P').result
    const deltas = ofType(harness.notifications, 'assistant/delta')
    expect(
      deltas
        .filter((d) => d.kind === 'text')
        .map((d) => d.text)
        .join(''),
    ).toBe('the final answer')
    expect(deltas.filter((d) => d.kind === 'thinking').every((d) => d.block === 0)).toBe(true)
    expect(deltas.filter((d) => d.kind === 'text').every((d) => d.block === 1)).toBe(true)
    expect(harness.session.residentEvents[4]!.data).toMatchObject({
      content: [
        { type: 'thinking', text: 'let me think' },
        { type: 'text', text: 'the final answer' },
      ],
    })
  })

  it('logs request/header only when it changes', async () => {
    const session = createSession({ checkInvariants: true })
    const first = agentHarness([{ text: 'a' }, { text: 'b' }], { session, system: 'one' })
    await first.agent.send('P1').result
    await first.agent.send('P2').result
    await first.agent.dispose()
    const second = agentHarness([{ text: 'c' }], { session, system: 'two' })
    await second.agent.send('P3').result
    expect(second.notation()).toBe(
      'T+1 U(P1) S+1 H A S-1 T-1(completed) T+2 U(P2) S+1 A S-1 T-2(completed) T+3 U(P3) S+1 H A S-1 T-3(completed)',
    )
    expect(second.provider.requests[0]!.system).toBe('two')
  })

  it('dispose during a turn cancels it, discards the queue, and later calls throw', async () => {
    const harness = agentHarness([{ text: 'partial', hold: new Promise(() => {}) }])
    const prompt = harness.agent.send('P')
    const queued = harness.agent.send('Q')
    await new Promise<void>((resolve) => {
      const unsubscribe = harness.agent.subscribe((n) => {
        if (n.type === 'assistant/delta') {
          unsubscribe()
          resolve()
        }
      })
    })
    await harness.agent.dispose()
    expect(await prompt.result).toMatchObject({ status: 'canceled', turn: 1 })
    expect(await queued.result).toEqual({ status: 'discarded', reason: 'disposed' })
    expect(harness.session.residentEvents.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'canceled', cause: 'dispose' } },
    })
    expect(() => harness.agent.send('again')).toThrowError(
      expect.objectContaining({ code: 'DISPOSED' }),
    )
    expect(() => harness.agent.inject(context('x'))).toThrowError(RudderError)
  })

  it('cancel while idle with nothing pending does nothing', async () => {
    const harness = agentHarness([])
    expect(harness.agent.cancel()).toEqual({ discarded: [] })
    expect(harness.session.residentEvents).toEqual([])
  })

  it('cancel during admission discards the prompt and returns it for the editor', async () => {
    const held = gate()
    const harness = agentHarness([], {
      hooks: {
        'prompt-submit': async (_e, next) => {
          await held.promise
          return next()
        },
      },
    })
    const prompt = harness.agent.send('draft text')
    const { discarded } = harness.agent.cancel()
    expect(discarded.map((item) => item.data.content)).toEqual([
      [{ type: 'text', text: 'draft text' }],
    ])
    expect(await prompt.result).toEqual({ status: 'discarded', reason: 'canceled' })
    await harness.agent.idle()
    expect(harness.agent.status).toBe('idle')
    held.open()
    expect(harness.session.residentEvents).toEqual([])
  })

  it('a throwing prompt-submit listener blocks with its message and is reported', async () => {
    const harness = agentHarness([], {
      hooks: {
        'prompt-submit': () => {
          throw new Error('policy service down')
        },
      },
    })
    expect(await harness.agent.send('P').result).toEqual({
      status: 'blocked',
      reason: 'policy service down',
    })
    expect(harness.session.residentEvents).toEqual([])
    expect(harness.notifications).toContainEqual(
      expect.objectContaining({ type: 'listener/error', source: 'hook:prompt-submit' }),
    )
  })

  it('session-start context lands at once, before the first turn, with reason new', async () => {
    const reasons: string[] = []
    const harness = agentHarness([{ text: 'ok' }])
    harness.agent.on('session-start', ({ reason }) => {
      reasons.push(reason)
      harness.agent.inject(context('workspace'))
    })
    await harness.agent.send('P').result
    expect(reasons).toEqual(['new'])
    expect(harness.notation()).toBe('U(workspace) T+1 U(P) S+1 H A S-1 T-1(completed)')
  })

  it('session-start says resume for a session with history', async () => {
    const session = createSession({ checkInvariants: true })
    session.append('user/message', { id: 'm', content: [], source: { kind: 'plugin', name: 'x' } })
    const reasons: string[] = []
    const harness = agentHarness([], {
      session,
      hooks: { 'session-start': ({ reason }) => void reasons.push(reason) },
    })
    await harness.agent.dispose()
    expect(reasons).toEqual(['resume'])
  })

  it('reports a throwing session listener live without touching the log', async () => {
    const harness = agentHarness([{ text: 'ok' }])
    harness.session.subscribe(() => {
      throw new Error('observer broke')
    })
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed' })
    expect(ofType(harness.notifications, 'listener/error').length).toBe(
      harness.session.residentEvents.length,
    )
  })

  it('delivery outcomes are announced live', async () => {
    const harness = agentHarness([{ text: 'ok' }])
    const prompt = harness.agent.send('P')
    await prompt.result
    expect(ofType(harness.notifications, 'delivery/end')).toEqual([
      {
        type: 'delivery/end',
        id: prompt.id,
        kind: 'prompt',
        result: { status: 'completed', turn: 1, text: 'ok' },
      },
    ])
    expect(harness.session.residentEvents[1]!.data).toMatchObject({ id: prompt.id })
  })
})

describe('a store that cannot write', () => {
  it('stops the agent with a clear error, closes the turn in the log, and refuses later calls', async () => {
    let failFlush = false
    const session = openLiveSession({
      header: { id: 'failing', formatVersion: 1, createdAt: 0 },
      events: [],
      checkInvariants: true,
      sink: {
        write: () => {},
        flush: () =>
          failFlush
            ? Promise.reject(new StoreError('disk full while writing /tmp/x'))
            : Promise.resolve(),
        close: () => Promise.resolve(),
      },
    })
    const harness = agentHarness([{ text: 'never' }], { session })
    failFlush = true
    const result = await harness.agent.send('P').result
    expect(result).toMatchObject({
      status: 'error',
      error: { code: 'STORE', message: 'disk full while writing /tmp/x' },
    })
    // The request was never sent: the durability point before it failed.
    expect(harness.provider.requests).toHaveLength(0)
    expect(harness.notation()).toBe('T+1 U(P) S+1 H S-1 T-1(interrupted)')
    expect(() => harness.agent.send('again')).toThrowError(/stopped after an error \(disk full/)
    expect(harness.notifications).toContainEqual(
      expect.objectContaining({ type: 'listener/error', source: 'agent' }),
    )
  })
})

describe('caller mistakes throw at once and stage nothing', () => {
  const session = () => createSession({ checkInvariants: true })

  it('inject needs a non-user source', async () => {
    const harness = agentHarness([])
    expect(() =>
      harness.agent.inject({ content: [{ type: 'text', text: 'x' }] } as never),
    ).toThrowError(/source/)
    expect(() =>
      harness.agent.inject({ content: [{ type: 'text', text: 'x' }], source: { kind: 'user' } }),
    ).toThrowError(/send\(\) or steer\(\)/)
    expect(harness.session.residentEvents).toEqual([])
  })

  it('bad content, unknown send options and non-JSON meta are refused', async () => {
    const harness = agentHarness([])
    expect(() =>
      harness.agent.send({ content: 'text', source: { kind: 'user' } } as never),
    ).toThrowError(/content must be an array/)
    expect(() => harness.agent.send('x', { priority: 1 } as never)).toThrowError(
      /unknown option "priority"/,
    )
    expect(() =>
      harness.agent.inject({ ...context('x'), meta: { when: new Date() } as never }),
    ).toThrowError(/meta.when is a Date/)
    expect(harness.agent.pending()).toEqual({ queued: [], staged: [] })
  })

  it('copies input so later mutation changes nothing', async () => {
    const harness = agentHarness([{ text: 'ok' }])
    const data = {
      content: [{ type: 'text' as const, text: 'before' }],
      source: { kind: 'plugin', name: 'p' },
    }
    harness.agent.inject(data)
    data.content[0]!.text = 'after'
    expect(harness.notation()).toBe('U(before)')
  })

  it('createAgent refuses a session that ends inside a turn', () => {
    const s = session()
    s.append('turn/start', { turn: 1, trigger: 'prompt' })
    expect(() => createAgent({ session: s, provider: scriptedProvider([]) })).toThrowError(
      expect.objectContaining({ code: 'WRONG_STATE' }),
    )
  })

  it('createAgent refuses duplicate tool names and a missing model', () => {
    expect(() =>
      createAgent({ session: session(), provider: scriptedProvider([]), tools: [echo, echo] }),
    ).toThrowError(/two tools are named "echo"/)
    const provider: Provider = { id: 'bare', stream: scriptedProvider([]).stream }
    expect(() => createAgent({ session: session(), provider })).toThrowError(/no model/)
  })
})
