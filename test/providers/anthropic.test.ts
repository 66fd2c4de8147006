/**
 * The Anthropic adapter against a local server replaying Messages API wire streams (fixtures
 * written from Anthropic's streaming and error documentation).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Message, ToolSpec } from '../../src/core/index.js'
import { anthropic } from '../../src/providers/anthropic/index.js'
import type { StreamPart } from '../../src/providers/provider.js'
import { collect, requestOf, terminalOf } from './support/collect.js'
import { fixture, jsonFixture, startWireServer, type WireServer } from './support/wire-server.js'

let server: WireServer

beforeAll(async () => {
  server = await startWireServer()
})
afterAll(() => server.close())
afterEach(() => {
  server.requests.length = 0
  vi.unstubAllEnvs()
})

const tideTable: ToolSpec = {
  name: 'tide_table',
  description: 'High and low water for a port',
  parameters: { type: 'object', properties: { port: { type: 'string' } }, required: ['port'] },
}

function provider(options: Partial<Parameters<typeof anthropic>[0]> = {}) {
  return anthropic({
    baseURL: server.origin,
    apiKey: 'sk-ant-test',
    model: 'claude-sonnet-5-5',
    ...options,
  })
}

function firstEvents(path: string, count: number): string {
  return `${fixture(path).split('\n\n').slice(0, count).join('\n\n')}\n\n`
}

describe('anthropic: streaming responses', () => {
  it('streams plain text, then usage with cache reads and writes, then end', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/text.sse') })
    const parts = await collect(provider(), requestOf({ model: 'claude-sonnet-5-5' }))
    expect(parts).toEqual([
      { type: 'text-delta', text: 'The tide' },
      { type: 'text-delta', text: ' turns at noon.' },
      {
        type: 'usage',
        // input_tokens leaves out the cache: 14 + 2048 read + 310 written.
        usage: { inputTokens: 2372, outputTokens: 9, cacheReadTokens: 2048, cacheWriteTokens: 310 },
      },
      { type: 'end', stopReason: 'stop' },
    ])
    const [request] = server.requests
    expect(request?.path).toBe('/v1/messages')
    expect(request?.body).toMatchObject({ model: 'claude-sonnet-5-5', stream: true })
    // max_tokens is required: the model's output limit from the known-model table.
    expect(request?.body.max_tokens).toBe(128_000)
  })

  it('streams parallel tool calls with their input assembled from input_json_delta fragments', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/tool-use-parallel.sse') })
    const parts = await collect(provider(), requestOf({ tools: [tideTable] }))
    expect(parts.slice(0, 3)).toEqual([
      { type: 'text-delta', text: 'Checking both.' },
      {
        type: 'tool-call',
        id: 'toolu_01Tide',
        name: 'tide_table',
        args: { port: 'Brest', day: 3 },
      },
      { type: 'tool-call', id: 'toolu_01Wind', name: 'wind_forecast', args: { hours: 12 } },
    ])
    expect(terminalOf(parts)).toEqual({ type: 'end', stopReason: 'tool-calls' })
    expect(server.requests[0]?.body.tools).toEqual([
      {
        name: 'tide_table',
        description: 'High and low water for a port',
        input_schema: tideTable.parameters,
        // No system prompt: the cache breakpoint goes on the last tool.
        cache_control: { type: 'ephemeral' },
      },
    ])
  })

  it('streams thinking; the signature arrives as its own thinking-delta and closes the block; redacted thinking is kept', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/thinking.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts.slice(0, 5)).toEqual([
      { type: 'thinking-delta', text: 'Two ports,' },
      { type: 'thinking-delta', text: ' one table each.' },
      { type: 'thinking-delta', text: '', signature: 'ErUBCkYIBRgCIkCsig-one-opaque==' },
      {
        type: 'thinking-delta',
        text: '',
        signature: 'redacted_thinking:EmwKAhgBEgy3va-redacted-opaque',
      },
      { type: 'text-delta', text: 'Brest first.' },
    ])
    expect(terminalOf(parts)).toEqual({ type: 'end', stopReason: 'stop' })
  })

  it('maps stop_reason max_tokens to max-tokens', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/max-tokens.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Once upon a' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 4 } },
      { type: 'end', stopReason: 'max-tokens' },
    ])
  })
})

describe('anthropic: failures end the stream with one error part', () => {
  it('429 with retry-after: retryable with retryAfterMs, one request (SDK retries off)', async () => {
    server.reply({
      kind: 'json',
      status: 429,
      body: jsonFixture('anthropic/rate-limit-429.json'),
      headers: { 'retry-after': '7' },
    })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      expect.objectContaining({
        type: 'error',
        code: 'rate_limit_error',
        retryable: true,
        retryAfterMs: 7000,
      }),
    ])
    expect(server.requests).toHaveLength(1)
  })

  it('500: retryable', async () => {
    server.reply({
      kind: 'json',
      status: 500,
      body: jsonFixture('anthropic/server-error-500.json'),
    })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      expect.objectContaining({ type: 'error', code: 'api_error', retryable: true }),
    ])
    expect(server.requests).toHaveLength(1)
  })

  it('529 overloaded: retryable', async () => {
    server.reply({ kind: 'json', status: 529, body: jsonFixture('anthropic/overloaded-529.json') })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toMatchObject({ type: 'error', code: 'overloaded_error', retryable: true })
  })

  it('an overloaded_error event mid-stream: retryable, after the usage counted so far', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/overloaded-event.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Let me' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 1 } },
      {
        type: 'error',
        code: 'overloaded_error',
        message: 'anthropic: error event in the stream (overloaded_error): Overloaded',
        retryable: true,
      },
    ])
  })

  it('a stream that gave its stop reason and then ended without message_stop is complete', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/no-message-stop.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Noon.' },
      { type: 'usage', usage: { inputTokens: 40, outputTokens: 3 } },
      { type: 'end', stopReason: 'stop' },
    ])
  })

  it('a connection refused names the base URL and ANTHROPIC_BASE_URL as its source', async () => {
    const gone = await startWireServer()
    await gone.close()
    vi.stubEnv('ANTHROPIC_BASE_URL', gone.origin)
    const parts = await collect(anthropic({ apiKey: 'k', model: 'claude-sonnet-5-5' }), requestOf())
    expect(parts).toEqual([
      {
        type: 'error',
        code: 'connection',
        message: `anthropic: cannot reach ${gone.origin} (base URL from ANTHROPIC_BASE_URL): connection refused (ECONNREFUSED). Check that the server is running and the base URL is right; retrying may help.`,
        retryable: true,
      },
    ])
  })

  it('400 "prompt is too long": code context-overflow, not retryable', async () => {
    server.reply({
      kind: 'json',
      status: 400,
      body: jsonFixture('anthropic/context-overflow-400.json'),
    })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      expect.objectContaining({ type: 'error', code: 'context-overflow', retryable: false }),
    ])
    expect((parts[0] as { message: string }).message).toContain('prompt is too long')
  })

  it('a malformed event line ends the stream with a clear error, not a hang', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/malformed.sse') })
    const parts = await collect(provider(), requestOf())
    expect(terminalOf(parts)).toMatchObject({
      type: 'error',
      code: 'invalid-response',
      retryable: false,
    })
  })

  it('an event missing a field the API always sends is an invalid response, not a crash', async () => {
    server.reply({
      kind: 'sse',
      text: `${firstEvents('anthropic/text.sse', 2)}event: content_block_delta\ndata: {"type":"content_block_delta","index":0}\n\n`,
    })
    const parts = await collect(provider(), requestOf())
    const error = terminalOf(parts)
    expect(error).toMatchObject({ type: 'error', code: 'invalid-response', retryable: false })
    expect((error as { message: string }).message).toContain(
      'a "content_block_delta" event lacks a field the Messages API sends',
    )
  })

  it('a stream that ends before message_stop is an incomplete response (retryable)', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/cut-off.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'Still talking' })
    expect(terminalOf(parts)).toMatchObject({
      type: 'error',
      code: 'incomplete-response',
      retryable: true,
    })
  })

  it('a connection cut mid-stream is a retryable connection error', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/cut-off.sse'), destroy: true })
    const parts = await collect(provider(), requestOf())
    expect(terminalOf(parts)).toMatchObject({ type: 'error', code: 'connection', retryable: true })
  })

  it('abort mid-stream stops the HTTP request and ends with an aborted error', async () => {
    let release: () => void = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    server.reply({ kind: 'sse', text: firstEvents('anthropic/text.sse', 4), hold })
    const controller = new AbortController()
    const parts: StreamPart[] = []
    for await (const part of provider().stream(requestOf(), controller.signal)) {
      parts.push(part)
      if (part.type === 'text-delta') controller.abort()
    }
    await server.requests[0]?.clientGone
    release()
    expect(parts).toEqual([
      { type: 'text-delta', text: 'The tide' },
      expect.objectContaining({ type: 'error', code: 'aborted', retryable: false }),
    ])
  })
})

describe('anthropic: the request body', () => {
  const image = { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' } as const
  const transcript: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Plan the crossing.' }] },
    {
      role: 'user',
      content: [{ type: 'text', text: '<system-reminder>chart attached</system-reminder>' }, image],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'Need tides.', signature: 'sig-1' },
        { type: 'thinking', text: '', signature: 'redacted_thinking:opaque-2' },
        { type: 'thinking', text: 'cut off before its signature' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', id: 'c1', name: 'tide_table', args: { port: 'Brest' } },
        { type: 'tool-call', id: 'c2', name: 'tide_table', args: { port: 'Cork' } },
      ],
    },
    {
      role: 'tool',
      callId: 'c1',
      name: 'tide_table',
      content: [{ type: 'text', text: 'High water 12:04' }],
      isError: false,
    },
    {
      role: 'tool',
      callId: 'c2',
      name: 'tide_table',
      content: [{ type: 'text', text: 'no table for Cork' }],
      isError: true,
    },
    {
      role: 'user',
      content: [{ type: 'text', text: '<system-reminder>wind rising</system-reminder>' }],
    },
    { role: 'user', content: [{ type: 'text', text: 'Keep it short.' }] },
  ]

  it('merges consecutive user-role messages (prompts and tool results) with blocks in order and nothing added; pairs tool_use with tool_result; marks the cache', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/text.sse') })
    await collect(
      provider(),
      requestOf({ system: 'You plan sailing trips.', messages: transcript, tools: [tideTable] }),
    )
    const body = server.requests[0]?.body
    expect(body?.system).toEqual([
      { type: 'text', text: 'You plan sailing trips.', cache_control: { type: 'ephemeral' } },
    ])
    // With a system prompt, the tools need no breakpoint of their own.
    expect(body?.tools).toEqual([
      {
        name: 'tide_table',
        description: 'High and low water for a port',
        input_schema: tideTable.parameters,
      },
    ])
    expect(body?.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Plan the crossing.' },
          { type: 'text', text: '<system-reminder>chart attached</system-reminder>' },
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
          },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need tides.', signature: 'sig-1' },
          { type: 'redacted_thinking', data: 'opaque-2' },
          // The unsigned thinking block is not sent: the API cannot verify it.
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'c1', name: 'tide_table', input: { port: 'Brest' } },
          { type: 'tool_use', id: 'c2', name: 'tide_table', input: { port: 'Cork' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'c1',
            content: [{ type: 'text', text: 'High water 12:04' }],
          },
          {
            type: 'tool_result',
            tool_use_id: 'c2',
            content: [{ type: 'text', text: 'no table for Cork' }],
            is_error: true,
          },
          { type: 'text', text: '<system-reminder>wind rising</system-reminder>' },
          // The last block of the last message carries the cache breakpoint.
          { type: 'text', text: 'Keep it short.', cache_control: { type: 'ephemeral' } },
        ],
      },
    ])
  })

  it('maps params: maxTokens, temperature; passes thinking through; cannot replace the conversation', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/text.sse') })
    await collect(
      provider(),
      requestOf({
        params: {
          maxTokens: 2048,
          temperature: 1,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [],
        },
      }),
    )
    const body = server.requests[0]?.body
    expect(body).toMatchObject({
      max_tokens: 2048,
      temperature: 1,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }],
        },
      ],
    })
    expect(body).not.toHaveProperty('system')
  })

  it('uses the maxTokens option, else 8192, for a model the table does not know', async () => {
    server.reply(
      { kind: 'sse', text: fixture('anthropic/text.sse') },
      { kind: 'sse', text: fixture('anthropic/text.sse') },
    )
    await collect(provider({ maxTokens: 1000 }), requestOf({ model: 'claude-next' }))
    await collect(provider(), requestOf({ model: 'claude-next' }))
    expect(server.requests.map((request) => request.body.max_tokens)).toEqual([1000, 8192])
  })

  it('sends the API key', async () => {
    server.reply({ kind: 'sse', text: fixture('anthropic/text.sse') })
    await collect(provider(), requestOf())
    const headers = server.requests[0]?.headers
    expect(`${headers?.['x-api-key'] ?? ''} ${headers?.authorization ?? ''}`).toContain(
      'sk-ant-test',
    )
  })
})
