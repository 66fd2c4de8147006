/**
 * The shared failure mapping: retry-after headers, retryable statuses, context overflow.
 */
import { describe, expect, it } from 'vitest'
import {
  httpFailurePart,
  isContextOverflow,
  isRetryableStatus,
  retryAfterMsOf,
} from '../../src/providers/failure.js'
import { parseToolArguments } from '../../src/providers/tool-arguments.js'

describe('retryAfterMsOf', () => {
  it('reads retry-after-ms first, then retry-after in seconds', () => {
    expect(retryAfterMsOf(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250)
    expect(retryAfterMsOf(new Headers({ 'retry-after': '1.5' }))).toBe(1500)
  })

  it('reads an HTTP date relative to now, never negative', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(
      retryAfterMsOf(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now),
    ).toBe(30_000)
    expect(
      retryAfterMsOf(new Headers({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), now),
    ).toBe(0)
  })

  it('is undefined without a usable header', () => {
    expect(retryAfterMsOf(undefined)).toBeUndefined()
    expect(retryAfterMsOf(new Headers({ 'retry-after': 'soon' }))).toBeUndefined()
    expect(retryAfterMsOf(new Headers({ 'retry-after': '-3' }))).toBeUndefined()
  })
})

describe('retryable and overflow classification', () => {
  it('retries 408, 429 and 5xx only', () => {
    expect(
      [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 529].filter(isRetryableStatus),
    ).toEqual([408, 429, 500, 502, 503, 529])
  })

  it('obeys x-should-retry from the server', () => {
    const part = httpFailurePart({
      provider: 'openai',
      status: 503,
      headers: new Headers({ 'x-should-retry': 'false' }),
      message: 'maintenance',
    })
    expect(part.retryable).toBe(false)
  })

  it('recognizes the providers’ wording of "the prompt is too long"', () => {
    const overflow = (message: string, status: number | undefined = 400) =>
      isContextOverflow({ provider: 'p', ...(status === undefined ? {} : { status }), message })
    expect(overflow('prompt is too long: 208412 tokens > 200000 maximum')).toBe(true)
    expect(overflow("This model's maximum context length is 65536 tokens.")).toBe(true)
    expect(overflow('request exceeds the context window', undefined)).toBe(true)
    expect(overflow('request too large', 413)).toBe(true)
    expect(overflow('Invalid value for temperature')).toBe(false)
    expect(overflow("This model's maximum context length is 65536 tokens.", 500)).toBe(false)
  })

  it('names the status and code when the provider gives no code of its own', () => {
    expect(
      httpFailurePart({ provider: 'vllm', status: 502, message: 'bad gateway' }),
    ).toMatchObject({
      code: 'http-502',
      retryable: true,
      message: 'vllm: HTTP 502: bad gateway',
    })
  })
})

describe('parseToolArguments', () => {
  it('parses a JSON object; empty text is no arguments', () => {
    expect(parseToolArguments('{"port":"Brest"}')).toEqual({ port: 'Brest' })
    expect(parseToolArguments('  ')).toEqual({})
  })

  it('returns anything that is not a JSON object as the raw text', () => {
    expect(parseToolArguments('{"port": Brest')).toBe('{"port": Brest')
    expect(parseToolArguments('"Brest"')).toBe('"Brest"')
    expect(parseToolArguments('[1]')).toBe('[1]')
  })
})
