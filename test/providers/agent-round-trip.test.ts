/**
 * Each adapter under the real agent: a tool round trip, and retries announced by the agent,
 * through the local wire server. Every wire request is checked against the projection of the
 * log at its step (docs/spec.md §3.3 rule 4), converted by the adapter.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../src/agent/index.js'
import type { AgentNotification } from '../../src/agent/notifications.js'
import {
  checkLog,
  createSession,
  type Message,
  project,
  type Session,
  type SessionEvent,
} from '../../src/core/index.js'
import { anthropic } from '../../src/providers/anthropic/index.js'
import { toMessagesRequest } from '../../src/providers/anthropic/request.js'
import { openaiCompatible } from '../../src/providers/openai-compatible/index.js'
import { toChatMessages } from '../../src/providers/openai-compatible/request.js'
import type { Provider } from '../../src/providers/provider.js'
import { replayProvider } from '../../src/providers/replay/index.js'
import { defineTool } from '../../src/tools/define-tool.js'
import { notation } from '../support/agent-harness.js'
import { fixture, jsonFixture, startWireServer, type WireServer } from './support/wire-server.js'

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

const tools = [
  defineTool({
    name: 'tide_table',
    description: 'High and low water for a port',
    parameters: z.object({ port: z.string(), day: z.number().int().optional() }),
    execute: ({ port }) => `High water at ${port}: 12:04`,
  }),
  defineTool({
    name: 'wind_forecast',
    description: 'Wind for the coming hours',
    parameters: z.object({ hours: z.number().int() }),
    execute: ({ hours }) => `SW 4 for ${hours} hours`,
  }),
]

function start(provider: Provider, agentTools = tools) {
  const session = createSession({ checkInvariants: true })
  const notifications: AgentNotification[] = []
  const agent = createAgent({
    session,
    provider,
    system: SYSTEM,
    tools: agentTools,
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
  })
  agent.subscribe((notification) => notifications.push(notification))
  disposals.push(() => agent.dispose())
  return { session, agent, notifications }
}

/** The projection at each `step/start`, in order: what each request must have carried. */
function projectionsAtSteps(session: Session): Message[][] {
  const events: readonly SessionEvent[] = session.residentEvents
  return events.flatMap((event, index) =>
    event.type === 'step/start' ? [[...project(events.slice(0, index + 1))]] : [],
  )
}

const openai = () =>
  openaiCompatible({ baseURL: `${server.origin}/v1`, apiKey: 'sk-test', model: 'gpt-4.1' })
const claude = () =>
  anthropic({ baseURL: server.origin, apiKey: 'sk-ant-test', model: 'claude-sonnet-5-5' })

describe('openaiCompatible under the agent', () => {
  it('runs a parallel tool round trip; every wire request is the projection at its step', async () => {
    server.reply(
      { kind: 'sse', text: fixture('openai/tool-calls-parallel.sse') },
      { kind: 'sse', text: fixture('openai/text.sse') },
    )
    const { session, agent } = start(openai())
    const result = await agent.send('Can we leave Brest on day 3?').result
    expect(result).toMatchObject({ status: 'completed', text: 'The tide turns at noon.' })
    expect(checkLog(session.residentEvents)).toEqual([])
    expect(notation(session.residentEvents)).toMatch(
      /^T\+1 U\(Can we leave Brest on day 3\?\) S\+1 H A (TC\(\w+\) |TR\(\w+\) ){4}S-1 S\+2 A S-2 T-1\(completed\)$/,
    )
    const results = session.residentEvents.filter((event) => event.type === 'tool/result')
    expect(results.map((event) => event.data)).toMatchObject([
      { callId: 'call_harbor', content: [{ type: 'text', text: 'High water at Brest: 12:04' }] },
      { callId: 'call_wind', content: [{ type: 'text', text: 'SW 4 for 12 hours' }] },
    ])

    const projections = projectionsAtSteps(session)
    expect(server.requests).toHaveLength(2)
    server.requests.forEach((request, index) => {
      const expected = toChatMessages(
        { model: 'gpt-4.1', system: SYSTEM, messages: projections[index]!, tools: [], params: {} },
        { maxTokensField: 'max_tokens', sendReasoning: false },
      )
      expect(request.body.messages).toEqual(JSON.parse(JSON.stringify(expected)))
    })
    expect(server.requests[1]?.body.messages).toMatchObject([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Can we leave Brest on day 3?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_harbor',
            function: { name: 'tide_table', arguments: '{"port":"Brest","day":3}' },
          },
          { id: 'call_wind', function: { name: 'wind_forecast', arguments: '{"hours":12}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_harbor', content: 'High water at Brest: 12:04' },
      { role: 'tool', tool_call_id: 'call_wind', content: 'SW 4 for 12 hours' },
    ])
  })

  it('429 with retry-after, then success: the agent retries once and announces it', async () => {
    server.reply(
      {
        kind: 'json',
        status: 429,
        body: jsonFixture('openai/rate-limit-429.json'),
        headers: { 'retry-after': '0' },
      },
      { kind: 'sse', text: fixture('openai/text.sse') },
    )
    const { session, agent, notifications } = start(openai())
    const result = await agent.send('Tide?').result
    expect(result).toMatchObject({ status: 'completed', text: 'The tide turns at noon.' })
    expect(notifications.filter((n) => n.type === 'request/retry')).toEqual([
      expect.objectContaining({
        attempt: 2,
        delayMs: 0,
        error: expect.objectContaining({ code: 'rate_limit_exceeded' }),
      }),
    ])
    expect(server.requests).toHaveLength(2)
    expect(checkLog(session.residentEvents)).toEqual([])
  })

  it('500, then success', async () => {
    server.reply(
      { kind: 'json', status: 500, body: jsonFixture('openai/server-error-500.json') },
      { kind: 'sse', text: fixture('openai/text.sse') },
    )
    const { agent, notifications } = start(openai())
    expect(await agent.send('Tide?').result).toMatchObject({ status: 'completed' })
    expect(notifications.filter((n) => n.type === 'request/retry')).toHaveLength(1)
    expect(server.requests).toHaveLength(2)
  })
})

describe('anthropic under the agent', () => {
  it('runs a parallel tool round trip; tool results go back as tool_result blocks of one user message', async () => {
    server.reply(
      { kind: 'sse', text: fixture('anthropic/tool-use-parallel.sse') },
      { kind: 'sse', text: fixture('anthropic/text.sse') },
    )
    const { session, agent } = start(claude())
    const result = await agent.send('Can we leave Brest on day 3?').result
    expect(result).toMatchObject({ status: 'completed', text: 'The tide turns at noon.' })
    expect(checkLog(session.residentEvents)).toEqual([])

    const projections = projectionsAtSteps(session)
    expect(server.requests).toHaveLength(2)
    server.requests.forEach((request, index) => {
      const expected = toMessagesRequest(
        {
          model: 'claude-sonnet-5-5',
          system: SYSTEM,
          messages: projections[index]!,
          tools: [],
          params: {},
        },
        64_000,
      )
      expect(request.body.messages).toEqual(JSON.parse(JSON.stringify(expected.messages)))
      expect(request.body.system).toEqual(JSON.parse(JSON.stringify(expected.system)))
    })
    expect(server.requests[1]?.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Can we leave Brest on day 3?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          {
            type: 'tool_use',
            id: 'toolu_01Tide',
            name: 'tide_table',
            input: { port: 'Brest', day: 3 },
          },
          { type: 'tool_use', id: 'toolu_01Wind', name: 'wind_forecast', input: { hours: 12 } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01Tide',
            content: [{ type: 'text', text: 'High water at Brest: 12:04' }],
          },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01Wind',
            content: [{ type: 'text', text: 'SW 4 for 12 hours' }],
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ])
  })

  it('an overloaded_error mid-stream, then success: retried by the agent, one assistant message logged', async () => {
    server.reply(
      { kind: 'sse', text: fixture('anthropic/overloaded-event.sse') },
      { kind: 'sse', text: fixture('anthropic/text.sse') },
    )
    const { session, agent, notifications } = start(claude())
    expect(await agent.send('Tide?').result).toMatchObject({
      status: 'completed',
      text: 'The tide turns at noon.',
    })
    expect(notifications.filter((n) => n.type === 'request/retry')).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: 'overloaded_error' }) }),
    ])
    expect(
      session.residentEvents.filter((event) => event.type === 'assistant/message'),
    ).toHaveLength(1)
  })
})

describe('replayProvider under the agent', () => {
  async function recordedRun(): Promise<readonly SessionEvent[]> {
    server.reply(
      { kind: 'sse', text: fixture('openai/tool-calls-parallel.sse') },
      { kind: 'sse', text: fixture('openai/text.sse') },
    )
    const { session, agent } = start(openai())
    await agent.send('Can we leave Brest on day 3?').result
    return session.residentEvents
  }

  it('reproduces a recorded session without a server: same log shape, same answer', async () => {
    const recorded = await recordedRun()
    const { session, agent } = start(replayProvider(recorded))
    const result = await agent.send('Can we leave Brest on day 3?').result
    expect(result).toMatchObject({ status: 'completed', text: 'The tide turns at noon.' })
    expect(checkLog(session.residentEvents)).toEqual([])
    expect(project(session.residentEvents)).toEqual(project(recorded))
  })

  it('ends the turn with a clear error where a tool behaves differently than recorded', async () => {
    const recorded = await recordedRun()
    const changed = [
      defineTool({
        name: 'tide_table',
        description: 'High and low water for a port',
        parameters: z.object({ port: z.string(), day: z.number().int().optional() }),
        execute: ({ port }) => `High water at ${port}: 12:34`,
      }),
      tools[1]!,
    ]
    const { session, agent } = start(replayProvider(recorded), changed)
    const result = await agent.send('Can we leave Brest on day 3?').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'replay-diverged' } })
    expect(result.status === 'error' && result.error?.message).toContain(
      'message 3 (the result of call call_harbor (tide_table)) differs',
    )
    expect(checkLog(session.residentEvents)).toEqual([])
  })
})
