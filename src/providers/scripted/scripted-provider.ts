/**
 * The scripted provider (docs/spec.md §8): a documented, first-class provider that answers each
 * request with the next step of a script. Used by tests, demos and bug reports.
 */
import { type JsonValue, type Message, messageOf, type StopReason } from '../../core/index.js'
import { jsonLength } from '../../core/json-length.js'
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
  const requests: ModelRequest[] = []
  const chunkSize = Math.max(1, options.chunkSize ?? 8)
  const estimateTokens = createTokenEstimator()

  // The stream is kept small: an async generator saves its whole register file at every
  // yield, and the model double's own cost a step is part of what bench B5+ measures.
  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<StreamPart> {
    const number = requests.length + 1
    requests.push(request)
    const entry = steps[number - 1]
    if (entry === undefined) {
      yield exhausted(number, steps.length)
      return
    }
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
    yield { type: 'usage', usage: usageOf(step, calls, estimateTokens(request)) }
    yield { type: 'end', stopReason: step.stop ?? (calls.length > 0 ? 'tool-calls' : 'stop') }
  }

  return { id: options.id ?? 'scripted', model: options.model ?? 'scripted', requests, stream }
}

const NO_CALLS: NonNullable<ScriptStep['toolCalls']> = Object.freeze([])

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
  let first: Message | undefined
  let last: Message | undefined
  // The backing array of the last `messages()` view counted: a later view over the same one
  // holds every message counted, as the array is only ever pushed to (core/prefix-view.ts).
  let backing: readonly unknown[] | undefined
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
      (prefix ? prefix.items === backing : messages[0] === first && messages[count - 1] === last)
    if (!isContinued) {
      count = 0
      characters = 0
    }
    // The length of each new message's `textOf`, summed without joining its text.
    for (let index = count; index < length; index++) {
      const message = items[index]!
      for (const block of message.content)
        if (block.type === 'text') characters += block.text.length
      if (index === 0) first = message
      last = message
    }
    backing = prefix?.items
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
