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
    const h = agentHarness([{ text: 'lost', error: retryable }, { text: 'ok' }])
    expect(await h.agent.send('P').result).toMatchObject({ status: 'completed', text: 'ok' })
    expect(h.notation()).toBe('T+1 U(P) S+1 H A S-1 T-1(completed)')
    expect(
      ofType(h.notifications, 'request/start').map((n) => `${n.attempt}/${n.maxAttempts}`),
    ).toEqual(['1/5', '2/5'])
    expect(ofType(h.notifications, 'request/retry')).toEqual([
      {
        type: 'request/retry',
        turn: 1,
        step: 1,
        attempt: 2,
        maxAttempts: 5,
        delayMs: 0,
        provider: 'scripted',
        model: h.provider.model,
        error: { code: 'overloaded', message: 'try later' },
      },
    ])
    expect(new Set(ofType(h.notifications, 'assistant/delta').map((n) => n.attempt))).toEqual(
      new Set([1, 2]),
    )
    expect(h.provider.requests[0]).toEqual(h.provider.requests[1])
  })

  it('honours retry-after', async () => {
    const h = agentHarness([{ error: { ...retryable, retryAfterMs: 7 } }, { text: 'ok' }], {
      retry: { baseDelayMs: 10_000 },
    })
    await h.agent.send('P').result
    expect(ofType(h.notifications, 'request/retry')[0]!.delayMs).toBe(7)
  })

  it('ends the turn with the error once retries are exhausted', async () => {
    const h = agentHarness([{ error: retryable }, { error: retryable }, { error: retryable }], {
      retry: { maxRetries: 2, baseDelayMs: 0 },
    })
    expect(await h.agent.send('P').result).toEqual({
      status: 'error',
      turn: 1,
      error: { code: 'overloaded', message: 'try later' },
    })
    expect(h.provider.requests).toHaveLength(3)
    expect(h.notation()).toBe('T+1 U(P) S+1 H S-1 T-1(error)')
  })

  it('does not retry a non-retryable failure, and keeps streamed text as interrupted', async () => {
    const h = agentHarness([{ text: 'half', error: { code: 'bad', message: 'broken' } }])
    expect(await h.agent.send('P').result).toMatchObject({ status: 'error', text: 'half' })
    expect(h.notation()).toBe('T+1 U(P) S+1 H A{interrupted} S-1 T-1(error)')
    expect(h.session.events[4]!.data).toMatchObject({ stopReason: 'error', interrupted: true })
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
    const h = agentHarness([{ text: 'one' }])
    await h.agent.send('P1').result
    const result = await h.agent.send('P2').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'script-exhausted' } })
    expect(result.status === 'error' && result.error?.message).toContain('request #2')
  })
})

describe('limits and queue options', () => {
  it('ends a turn at maxSteps with step-limit', async () => {
    const loop = { toolCalls: [{ name: 'echo', args: { text: 'again' } }] }
    const h = agentHarness([loop, loop, loop], { tools: [echo], maxSteps: 2 })
    expect(await h.agent.send('P').result).toMatchObject({ status: 'step-limit', turn: 1 })
    expect(h.session.events.filter((e) => e.type === 'step/start')).toHaveLength(2)
    expect(h.provider.requests).toHaveLength(2)
  })

  it('wakeup: false waits until something else starts the agent, then runs in FIFO order', async () => {
    const h = agentHarness([{ text: 'a' }, { text: 'b' }])
    const sleeper = h.agent.send('P', { wakeup: false })
    expect(h.agent.status).toBe('idle')
    await h.agent.idle()
    expect(h.session.events).toEqual([])
    expect(h.agent.pending().queued.map((item) => item.id)).toEqual([sleeper.id])
    const waker = h.agent.send('Q')
    expect(await sleeper.result).toMatchObject({ turn: 1, text: 'a' })
    expect(await waker.result).toMatchObject({ turn: 2, text: 'b' })
  })

  it('send with target next-step is steer', async () => {
    const held = gate()
    const h = agentHarness([{ text: 'x', hold: held.promise }, { text: 'y' }])
    const prompt = h.agent.send('P')
    await new Promise<void>((resolve) =>
      h.agent.subscribe((n) => n.type === 'assistant/delta' && resolve()),
    )
    h.agent.send('S', { target: 'next-step' })
    held.open()
    await prompt.result
    expect(h.notation()).toBe('T+1 U(P) S+1 H A S-1 G(S) S+2 A S-2 T-1(completed)')
  })

  it('a steer or inject in the same tick as a waking send joins that prompt’s turn', async () => {
    const h = agentHarness([{ text: 'ok' }])
    const prompt = h.agent.send('P')
    expect(h.agent.status).toBe('admitting')
    h.agent.steer('S')
    h.agent.inject(context('X'))
    expect(h.agent.pending().staged.map((item) => item.kind)).toEqual(['steering', 'context'])
    await prompt.result
    expect(h.notation()).toBe('T+1 U(P) G(S) U(X) S+1 H A S-1 T-1(completed)')
  })
})

describe('continue', () => {
  it('continues after an error with the current projection and trigger continue', async () => {
    const h = agentHarness([{ error: { code: 'bad', message: 'no' } }, { text: 'recovered' }])
    await h.agent.send('P').result
    expect(await h.agent.continue().result).toMatchObject({
      status: 'completed',
      turn: 2,
      text: 'recovered',
    })
    expect(h.notation()).toBe('T+1 U(P) S+1 H S-1 T-1(error) T+2 S+1 A S-1 T-2(completed)')
    expect(h.session.events[6]!.data).toEqual({ turn: 2, trigger: 'continue' })
    expect(h.requestTexts(1)).toEqual(['P'])
  })

  it('continues after max-tokens, and the request includes the cut-off text', async () => {
    const h = agentHarness([{ text: 'long answ', stop: 'max-tokens' }, { text: 'er' }])
    expect(await h.agent.send('P').result).toMatchObject({ status: 'max-tokens' })
    await h.agent.continue().result
    expect(h.requestTexts(1)).toEqual(['P', 'assistant:long answ'])
  })
})

describe('lifecycle', () => {
  it('moves idle → admitting → running → idle and sees idle when a delivery resolves', async () => {
    const h = agentHarness([{ text: 'ok' }])
    await h.agent.send('P').result
    expect(h.agent.status).toBe('idle')
    expect(ofType(h.notifications, 'status/change').map((n) => n.status)).toEqual([
      'admitting',
      'running',
      'idle',
    ])
  })

  it('streams deltas that add up to the logged text', async () => {
    const h = agentHarness([{ thinking: 'let me think', text: 'the final answer' }])
    await h.agent.send('P').result
    const deltas = ofType(h.notifications, 'assistant/delta')
    expect(
      deltas
        .filter((d) => d.kind === 'text')
        .map((d) => d.text)
        .join(''),
    ).toBe('the final answer')
    expect(deltas.filter((d) => d.kind === 'thinking').every((d) => d.block === 0)).toBe(true)
    expect(deltas.filter((d) => d.kind === 'text').every((d) => d.block === 1)).toBe(true)
    expect(h.session.events[4]!.data).toMatchObject({
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
    const h = agentHarness([{ text: 'partial', hold: new Promise(() => {}) }])
    const prompt = h.agent.send('P')
    const queued = h.agent.send('Q')
    await new Promise<void>((resolve) => {
      const unsubscribe = h.agent.subscribe((n) => {
        if (n.type === 'assistant/delta') {
          unsubscribe()
          resolve()
        }
      })
    })
    await h.agent.dispose()
    expect(await prompt.result).toMatchObject({ status: 'canceled', turn: 1 })
    expect(await queued.result).toEqual({ status: 'discarded', reason: 'disposed' })
    expect(h.session.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'canceled', cause: 'dispose' } },
    })
    expect(() => h.agent.send('again')).toThrowError(expect.objectContaining({ code: 'DISPOSED' }))
    expect(() => h.agent.inject(context('x'))).toThrowError(RudderError)
  })

  it('cancel while idle with nothing pending does nothing', async () => {
    const h = agentHarness([])
    expect(h.agent.cancel()).toEqual({ discarded: [] })
    expect(h.session.events).toEqual([])
  })

  it('cancel during admission discards the prompt and returns it for the editor', async () => {
    const held = gate()
    const h = agentHarness([], {
      hooks: {
        'prompt-submit': async (_e, next) => {
          await held.promise
          return next()
        },
      },
    })
    const prompt = h.agent.send('draft text')
    const { discarded } = h.agent.cancel()
    expect(discarded.map((item) => item.data.content)).toEqual([
      [{ type: 'text', text: 'draft text' }],
    ])
    expect(await prompt.result).toEqual({ status: 'discarded', reason: 'canceled' })
    await h.agent.idle()
    expect(h.agent.status).toBe('idle')
    held.open()
    expect(h.session.events).toEqual([])
  })

  it('a throwing prompt-submit listener blocks with its message and is reported', async () => {
    const h = agentHarness([], {
      hooks: {
        'prompt-submit': () => {
          throw new Error('policy service down')
        },
      },
    })
    expect(await h.agent.send('P').result).toEqual({
      status: 'blocked',
      reason: 'policy service down',
    })
    expect(h.session.events).toEqual([])
    expect(h.notifications).toContainEqual(
      expect.objectContaining({ type: 'listener/error', source: 'hook:prompt-submit' }),
    )
  })

  it('session-start context lands at once, before the first turn, with reason new', async () => {
    const reasons: string[] = []
    const h = agentHarness([{ text: 'ok' }])
    h.agent.on('session-start', ({ reason }) => {
      reasons.push(reason)
      h.agent.inject(context('workspace'))
    })
    await h.agent.send('P').result
    expect(reasons).toEqual(['new'])
    expect(h.notation()).toBe('U(workspace) T+1 U(P) S+1 H A S-1 T-1(completed)')
  })

  it('session-start says resume for a session with history', async () => {
    const session = createSession({ checkInvariants: true })
    session.append('user/message', { id: 'm', content: [], source: { kind: 'plugin', name: 'x' } })
    const reasons: string[] = []
    const h = agentHarness([], {
      session,
      hooks: { 'session-start': ({ reason }) => void reasons.push(reason) },
    })
    await h.agent.dispose()
    expect(reasons).toEqual(['resume'])
  })

  it('reports a throwing session listener live without touching the log', async () => {
    const h = agentHarness([{ text: 'ok' }])
    h.session.subscribe(() => {
      throw new Error('observer broke')
    })
    expect(await h.agent.send('P').result).toMatchObject({ status: 'completed' })
    expect(ofType(h.notifications, 'listener/error').length).toBe(h.session.events.length)
  })

  it('delivery outcomes are announced live', async () => {
    const h = agentHarness([{ text: 'ok' }])
    const prompt = h.agent.send('P')
    await prompt.result
    expect(ofType(h.notifications, 'delivery/end')).toEqual([
      {
        type: 'delivery/end',
        id: prompt.id,
        kind: 'prompt',
        result: { status: 'completed', turn: 1, text: 'ok' },
      },
    ])
    expect(h.session.events[1]!.data).toMatchObject({ id: prompt.id })
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
    const h = agentHarness([{ text: 'never' }], { session })
    failFlush = true
    const result = await h.agent.send('P').result
    expect(result).toMatchObject({
      status: 'error',
      error: { code: 'STORE', message: 'disk full while writing /tmp/x' },
    })
    // The request was never sent: the durability point before it failed.
    expect(h.provider.requests).toHaveLength(0)
    expect(h.notation()).toBe('T+1 U(P) S+1 H S-1 T-1(interrupted)')
    expect(() => h.agent.send('again')).toThrowError(/stopped after an error \(disk full/)
    expect(h.notifications).toContainEqual(
      expect.objectContaining({ type: 'listener/error', source: 'agent' }),
    )
  })
})

describe('caller mistakes throw at once and stage nothing', () => {
  const session = () => createSession({ checkInvariants: true })

  it('inject needs a non-user source', async () => {
    const h = agentHarness([])
    expect(() => h.agent.inject({ content: [{ type: 'text', text: 'x' }] } as never)).toThrowError(
      /source/,
    )
    expect(() =>
      h.agent.inject({ content: [{ type: 'text', text: 'x' }], source: { kind: 'user' } }),
    ).toThrowError(/send\(\) or steer\(\)/)
    expect(h.session.events).toEqual([])
  })

  it('bad content, unknown send options and non-JSON meta are refused', async () => {
    const h = agentHarness([])
    expect(() => h.agent.send({ content: 'text', source: { kind: 'user' } } as never)).toThrowError(
      /content must be an array/,
    )
    expect(() => h.agent.send('x', { priority: 1 } as never)).toThrowError(
      /unknown option "priority"/,
    )
    expect(() =>
      h.agent.inject({ ...context('x'), meta: { when: new Date() } as never }),
    ).toThrowError(/meta.when is a Date/)
    expect(h.agent.pending()).toEqual({ queued: [], staged: [] })
  })

  it('copies input so later mutation changes nothing', async () => {
    const h = agentHarness([{ text: 'ok' }])
    const data = {
      content: [{ type: 'text' as const, text: 'before' }],
      source: { kind: 'plugin', name: 'p' },
    }
    h.agent.inject(data)
    data.content[0]!.text = 'after'
    expect(h.notation()).toBe('U(before)')
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
