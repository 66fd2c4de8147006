/**
 * The OpenAI-compatible adapter against a local server replaying Chat Completions wire streams
 * (fixtures written from the OpenAI and DeepSeek API documentation).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { ConfigError, type Message, type ToolSpec } from '../../src/core/index.js'
import { openaiCompatible } from '../../src/providers/openai-compatible/index.js'
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
  parameters: {
    type: 'object',
    properties: { port: { type: 'string' }, day: { type: 'integer' } },
    required: ['port'],
  },
}

function provider(options: Partial<Parameters<typeof openaiCompatible>[0]> = {}) {
  return openaiCompatible({
    baseURL: `${server.origin}/v1`,
    apiKey: 'sk-test',
    model: 'gpt-4.1',
    ...options,
  })
}

/** The first `count` events of a fixture: a stream the server has not finished. */
function firstEvents(path: string, count: number): string {
  return `${fixture(path).split('\n\n').slice(0, count).join('\n\n')}\n\n`
}

describe('openaiCompatible: streaming responses', () => {
  it('streams plain text, then usage with cached tokens, then end', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/text.sse') })
    const parts = await collect(provider(), requestOf({ model: 'gpt-4.1', system: 'Be brief.' }))
    expect(parts).toEqual([
      { type: 'text-delta', text: 'The tide' },
      { type: 'text-delta', text: ' turns at' },
      { type: 'text-delta', text: ' noon.' },
      {
        type: 'usage',
        usage: { inputTokens: 1310, outputTokens: 6, cacheReadTokens: 1152, reasoningTokens: 0 },
      },
      { type: 'end', stopReason: 'stop' },
    ])
    const [request] = server.requests
    expect(request?.path).toBe('/v1/chat/completions')
    expect(request?.headers.authorization).toBe('Bearer sk-test')
    expect(request?.body).toMatchObject({
      model: 'gpt-4.1',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
    })
    expect(request?.body).not.toHaveProperty('tools')
  })

  it('assembles parallel tool calls from argument fragments spread over chunks', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/tool-calls-parallel.sse') })
    const parts = await collect(provider(), requestOf({ tools: [tideTable] }))
    expect(parts.filter((part) => part.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'call_harbor', name: 'tide_table', args: { port: 'Brest', day: 3 } },
      { type: 'tool-call', id: 'call_wind', name: 'wind_forecast', args: { hours: 12 } },
    ])
    expect(terminalOf(parts)).toEqual({ type: 'end', stopReason: 'tool-calls' })
    expect(server.requests[0]?.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'tide_table',
          description: 'High and low water for a port',
          parameters: tideTable.parameters,
        },
      },
    ])
  })

  it('tells parallel calls apart by id when a server numbers them all 0 (Ollama), and stops for tools despite "stop"', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/ollama-parallel.sse') })
    const parts = await collect(provider(), requestOf({ tools: [tideTable] }))
    expect(parts.filter((part) => part.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'call_o1', name: 'tide_table', args: { port: 'Brest' } },
      { type: 'tool-call', id: 'call_o2', name: 'tide_table', args: { port: 'Cork' } },
    ])
    expect(terminalOf(parts)).toEqual({ type: 'end', stopReason: 'tool-calls' })
  })

  it('passes arguments that are not JSON on as the raw string, for the agent to reject', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/bad-arguments.sse') })
    const parts = await collect(provider(), requestOf({ tools: [tideTable] }))
    expect(parts).toContainEqual({
      type: 'tool-call',
      id: 'call_q1',
      name: 'tide_table',
      args: '{"port": Brest',
    })
    expect(terminalOf(parts)).toEqual({ type: 'end', stopReason: 'tool-calls' })
  })

  it("streams DeepSeek's reasoning_content as thinking, with reasoning and cache counts", async () => {
    server.reply({ kind: 'sse', text: fixture('openai/reasoning-deepseek.sse') })
    const parts = await collect(provider({ model: 'deepseek-reasoner' }), requestOf())
    expect(parts).toEqual([
      { type: 'thinking-delta', text: 'Compare 9.11' },
      { type: 'thinking-delta', text: ' with 9.80.' },
      { type: 'text-delta', text: '9.8 is' },
      { type: 'text-delta', text: ' greater.' },
      {
        type: 'usage',
        usage: { inputTokens: 21, outputTokens: 64, cacheReadTokens: 0, reasoningTokens: 58 },
      },
      { type: 'end', stopReason: 'stop' },
    ])
  })

  it("reads DeepSeek's prompt_cache_hit_tokens as cache reads", async () => {
    server.reply({ kind: 'sse', text: fixture('openai/cache-hit-deepseek.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts).toContainEqual({
      type: 'usage',
      usage: { inputTokens: 900, outputTokens: 2, cacheReadTokens: 768 },
    })
  })

  it('maps finish_reason "length" to max-tokens', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/max-tokens.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'Once upon a' })
    expect(terminalOf(parts)).toEqual({ type: 'end', stopReason: 'max-tokens' })
  })
})

describe('openaiCompatible: streams as real servers end them', () => {
  it('a stream with no finish_reason that ends normally (usage with empty choices, then [DONE]) is complete: tool-calls', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/no-finish-reason-tool-call.sse') })
    const parts = await collect(provider(), requestOf({ tools: [tideTable] }))
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Checking the tides.' },
      { type: 'tool-call', id: 'toolu_vrtx_01Tide', name: 'tide_table', args: { port: 'Brest' } },
      { type: 'usage', usage: { inputTokens: 412, outputTokens: 38 } },
      { type: 'end', stopReason: 'tool-calls' },
    ])
    expect(server.requests).toHaveLength(1)
  })

  it('the same without tool calls is complete: stop', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/no-finish-reason-text.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      { type: 'text-delta', text: 'High water' },
      { type: 'text-delta', text: ' is at 12:04.' },
      { type: 'usage', usage: { inputTokens: 96, outputTokens: 9 } },
      { type: 'end', stopReason: 'stop' },
    ])
  })

  it('without a finish_reason and without [DONE], the stream is cut off: incomplete-response', async () => {
    const withoutDone = fixture('openai/no-finish-reason-text.sse').replace('data: [DONE]\n\n', '')
    server.reply({ kind: 'sse', text: withoutDone })
    const parts = await collect(provider(), requestOf())
    expect(parts.at(-2)).toEqual({ type: 'usage', usage: { inputTokens: 96, outputTokens: 9 } })
    expect(terminalOf(parts)).toMatchObject({ code: 'incomplete-response', retryable: true })
  })

  it('keeps the usage of a final chunk that carries an error object (OpenRouter mid-stream failure)', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/usage-beside-error.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Let me look' },
      { type: 'usage', usage: { inputTokens: 1840, outputTokens: 3 } },
      expect.objectContaining({ type: 'error', code: '502', retryable: true }),
    ])
    expect((parts[2] as { message: string }).message).toBe(
      'openai: error event in the stream (502): Provider disconnected unexpectedly.',
    )
  })

  it("keeps Mistral's typed thinking parts (delta.content as an array) as thinking, in order", async () => {
    server.reply({ kind: 'sse', text: fixture('openai/mistral-thinking.sse') })
    const parts = await collect(provider({ model: 'magistral-medium-2509' }), requestOf())
    expect(parts).toEqual([
      { type: 'thinking-delta', text: 'Brest is on the Atlantic' },
      { type: 'thinking-delta', text: ', so the tide matters.' },
      { type: 'text-delta', text: 'Leave at' },
      { type: 'text-delta', text: ' high water.' },
      { type: 'usage', usage: { inputTokens: 24, outputTokens: 47 } },
      { type: 'end', stopReason: 'stop' },
    ])
  })

  it('reads chunks of odd shapes defensively instead of failing on them', async () => {
    server.reply({
      kind: 'sse',
      text: [
        'data: {"choices":"none"}\n\n',
        'data: {"choices":[null,{"index":0,"delta":"x"}],"usage":7,"error":null}\n\n',
        'data: {"choices":[{"index":0,"delta":{"content":"ok","tool_calls":[null]},"finish_reason":""}]}\n\n',
        'data: [DONE]\n\n',
      ].join(''),
    })
    expect(await collect(provider(), requestOf())).toEqual([
      { type: 'text-delta', text: 'ok' },
      { type: 'end', stopReason: 'stop' },
    ])
  })

  it('skips keep-alive comments, and reads reasoning from whichever field carries it', async () => {
    const chunk = (delta: object) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`
    server.reply({
      kind: 'sse',
      text: [
        ': OPENROUTER PROCESSING\n\n',
        chunk({ reasoning_content: '', reasoning: 'Think' }),
        ': OPENROUTER PROCESSING\n\n',
        chunk({ content: [{ type: 'thinking', thinking: ' more' }] }),
        chunk({ content: 'Done', reasoning: null }),
        'data: [DONE]\n\n',
      ].join(''),
    })
    expect(await collect(provider(), requestOf())).toEqual([
      { type: 'thinking-delta', text: 'Think' },
      { type: 'thinking-delta', text: ' more' },
      { type: 'text-delta', text: 'Done' },
      { type: 'end', stopReason: 'stop' },
    ])
  })
})

describe('openaiCompatible: failures end the stream with one error part', () => {
  it('429 with retry-after: retryable, retryAfterMs from the header, and no retry by the SDK', async () => {
    server.reply({
      kind: 'json',
      status: 429,
      body: jsonFixture('openai/rate-limit-429.json'),
      headers: { 'retry-after': '2' },
    })
    const parts = await collect(provider(), requestOf())
    expect(parts).toHaveLength(1)
    expect(parts[0]).toMatchObject({
      type: 'error',
      code: 'rate_limit_exceeded',
      retryable: true,
      retryAfterMs: 2000,
    })
    expect((parts[0] as { message: string }).message).toContain('Rate limit reached for gpt-4.1')
    expect(server.requests).toHaveLength(1)
  })

  it('prefers retry-after-ms when the server sends it', async () => {
    server.reply({
      kind: 'json',
      status: 429,
      body: jsonFixture('openai/rate-limit-429.json'),
      headers: { 'retry-after-ms': '1400', 'retry-after': '2' },
    })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toMatchObject({ type: 'error', retryable: true, retryAfterMs: 1400 })
  })

  it('500: retryable, one request', async () => {
    server.reply({ kind: 'json', status: 500, body: jsonFixture('openai/server-error-500.json') })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      expect.objectContaining({ type: 'error', code: 'server_error', retryable: true }),
    ])
    expect(server.requests).toHaveLength(1)
  })

  it('400 context_length_exceeded: code context-overflow, not retryable', async () => {
    server.reply({
      kind: 'json',
      status: 400,
      body: jsonFixture('openai/context-overflow-400.json'),
    })
    const parts = await collect(provider(), requestOf())
    expect(parts).toEqual([
      expect.objectContaining({ type: 'error', code: 'context-overflow', retryable: false }),
    ])
    expect((parts[0] as { message: string }).message).toContain('maximum context length')
  })

  it('400 from vLLM (error object at the top level) is still read as context overflow', async () => {
    server.reply({
      kind: 'json',
      status: 400,
      body: jsonFixture('openai/context-overflow-vllm-400.json'),
    })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toMatchObject({ type: 'error', code: 'context-overflow', retryable: false })
    expect((parts[0] as { message: string }).message).toContain('32768 tokens')
  })

  it('401: not retryable, and the message says to check the key', async () => {
    server.reply({ kind: 'json', status: 401, body: jsonFixture('openai/invalid-key-401.json') })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toMatchObject({ type: 'error', code: 'invalid_api_key', retryable: false })
    expect((parts[0] as { message: string }).message).toMatch(/HTTP 401.*Check the API key/)
    // The provider's message ends with a period; rudder's hint follows without doubling it.
    expect((parts[0] as { message: string }).message).not.toMatch(/\.\./)
  })

  it('a malformed event line ends the stream with a clear error, not a hang', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/malformed.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'Half' })
    const error = terminalOf(parts)
    expect(error).toMatchObject({ type: 'error', code: 'invalid-response', retryable: false })
    expect((error as { message: string }).message).toContain('not valid JSON')
  })

  it('an error object inside the stream becomes the error part (server_error: retryable)', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/error-event.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts[0]).toEqual({ type: 'text-delta', text: 'Let me' })
    expect(terminalOf(parts)).toMatchObject({
      type: 'error',
      code: 'server_error',
      retryable: true,
    })
  })

  it('a stream that ends before a finish reason is an incomplete response (retryable)', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/cut-off.sse') })
    const parts = await collect(provider(), requestOf())
    expect(parts.slice(0, 2)).toEqual([
      { type: 'text-delta', text: 'Still' },
      { type: 'text-delta', text: ' talking' },
    ])
    expect(terminalOf(parts)).toMatchObject({
      type: 'error',
      code: 'incomplete-response',
      retryable: true,
    })
  })

  it('a connection cut mid-stream is a retryable connection error', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/cut-off.sse'), destroy: true })
    const parts = await collect(provider(), requestOf())
    expect(terminalOf(parts)).toMatchObject({ type: 'error', code: 'connection', retryable: true })
  })

  it('a server that cannot be reached is a retryable connection error naming the base URL', async () => {
    const gone = await startWireServer()
    await gone.close()
    const parts = await collect(provider({ baseURL: `${gone.origin}/v1` }), requestOf())
    expect(parts).toEqual([
      expect.objectContaining({ type: 'error', code: 'connection', retryable: true }),
    ])
    expect((parts[0] as { message: string }).message).toBe(
      `openai: cannot reach ${gone.origin}/v1 (base URL from the baseURL option): connection refused (ECONNREFUSED). Check that the server is running and the base URL is right; retrying may help.`,
    )
  })

  it('without baseURL, a connection error names OPENAI_BASE_URL as the source of the address', async () => {
    const gone = await startWireServer()
    await gone.close()
    vi.stubEnv('OPENAI_BASE_URL', `${gone.origin}/v1`)
    const parts = await collect(openaiCompatible({ apiKey: 'k', model: 'gpt-4.1' }), requestOf())
    expect((parts[0] as { message: string }).message).toContain(
      `cannot reach ${gone.origin}/v1 (base URL from OPENAI_BASE_URL)`,
    )
  })

  it('abort mid-stream stops the HTTP request and ends with an aborted error', async () => {
    let release: () => void = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    server.reply({ kind: 'sse', text: firstEvents('openai/text.sse', 2), hold })
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

  it('stopping iteration early also stops the HTTP request', async () => {
    let release: () => void = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    server.reply({ kind: 'sse', text: firstEvents('openai/text.sse', 2), hold })
    for await (const part of provider().stream(requestOf(), new AbortController().signal)) {
      expect(part).toEqual({ type: 'text-delta', text: 'The tide' })
      break
    }
    await server.requests[0]?.clientGone
    release()
    expect(server.requests).toHaveLength(1)
  })

  it('an already aborted signal sends nothing', async () => {
    const controller = new AbortController()
    controller.abort()
    const parts = await collect(provider(), requestOf(), controller.signal)
    expect(parts).toEqual([expect.objectContaining({ type: 'error', code: 'aborted' })])
    expect(server.requests).toHaveLength(0)
  })
})

describe('openaiCompatible: the request body', () => {
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
        { type: 'thinking', text: 'Need tides.' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', id: 'c1', name: 'tide_table', args: { port: 'Brest' } },
        { type: 'tool-call', id: 'c2', name: 'tide_table', args: '{"port": Cork' },
      ],
    },
    {
      role: 'tool',
      callId: 'c1',
      name: 'tide_table',
      content: [
        { type: 'text', text: 'High water ' },
        { type: 'text', text: '12:04' },
      ],
      isError: false,
    },
    {
      role: 'tool',
      callId: 'c2',
      name: 'tide_table',
      content: [{ type: 'text', text: 'invalid arguments' }, image],
      isError: true,
    },
    { role: 'user', content: [{ type: 'text', text: 'And the wind?' }] },
    { role: 'user', content: [{ type: 'text', text: 'Steer: keep it short.' }] },
  ]

  it('keeps messages in order, consecutive user messages separate, tools paired, and adds no text', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/text.sse') })
    await collect(
      provider(),
      requestOf({ system: 'You plan sailing trips.', messages: transcript }),
    )
    expect(server.requests[0]?.body.messages).toEqual([
      { role: 'system', content: 'You plan sailing trips.' },
      { role: 'user', content: 'Plan the crossing.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>chart attached</system-reminder>' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'c1',
            type: 'function',
            function: { name: 'tide_table', arguments: '{"port":"Brest"}' },
          },
          {
            id: 'c2',
            type: 'function',
            function: { name: 'tide_table', arguments: '{"port": Cork' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'High water 12:04' },
      { role: 'tool', tool_call_id: 'c2', content: 'invalid arguments' },
      // Tool messages carry only text: the result's image follows the tool messages.
      {
        role: 'user',
        content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
      },
      { role: 'user', content: 'And the wind?' },
      { role: 'user', content: 'Steer: keep it short.' },
    ])
  })

  it('sends thinking back as reasoning_content only when told to (DeepSeek)', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/text.sse') })
    await collect(provider({ sendReasoning: true }), requestOf({ messages: transcript }))
    const messages = server.requests[0]?.body.messages as { role: string }[]
    expect(messages.find((message) => message.role === 'assistant')).toMatchObject({
      reasoning_content: 'Need tides.',
    })
  })

  it('maps temperature and maxTokens, passes unknown parameters through, and never lets one replace the conversation', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/text.sse') })
    await collect(
      provider(),
      requestOf({
        params: {
          temperature: 0.2,
          maxTokens: 500,
          topP: 0.9,
          reasoning_effort: 'low',
          model: 'other',
          stream: false,
        },
      }),
    )
    const body = server.requests[0]?.body
    expect(body).toMatchObject({
      model: 'test-model',
      stream: true,
      temperature: 0.2,
      max_tokens: 500,
      top_p: 0.9,
      reasoning_effort: 'low',
    })
    expect(body).not.toHaveProperty('max_completion_tokens')
  })

  it('uses max_completion_tokens when told to (OpenAI reasoning models)', async () => {
    server.reply({ kind: 'sse', text: fixture('openai/text.sse') })
    await collect(
      provider({ maxTokensField: 'max_completion_tokens' }),
      requestOf({ params: { maxTokens: 64 } }),
    )
    expect(server.requests[0]?.body).toMatchObject({ max_completion_tokens: 64 })
    expect(server.requests[0]?.body).not.toHaveProperty('max_tokens')
  })

  it('without a key or OPENAI_API_KEY, creating the provider throws a ConfigError naming the variable', () => {
    vi.stubEnv('OPENAI_API_KEY', '')
    expect(() => openaiCompatible({ model: 'gpt-4.1', baseURL: server.origin })).toThrow(
      ConfigError,
    )
    expect(() => openaiCompatible({ model: 'gpt-4.1', baseURL: server.origin })).toThrow(
      /OPENAI_API_KEY/,
    )
  })

  it('a base URL that is not a URL throws a ConfigError at once', () => {
    expect(() => openaiCompatible({ model: 'm', apiKey: 'k', baseURL: 'localhost:11434' })).toThrow(
      /not an http\(s\) URL/,
    )
  })
})
