/**
 * The limits both adapters put on a response, against a local server that misbehaves the way
 * real ones do: answers nothing, stalls after the headers with only keep-alives, or streams
 * without end. Limits are set short here so the suite stays fast; nothing sleeps.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/index.js'
import { anthropic } from '../../src/providers/anthropic/index.js'
import { openaiCompatible } from '../../src/providers/openai-compatible/index.js'
import type { Provider, StreamPart } from '../../src/providers/provider.js'
import { MAX_EVENT_CHARS } from '../../src/providers/sse.js'
import type { StreamLimitOptions } from '../../src/providers/stream-guard.js'
import { collect, requestOf, terminalOf } from './support/collect.js'
import { fixture, startWireServer, type WireServer } from './support/wire-server.js'

let server: WireServer

beforeAll(async () => {
  server = await startWireServer()
})
afterAll(() => server.close())
afterEach(() => {
  server.requests.length = 0
})

type Limits = StreamLimitOptions & { readonly baseURLSource?: string }

const adapters: {
  readonly name: string
  readonly make: (limits?: Limits, baseURL?: string) => Provider
  /** A response that has started: its first events, before any text. */
  readonly start: string
  readonly keepAlive: string
  /** One text event, to repeat without end. */
  readonly textEvent: string
}[] = [
  {
    name: 'openaiCompatible',
    make: (limits = {}, baseURL = `${server.origin}/v1`) =>
      openaiCompatible({ baseURL, apiKey: 'sk-test', model: 'gpt-4.1', ...limits }),
    start: fixture('openai/text.sse').split('\n\n')[0]!.concat('\n\n'),
    keepAlive: ': OPENROUTER PROCESSING\n\n',
    textEvent: `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'again and ' } }] })}\n\n`,
  },
  {
    name: 'anthropic',
    make: (limits = {}, baseURL = server.origin) =>
      anthropic({ baseURL, apiKey: 'sk-ant-test', model: 'claude-sonnet-5-5', ...limits }),
    start: fixture('anthropic/text.sse').split('\n\n').slice(0, 2).join('\n\n').concat('\n\n'),
    // Anthropic's keep-alive is an event, not a comment: it must not count as progress either.
    keepAlive: 'event: ping\ndata: {"type": "ping"}\n\n',
    textEvent: `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'again and ' } })}\n\n`,
  },
]

function messageOf(part: StreamPart | undefined): string {
  return part?.type === 'error' ? part.message : ''
}

describe.each(adapters)('$name: limits on a response', ({ make, start, keepAlive, textEvent }) => {
  it('a server that sends headers, then only keep-alives, stalls: idle-timeout, retryable, request closed', async () => {
    server.reply({ kind: 'stall', text: start, keepAlive, everyMs: 20 })
    const parts = await collect(make({ idleTimeoutMs: 250 }), requestOf())
    const error = terminalOf(parts)
    expect(error).toMatchObject({ type: 'error', code: 'idle-timeout', retryable: true })
    expect(messageOf(error)).toContain(`stalled: nothing arrived for 250 ms`)
    expect(messageOf(error)).toContain('idleTimeoutMs')
    await server.requests[0]?.clientGone
  })

  it('a server that never answers: timeout, retryable, naming the base URL and where it came from', async () => {
    server.reply({ kind: 'silent' })
    const parts = await collect(
      make({ timeoutMs: 200, baseURLSource: '/home/sailor/.rudder/config.json' }),
      requestOf(),
    )
    expect(parts).toHaveLength(1)
    const error = terminalOf(parts)
    expect(error).toMatchObject({ type: 'error', code: 'timeout', retryable: true })
    expect(messageOf(error)).toContain(
      `no response from ${server.origin}${make === adapters[0]!.make ? '/v1' : ''} (base URL from /home/sailor/.rudder/config.json) within 200 ms`,
    )
    expect(messageOf(error)).not.toMatch(/\.\./)
    await server.requests[0]?.clientGone
  })

  it('connection refused: retryable, naming the base URL, its source and the cause, without doubled periods', async () => {
    const gone = await startWireServer()
    await gone.close()
    const parts = await collect(
      make({ baseURLSource: 'OPENAI_BASE_URL' }, `${gone.origin}/v1`),
      requestOf(),
    )
    const error = terminalOf(parts)
    expect(error).toMatchObject({ type: 'error', code: 'connection', retryable: true })
    expect(messageOf(error)).toContain(
      `cannot reach ${gone.origin}/v1 (base URL from OPENAI_BASE_URL): connection refused (ECONNREFUSED).`,
    )
    expect(messageOf(error)).not.toMatch(/\.\.|Connection error|fetch failed/)
  })

  it('an endless stream is cut at maxResponseChars: response-too-large, not retryable, request closed', async () => {
    server.reply({ kind: 'endless', text: start, event: textEvent })
    const parts = await collect(make({ maxResponseChars: 5000 }), requestOf())
    const error = terminalOf(parts)
    expect(error).toMatchObject({ type: 'error', code: 'response-too-large', retryable: false })
    expect(messageOf(error)).toContain('passed 5,000 characters of text, thinking and tool calls')
    const text = parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('')
    expect(text.length).toBeGreaterThan(4000)
    expect(text.length).toBeLessThanOrEqual(5000)
    await server.requests[0]?.clientGone
  })

  it('one endless line (no line break ever) is cut at the longest event allowed', async () => {
    const line = `data: ${'x'.repeat(1 << 20)}`
    server.reply({ kind: 'endless', text: start, event: line })
    const parts = await collect(make(), requestOf())
    const error = terminalOf(parts)
    expect(error).toMatchObject({ type: 'error', code: 'response-too-large', retryable: false })
    expect(messageOf(error)).toContain(`one event of the stream`)
    expect(messageOf(error)).toContain(MAX_EVENT_CHARS.toLocaleString('en-US'))
    await server.requests[0]?.clientGone
  })

  it('refuses limits that are not positive whole numbers, or too long for a timer', () => {
    expect(() => make({ idleTimeoutMs: 0 })).toThrow(ConfigError)
    expect(() => make({ timeoutMs: 1.5 })).toThrow(/timeoutMs must be a positive whole number/)
    expect(() => make({ maxResponseChars: -1 })).toThrow(/maxResponseChars/)
    expect(() => make({ idleTimeoutMs: 2 ** 31 })).toThrow(/at most 2147483647/)
  })
})

describe('openaiCompatible: an endless stream of tool calls', () => {
  it('counts tool-call arguments against the cap too', async () => {
    const fragment = (text: string) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: text } }] } }] })}\n\n`
    const opening = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_loop', type: 'function', function: { name: 'write', arguments: '{"text":"' } }] } }] })}\n\n`
    server.reply({ kind: 'endless', text: opening, event: fragment('la la ') })
    const provider = openaiCompatible({
      baseURL: `${server.origin}/v1`,
      apiKey: 'sk-test',
      model: 'gpt-4.1',
      maxResponseChars: 3000,
    })
    const parts = await collect(provider, requestOf())
    expect(parts).toEqual([
      expect.objectContaining({ type: 'error', code: 'response-too-large', retryable: false }),
    ])
    await server.requests[0]?.clientGone
  })

  it('an endless stream of empty chunks ends too: each event counts', async () => {
    const empty = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {} }] })}\n\n`
    server.reply({ kind: 'endless', event: empty })
    const provider = openaiCompatible({
      baseURL: `${server.origin}/v1`,
      apiKey: 'sk-test',
      model: 'gpt-4.1',
      maxResponseChars: 2000,
    })
    expect(terminalOf(await collect(provider, requestOf()))).toMatchObject({
      code: 'response-too-large',
    })
  })
})
