/**
 * Misbehaving servers and real stream shapes under the real agent, through the real SDKs: a
 * stalled stream is retried and then ends the turn, a refused connection is retried with each
 * attempt announced, an endless stream is cut and the turn closed, a stream without a finish
 * reason still runs its tool. Every test ends with a clean log, and every wire request is the
 * projection of the log at its step.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../src/agent/index.js'
import type { AgentNotification } from '../../src/agent/notifications.js'
import {
  checkLog,
  createSession,
  project,
  type Session,
  type SessionEvent,
} from '../../src/core/index.js'
import { anthropic } from '../../src/providers/anthropic/index.js'
import { openaiCompatible } from '../../src/providers/openai-compatible/index.js'
import { toChatMessages } from '../../src/providers/openai-compatible/request.js'
import type { Provider } from '../../src/providers/provider.js'
import type { StreamLimitOptions } from '../../src/providers/stream-guard.js'
import { defineTool } from '../../src/tools/define-tool.js'
import { notation } from '../support/agent-harness.js'
import { fixture, startWireServer, type WireServer } from './support/wire-server.js'

let server: WireServer
beforeAll(async () => {
  server = await startWireServer()
})
afterAll(() => server.close())

const disposals: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const dispose of disposals.splice(0)) await dispose()
  server.requests.length = 0
})

const SYSTEM = 'You plan sailing trips.'
const tideTable = defineTool({
  name: 'tide_table',
  description: 'High and low water for a port',
  parameters: z.object({ port: z.string() }),
  execute: ({ port }) => `High water at ${port}: 12:04`,
})

function start(provider: Provider, maxRetries = 4) {
  const session = createSession({ checkInvariants: true })
  const notifications: AgentNotification[] = []
  const agent = createAgent({
    session,
    provider,
    system: SYSTEM,
    tools: [tideTable],
    retry: { maxRetries, baseDelayMs: 0, maxDelayMs: 0 },
  })
  agent.subscribe((notification) => notifications.push(notification))
  disposals.push(() => agent.dispose())
  return { session, agent, notifications }
}

const openai = (limits: StreamLimitOptions = {}, baseURL = `${server.origin}/v1`) =>
  openaiCompatible({ baseURL, apiKey: 'sk-test', model: 'gpt-4.1', ...limits })

/** Each wire request equals the projection of the log at the `step/start` it was sent for. */
function expectRequestsAreProjections(session: Session, notifications: AgentNotification[]) {
  const events: readonly SessionEvent[] = session.residentEvents
  const starts = notifications.filter((n) => n.type === 'request/start')
  expect(server.requests).toHaveLength(starts.length)
  starts.forEach((startNotification, index) => {
    const at = events.findIndex(
      (event) =>
        event.type === 'step/start' &&
        (event.data as { turn: number; step: number }).step === startNotification.step &&
        (event.data as { turn: number }).turn === startNotification.turn,
    )
    const expected = toChatMessages(
      {
        model: 'gpt-4.1',
        system: SYSTEM,
        messages: [...project(events.slice(0, at + 1))],
        tools: [],
        params: {},
      },
      { maxTokensField: 'max_tokens', sendReasoning: false },
    )
    expect(server.requests[index]?.body.messages).toEqual(JSON.parse(JSON.stringify(expected)))
  })
}

const retries = (notifications: AgentNotification[]) =>
  notifications.flatMap((n) =>
    n.type === 'request/retry'
      ? [`${n.provider}/${n.model} attempt ${n.attempt}/${n.maxAttempts}: ${n.error.code}`]
      : [],
  )

describe('a stalled stream under the agent', () => {
  it('is retried, and once the retries are spent the turn ends with the idle-timeout error', async () => {
    const stall = {
      kind: 'stall',
      text: ': OPENROUTER PROCESSING\n\n',
      keepAlive: ': OPENROUTER PROCESSING\n\n',
      everyMs: 20,
    } as const
    server.reply(stall, stall)
    const { session, agent, notifications } = start(openai({ idleTimeoutMs: 200 }), 1)
    const result = await agent.send('Tide?').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'idle-timeout' } })
    expect(result.status === 'error' && result.error?.message).toContain(
      `the response from ${server.origin}/v1 (base URL from the baseURL option) stalled`,
    )
    expect(retries(notifications)).toEqual(['openai/gpt-4.1 attempt 2/2: idle-timeout'])
    expect(notation(session.residentEvents)).toBe('T+1 U(Tide?) S+1 H S-1 T-1(error)')
    expect(checkLog(session.residentEvents)).toEqual([])
    expectRequestsAreProjections(session, notifications)
  })

  it('a stall, then a good answer: the retry completes the turn', async () => {
    server.reply(
      { kind: 'stall', text: fixture('openai/cut-off.sse'), keepAlive: ': ping\n\n', everyMs: 20 },
      { kind: 'sse', text: fixture('openai/text.sse') },
    )
    const { session, agent, notifications } = start(openai({ idleTimeoutMs: 200 }))
    expect(await agent.send('Tide?').result).toMatchObject({
      status: 'completed',
      text: 'The tide turns at noon.',
    })
    expect(retries(notifications)).toEqual(['openai/gpt-4.1 attempt 2/5: idle-timeout'])
    // The stalled attempt's "Still talking" was void: one assistant message, the good one.
    expect(notation(session.residentEvents)).toBe('T+1 U(Tide?) S+1 H A S-1 T-1(completed)')
    expect(checkLog(session.residentEvents)).toEqual([])
    expectRequestsAreProjections(session, notifications)
  })

  it('anthropic: pings do not keep a stalled stream alive', async () => {
    const ping = 'event: ping\ndata: {"type": "ping"}\n\n'
    server.reply({ kind: 'stall', text: ping, keepAlive: ping, everyMs: 20 })
    const provider = anthropic({
      baseURL: server.origin,
      apiKey: 'sk-ant-test',
      model: 'claude-sonnet-5-5',
      idleTimeoutMs: 200,
    })
    const { session, agent } = start(provider, 0)
    expect(await agent.send('Tide?').result).toMatchObject({
      status: 'error',
      error: { code: 'idle-timeout' },
    })
    expect(checkLog(session.residentEvents)).toEqual([])
  })
})

describe('a refused connection under the agent', () => {
  it('is retried, each attempt announced with its number of the maximum, then a clear error', async () => {
    const gone = await startWireServer()
    await gone.close()
    const { session, agent, notifications } = start(openai({}, `${gone.origin}/v1`), 2)
    const result = await agent.send('Tide?').result
    expect(retries(notifications)).toEqual([
      'openai/gpt-4.1 attempt 2/3: connection',
      'openai/gpt-4.1 attempt 3/3: connection',
    ])
    expect(notifications.flatMap((n) => (n.type === 'request/start' ? [n.attempt] : []))).toEqual([
      1, 2, 3,
    ])
    expect(result).toEqual({
      status: 'error',
      turn: 1,
      error: {
        code: 'connection',
        message: `openai: cannot reach ${gone.origin}/v1 (base URL from the baseURL option): connection refused (ECONNREFUSED). Check that the server is running and the base URL is right; retrying may help.`,
      },
    })
    expect(checkLog(session.residentEvents)).toEqual([])
  })
})

describe('an endless stream under the agent', () => {
  it('is cut at the cap: the step ends with response-too-large, the text so far is kept, the turn closed', async () => {
    const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'and again ' } }] })}\n\n`
    server.reply({ kind: 'endless', event })
    const { session, agent, notifications } = start(openai({ maxResponseChars: 20_000 }))
    const result = await agent.send('Tide?').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'response-too-large' } })
    expect(result.status === 'error' && result.error?.message).toContain(
      'raise the provider setting maxResponseChars',
    )
    // Not retryable: a model that talks without end would most likely do it again.
    expect(retries(notifications)).toEqual([])
    expect(notation(session.residentEvents)).toBe(
      'T+1 U(Tide?) S+1 H A{interrupted} S-1 T-1(error)',
    )
    const message = session.residentEvents.find((e) => e.type === 'assistant/message')!
    expect(message.data).toMatchObject({ stopReason: 'error', interrupted: true })
    const text = (message.data as { content: { text: string }[] }).content[0]!.text
    expect(text.length).toBeLessThanOrEqual(20_000)
    expect(text.startsWith('and again and again')).toBe(true)
    expect(checkLog(session.residentEvents)).toEqual([])
    await server.requests[0]?.clientGone
  })
})

describe('real stream shapes under the agent', () => {
  it('a tool call in a stream without finish_reason (Snowflake Cortex, OpenRouter) runs, once', async () => {
    server.reply(
      { kind: 'sse', text: fixture('openai/no-finish-reason-tool-call.sse') },
      { kind: 'sse', text: fixture('openai/no-finish-reason-text.sse') },
    )
    const { session, agent, notifications } = start(openai())
    const result = await agent.send('When is high water in Brest?').result
    expect(result).toMatchObject({ status: 'completed', text: 'High water is at 12:04.' })
    expect(retries(notifications)).toEqual([])
    expect(notation(session.residentEvents)).toBe(
      'T+1 U(When is high water in Brest?) S+1 H A TC(toolu_vrtx_01Tide) TR(toolu_vrtx_01Tide) S-1 S+2 A S-2 T-1(completed)',
    )
    expect(session.residentEvents.find((e) => e.type === 'tool/result')?.data).toMatchObject({
      content: [{ type: 'text', text: 'High water at Brest: 12:04' }],
    })
    expect(checkLog(session.residentEvents)).toEqual([])
    expectRequestsAreProjections(session, notifications)
  })

  it('the usage beside an error object is kept on the interrupted message', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/usage-beside-error.sse') })
    const { session, agent } = start(openai(), 0)
    const result = await agent.send('Look around.').result
    expect(result).toMatchObject({ status: 'error', error: { code: '502' } })
    const message = session.residentEvents.find((e) => e.type === 'assistant/message')
    expect(message?.data).toMatchObject({
      content: [{ type: 'text', text: 'Let me look' }],
      stopReason: 'error',
      interrupted: true,
      usage: { inputTokens: 1840, outputTokens: 3 },
    })
    expect(checkLog(session.residentEvents)).toEqual([])
  })
})
