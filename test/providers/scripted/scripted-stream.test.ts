/**
 * The scripted provider answers a plain step with a hand-written iterator and a step that is a
 * function, waits or holds with an async generator (decision 0168). Both must stream the same
 * parts, check the abort at the same `next()` calls, record the request at the first `next()`
 * and end on `return()` and `throw()` as a generator does.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ModelRequest, StreamPart } from '../../../src/index.js'
import { type ScriptStep, scriptedProvider } from '../../../src/testing.js'

const request = (text: string): ModelRequest => ({
  model: 'm',
  system: 'sys',
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  tools: [],
  params: {},
})

/** Reads a stream by hand; aborts `controller` once `abortAfter` parts are in. */
async function read(
  stream: AsyncIterable<StreamPart>,
  controller: AbortController,
  abortAfter = Number.POSITIVE_INFINITY,
): Promise<StreamPart[]> {
  const parts: StreamPart[] = []
  for await (const part of stream) {
    parts.push(part)
    if (parts.length >= abortAfter) controller.abort()
  }
  return parts
}

const stepArbitrary: fc.Arbitrary<ScriptStep> = fc.record(
  {
    text: fc.string({ maxLength: 30 }),
    thinking: fc.string({ maxLength: 30 }),
    toolCalls: fc.array(
      fc.record(
        {
          id: fc.string({ minLength: 1, maxLength: 4 }),
          name: fc.constantFrom('read', 'echo'),
          args: fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
        },
        { requiredKeys: ['name', 'args'] },
      ),
      { maxLength: 3 },
    ),
    stop: fc.constantFrom('stop' as const, 'tool-calls' as const, 'max-tokens' as const),
    error: fc.record(
      {
        code: fc.constantFrom('overloaded', 'bad'),
        message: fc.string({ maxLength: 10 }),
        retryable: fc.boolean(),
        retryAfterMs: fc.nat(1000),
      },
      { requiredKeys: ['code', 'message'] },
    ),
    delayMs: fc.constantFrom(0, -1),
  },
  { requiredKeys: [] },
)

describe('scripted stream', () => {
  it('streams a plain step as the generator streams it, whole or aborted after any part', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArbitrary, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 6 }),
        fc.option(fc.nat(12), { nil: undefined }),
        async (steps, chunkSize, abortAfter) => {
          // A step given as a function is answered by the async generator; as a value, by the
          // hand-written iterator.
          const plain = scriptedProvider(steps, { chunkSize })
          const generated = scriptedProvider(
            steps.map((step) => () => step),
            { chunkSize },
          )
          for (let index = 0; index < steps.length; index++) {
            const mine = new AbortController()
            const theirs = new AbortController()
            const expected = await read(
              generated.stream(request(`r${index}`), theirs.signal),
              theirs,
              abortAfter,
            )
            const actual = await read(
              plain.stream(request(`r${index}`), mine.signal),
              mine,
              abortAfter,
            )
            expect(actual).toEqual(expected)
          }
          expect(plain.requests).toEqual(generated.requests)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('records the request at the first next(), not when the stream is made', async () => {
    const provider = scriptedProvider([{ text: 'a' }, { text: 'b' }])
    const first = provider.stream(request('one'), new AbortController().signal)
    const second = provider.stream(request('two'), new AbortController().signal)
    expect(provider.requests).toEqual([])
    // Read in the other order: the step answering a stream is the one of its first next().
    const secondParts = await read(second, new AbortController())
    const firstParts = await read(first, new AbortController())
    expect(provider.requests).toEqual([request('two'), request('one')])
    expect(secondParts[0]).toEqual({ type: 'text-delta', text: 'a' })
    expect(firstParts[0]).toEqual({ type: 'text-delta', text: 'b' })
  })

  it('ends on return() after an early break, and the next request gets the next step', async () => {
    const provider = scriptedProvider([{ text: 'abcdefgh', toolCalls: [] }, { text: 'next' }], {
      chunkSize: 2,
    })
    const stream = provider.stream(request('x'), new AbortController().signal)
    const iterator = stream[Symbol.asyncIterator]()
    expect(await iterator.next()).toEqual({
      value: { type: 'text-delta', text: 'ab' },
      done: false,
    })
    expect(await iterator.return?.()).toEqual({ value: undefined, done: true })
    expect(await iterator.next()).toEqual({ value: undefined, done: true })
    const parts = await read(
      provider.stream(request('y'), new AbortController().signal),
      new AbortController(),
    )
    expect(parts.map((part) => part.type)).toEqual(['text-delta', 'text-delta', 'usage', 'end'])
    expect(provider.requests).toHaveLength(2)
  })

  it('return() before the first next() records no request; throw() rejects and ends', async () => {
    const provider = scriptedProvider([{ text: 'a' }, { text: 'b' }])
    const unread = provider
      .stream(request('x'), new AbortController().signal)
      [Symbol.asyncIterator]()
    expect(await unread.return?.()).toEqual({ value: undefined, done: true })
    expect(await unread.next()).toEqual({ value: undefined, done: true })
    expect(provider.requests).toEqual([])
    const thrown = provider
      .stream(request('y'), new AbortController().signal)
      [Symbol.asyncIterator]()
    expect(await thrown.next()).toEqual({ value: { type: 'text-delta', text: 'a' }, done: false })
    const failure = new Error('stop')
    await expect(thrown.throw?.(failure)).rejects.toBe(failure)
    expect(await thrown.next()).toEqual({ value: undefined, done: true })
    expect(provider.requests).toEqual([request('y')])
  })

  it('ends without a final part when aborted before the first next(), recording the request', async () => {
    const provider = scriptedProvider([{ text: 'hello', toolCalls: [{ name: 'a', args: {} }] }])
    const controller = new AbortController()
    const stream = provider.stream(request('x'), controller.signal)
    controller.abort()
    expect(await read(stream, controller)).toEqual([])
    expect(provider.requests).toEqual([request('x')])
  })

  it('streams calls, usage and end once the text is out even if aborted after it', async () => {
    // The generator checks the abort before each delta and once after them, never between
    // calls, usage and end: an abort after the first call leaves the rest to stream.
    const provider = scriptedProvider([
      {
        toolCalls: [
          { name: 'a', args: {} },
          { name: 'b', args: { n: 1 } },
        ],
      },
    ])
    const controller = new AbortController()
    const parts = await read(provider.stream(request('x'), controller.signal), controller, 1)
    expect(parts.map((part) => part.type)).toEqual(['tool-call', 'tool-call', 'usage', 'end'])
  })

  it('rejects the next() whose part throws, then ends, as the generator does', async () => {
    // A request without messages makes the usage estimate throw.
    const broken = { ...request('x'), messages: null as unknown as ModelRequest['messages'] }
    const outcomes = async (entry: ScriptStep | (() => ScriptStep)) => {
      const iterator = scriptedProvider([entry])
        .stream(broken, new AbortController().signal)
        [Symbol.asyncIterator]()
      const first = await iterator.next()
      const failure = await iterator.next().then(
        () => undefined,
        (error: unknown) => (error as Error).constructor.name,
      )
      return { first, failure, after: await iterator.next() }
    }
    const step: ScriptStep = { toolCalls: [{ id: 'a', name: 'read', args: {} }] }
    const plain = await outcomes(step)
    expect(plain).toEqual({
      first: { value: { type: 'tool-call', id: 'a', name: 'read', args: {} }, done: false },
      failure: 'TypeError',
      after: { value: undefined, done: true },
    })
    expect(await outcomes(() => step)).toEqual(plain)
  })
})
