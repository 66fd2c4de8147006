/**
 * The scripted provider (docs/spec.md §8): a documented, first-class provider that answers each
 * request with the next step of a script. Used by tests, demos and bug reports.
 */
import { type JsonValue, type Message, messageOf, type StopReason } from '../../core/index.js'
import { jsonLength } from '../../core/json-length.js'
import { emptyObjectArray } from '../../core/object-array.js'
import { prefixOf } from '../../core/prefix-view.js'
import type { ModelRequest, Provider, StreamPart } from '../provider.js'

/** One answer to one request. */
export type ScriptStep = {
  readonly text?: string
  readonly thinking?: string
  readonly toolCalls?: readonly {
    readonly id?: string
    readonly name: string
    readonly args: JsonValue
  }[]
  /** Default: `tool-calls` when there are tool calls, else `stop`. */
  readonly stop?: StopReason
  /** Fail the request (after streaming any text and thinking). */
  readonly error?: {
    readonly code: string
    readonly message: string
    readonly retryable?: boolean
    readonly retryAfterMs?: number
  }
  /** Wait this long (or until aborted) before streaming. */
  readonly delayMs?: number
  /**
   * Stream the text and thinking deltas, then wait for this (or the abort) before ending. A
   * function is called once the deltas are out, with the request's signal.
   */
  readonly hold?: Promise<unknown> | ((signal: AbortSignal) => Promise<unknown>)
}

/** A step, or a function of the request that gives one. */
export type ScriptEntry = ScriptStep | ((request: ModelRequest) => ScriptStep | Promise<ScriptStep>)

/** A provider that replays a script; `requests` records every request received, in order. */
export interface ScriptedProvider extends Provider {
  readonly requests: readonly ModelRequest[]
}

export type ScriptedProviderOptions = {
  /** Provider id logged in request headers (default `scripted`). */
  readonly id?: string
  /** Default model (default `scripted`). */
  readonly model?: string
  /** Characters per streamed delta (default 8), so a cancel mid-stream is testable. */
  readonly chunkSize?: number
}

/** Creates a scripted provider. Step `i` answers request `i`; requests beyond the script fail clearly. */
export function scriptedProvider(
  steps: readonly ScriptEntry[],
  options: ScriptedProviderOptions = {},
): ScriptedProvider {
  // Object elements from the start: no deoptimised `push` per provider (decision 0172).
  const requests: ModelRequest[] = emptyObjectArray()
  const chunkSize = Math.max(1, options.chunkSize ?? 8)
  const estimateTokens = createTokenEstimator()

  const script: Script = { steps, requests, chunkSize, estimateTokens }
  const stream = (request: ModelRequest, signal: AbortSignal): AsyncIterableIterator<StreamPart> =>
    new ScriptedStream(script, request, signal)

  return { id: options.id ?? 'scripted', model: options.model ?? 'scripted', requests, stream }
}

const NO_CALLS: NonNullable<ScriptStep['toolCalls']> = Object.freeze([])

/** What the streams of one provider share. */
type Script = {
  readonly steps: readonly ScriptEntry[]
  readonly requests: ModelRequest[]
  readonly chunkSize: number
  readonly estimateTokens: (request: ModelRequest) => number
}

// Where a plain step's stream is: the stages in the order of their parts.
const THINKING = 0
const TEXT = 1
const CALLS = 2
const END = 3
const DONE = 4

/**
 * One response. It yields what the async generator `answer` would, in the same order, with the
 * same abort checks at the same `next()` calls, and records the request at the first `next()`,
 * as a generator's body starts there. A step that is a function, waits (`delayMs`) or holds is
 * answered by that generator; a plain step is answered here, part by part, each `next()` an
 * already settled promise: an async generator costs a promise and a request per `next()` and an
 * await per `yield`, which was a third of the heap a step of bench B5+ allocated (decision
 * 0168). `return()` and `throw()` end it as they end a generator.
 */
class ScriptedStream implements AsyncIterableIterator<StreamPart> {
  readonly #script: Script
  readonly #request: ModelRequest
  readonly #signal: AbortSignal
  /** The generator answering a step this class does not, from the first `next()` on. */
  #generator: AsyncGenerator<StreamPart, void, undefined> | undefined
  #isStarted = false
  #stage = THINKING
  /** The offset in the thinking or text, or the index of the next call. */
  #at = 0
  #number = 0
  #step: ScriptStep = NO_STEP
  #calls: NonNullable<ScriptStep['toolCalls']> = NO_CALLS

  constructor(script: Script, request: ModelRequest, signal: AbortSignal) {
    this.#script = script
    this.#request = request
    this.#signal = signal
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamPart, void>> {
    if (this.#generator) return this.#generator.next()
    let part: StreamPart | undefined
    try {
      if (!this.#isStarted) {
        this.#isStarted = true
        const generator = this.#start()
        if (generator) {
          this.#generator = generator
          return generator.next()
        }
      }
      part = this.#advance()
    } catch (error) {
      // As a generator's body that throws: this `next()` rejects and the stream is over.
      this.#stage = DONE
      return Promise.reject(error)
    }
    return Promise.resolve(
      part === undefined ? { value: undefined, done: true } : { value: part, done: false },
    )
  }

  /** Ends the stream; its return value is `void`, so there is nothing to hand back. */
  return(): Promise<IteratorResult<StreamPart, void>> {
    if (this.#generator) return this.#generator.return(undefined)
    this.#isStarted = true
    this.#stage = DONE
    return Promise.resolve({ value: undefined, done: true })
  }

  throw(error?: unknown): Promise<IteratorResult<StreamPart, void>> {
    if (this.#generator) return this.#generator.throw(error)
    this.#isStarted = true
    this.#stage = DONE
    return Promise.reject(error)
  }

  /** Records the request; returns the generator that answers it unless it is a plain step. */
  #start(): AsyncGenerator<StreamPart, void, undefined> | undefined {
    const { steps, requests } = this.#script
    const number = requests.length + 1
    requests.push(this.#request)
    const entry = steps[number - 1]
    if (entry === undefined) {
      this.#stage = DONE
      return single(exhausted(number, steps.length))
    }
    if (
      typeof entry === 'function' ||
      (entry.delayMs !== undefined && entry.delayMs > 0) ||
      entry.hold
    )
      return answer(this.#script, this.#request, this.#signal, number, entry)
    this.#number = number
    this.#step = entry
    this.#calls = entry.toolCalls ?? NO_CALLS
    if (this.#signal.aborted) this.#stage = DONE
    return undefined
  }

  /** The next part of a plain step, or none once it is over (or aborted where `answer` checks). */
  #advance(): StreamPart | undefined {
    const step = this.#step
    const size = this.#script.chunkSize
    if (this.#stage === THINKING) {
      if (step.thinking !== undefined && this.#at < step.thinking.length) {
        if (this.#signal.aborted) return this.#end()
        const at = this.#at
        this.#at += size
        return { type: 'thinking-delta', text: step.thinking.slice(at, at + size) }
      }
      this.#stage = TEXT
      this.#at = 0
    }
    if (this.#stage === TEXT) {
      if (step.text !== undefined && this.#at < step.text.length) {
        if (this.#signal.aborted) return this.#end()
        const at = this.#at
        this.#at += size
        return { type: 'text-delta', text: step.text.slice(at, at + size) }
      }
      if (this.#signal.aborted) return this.#end()
      if (step.error) {
        this.#stage = DONE
        return errorPart(step.error)
      }
      this.#stage = CALLS
      this.#at = 0
    }
    if (this.#stage === CALLS) {
      if (this.#at < this.#calls.length) {
        const index = this.#at++
        const call = this.#calls[index]!
        return {
          type: 'tool-call',
          id: call.id ?? `call_${this.#number}_${index + 1}`,
          name: call.name,
          args: call.args,
        }
      }
      this.#stage = END
      return {
        type: 'usage',
        usage: usageOf(step, this.#calls, this.#script.estimateTokens(this.#request)),
      }
    }
    if (this.#stage === END) {
      this.#stage = DONE
      return {
        type: 'end',
        stopReason: step.stop ?? (this.#calls.length > 0 ? 'tool-calls' : 'stop'),
      }
    }
    return undefined
  }

  #end(): undefined {
    this.#stage = DONE
    return undefined
  }
}

const NO_STEP: ScriptStep = Object.freeze({})

async function* single(part: StreamPart): AsyncGenerator<StreamPart, void, undefined> {
  yield part
}

/**
 * The answer to request `number`, whose step is `entry`, as a generator: for a step that is a
 * function, waits or holds (the request is already recorded).
 */
async function* answer(
  script: Script,
  request: ModelRequest,
  signal: AbortSignal,
  number: number,
  entry: ScriptEntry,
): AsyncGenerator<StreamPart, void, undefined> {
  const { chunkSize } = script
  let step: ScriptStep
  if (typeof entry !== 'function') step = entry
  else {
    try {
      step = await entry(request)
    } catch (error) {
      yield {
        type: 'error',
        code: 'script-error',
        message: `scripted provider: step #${number} threw: ${messageOf(error)}`,
        retryable: false,
      }
      return
    }
  }
  if (step.delayMs !== undefined && step.delayMs > 0) await delay(step.delayMs, signal)
  if (signal.aborted) return
  if (step.thinking !== undefined)
    for (let i = 0; i < step.thinking.length; i += chunkSize) {
      if (signal.aborted) return
      yield { type: 'thinking-delta', text: step.thinking.slice(i, i + chunkSize) }
    }
  if (step.text !== undefined)
    for (let i = 0; i < step.text.length; i += chunkSize) {
      if (signal.aborted) return
      yield { type: 'text-delta', text: step.text.slice(i, i + chunkSize) }
    }
  if (step.hold) await held(step.hold, signal)
  if (signal.aborted) return
  if (step.error) {
    yield errorPart(step.error)
    return
  }
  const calls = step.toolCalls ?? NO_CALLS
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!
    yield {
      type: 'tool-call',
      id: call.id ?? `call_${number}_${index + 1}`,
      name: call.name,
      args: call.args,
    }
  }
  yield { type: 'usage', usage: usageOf(step, calls, script.estimateTokens(request)) }
  yield { type: 'end', stopReason: step.stop ?? (calls.length > 0 ? 'tool-calls' : 'stop') }
}

function exhausted(number: number, length: number): StreamPart {
  return {
    type: 'error',
    code: 'script-exhausted',
    message: `scripted provider: request #${number} has no step (the script has ${length}); add a step for it to the script`,
    retryable: false,
  }
}

function errorPart(error: NonNullable<ScriptStep['error']>): StreamPart {
  return {
    type: 'error',
    code: error.code,
    message: error.message,
    retryable: error.retryable ?? false,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  }
}

/** What a held step waits for: the hold, or the abort. */
function held(hold: NonNullable<ScriptStep['hold']>, signal: AbortSignal): Promise<unknown> {
  return Promise.race([typeof hold === 'function' ? hold(signal) : hold, aborted(signal)])
}

/** The usage reported: the request's estimate in, the step's text, thinking and calls out. */
function usageOf(step: ScriptStep, calls: NonNullable<ScriptStep['toolCalls']>, input: number) {
  const output = (step.text ?? '').length + (step.thinking ?? '').length + jsonLength(calls)
  return { inputTokens: input, outputTokens: Math.ceil(output / 4) }
}

/**
 * A deterministic token estimate (4 characters a token) so usage figures are stable in tests.
 * Kept incrementally across requests: the agent's `messages()` only grows between compactions
 * (decision 0140), so a request that starts with the same first message and still holds the
 * last one counted only adds its new messages; anything else is counted afresh. Without this
 * a long scripted turn costs O(history) a step in the test double alone (bench B5+). The first
 * and last messages counted are kept rather than read again, and a `messages()` view is read
 * through its backing array: an index read of a view is a proxy trap.
 */
function createTokenEstimator(): (request: ModelRequest) => number {
  // The first and last message counted of a request whose messages are not a view.
  let first: Message | undefined
  let last: Message | undefined
  // The backing array of the last `messages()` view counted: a later view over the same one
  // holds every message counted, as the array is only ever pushed to (core/prefix-view.ts).
  // Weakly held: it is the session's transcript, which a session that released its history
  // (docs/spec.md §9.4) must not find kept alive by the provider's estimate.
  let backing: WeakRef<readonly unknown[]> | undefined
  let count = 0
  let characters = 0
  return (request) => {
    const messages = request.messages
    // A view's items are read from its backing array: one proxy trap a request, not one a
    // message read (bench B5+).
    const prefix = prefixOf(messages)
    const items = (prefix ? prefix.items : messages) as readonly Message[]
    const length = prefix ? prefix.length : messages.length
    const isContinued =
      count > 0 &&
      length >= count &&
      (prefix
        ? prefix.items === backing?.deref()
        : messages[0] === first && messages[count - 1] === last)
    if (!isContinued) {
      count = 0
      characters = 0
    }
    // The length of each new message's `textOf`, summed without joining its text.
    for (let index = count; index < length; index++) {
      const content = items[index]!.content
      // Indexed: a `for…of` over a frozen array made an iterator and a result an item (B5+).
      for (let block = 0; block < content.length; block++) {
        const item = content[block]!
        if (item.type === 'text') characters += item.text.length
      }
    }
    if (prefix) {
      if (!isContinued) backing = new WeakRef(prefix.items)
      first = undefined
      last = undefined
    } else {
      backing = undefined
      first = length > 0 ? items[0] : undefined
      last = length > 0 ? items[length - 1] : undefined
    }
    count = length
    return Math.ceil((request.system.length + characters) / 4)
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
