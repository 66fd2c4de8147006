/**
 * The scripted provider (docs/spec.md §8): a documented, first-class provider that answers each
 * request with the next step of a script. Used by tests, demos and bug reports.
 */
import {
  type JsonValue,
  type Message,
  messageOf,
  type StopReason,
  textOf,
} from '../../core/index.js'
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

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<StreamPart> {
    const number = requests.length + 1
    requests.push(request)
    const entry = steps[number - 1]
    if (entry === undefined) {
      yield {
        type: 'error',
        code: 'script-exhausted',
        message: `scripted provider: request #${number} has no step (the script has ${steps.length}); add a step for it to the script`,
        retryable: false,
      }
      return
    }
    let step: ScriptStep
    try {
      step = typeof entry === 'function' ? await entry(request) : entry
    } catch (error) {
      yield {
        type: 'error',
        code: 'script-error',
        message: `scripted provider: step #${number} threw: ${messageOf(error)}`,
        retryable: false,
      }
      return
    }
    if (step.delayMs !== undefined && step.delayMs > 0) await delay(step.delayMs, signal)
    if (signal.aborted) return
    for (const [type, text] of [
      ['thinking-delta', step.thinking],
      ['text-delta', step.text],
    ] as const) {
      if (text === undefined) continue
      for (let i = 0; i < text.length; i += chunkSize) {
        if (signal.aborted) return
        yield { type, text: text.slice(i, i + chunkSize) }
      }
    }
    if (step.hold) {
      const hold = typeof step.hold === 'function' ? step.hold(signal) : step.hold
      await Promise.race([hold, aborted(signal)])
    }
    if (signal.aborted) return
    if (step.error) {
      yield {
        type: 'error',
        code: step.error.code,
        message: step.error.message,
        retryable: step.error.retryable ?? false,
        ...(step.error.retryAfterMs === undefined ? {} : { retryAfterMs: step.error.retryAfterMs }),
      }
      return
    }
    const calls = step.toolCalls ?? []
    for (const [index, call] of calls.entries()) {
      yield {
        type: 'tool-call',
        id: call.id ?? `call_${number}_${index + 1}`,
        name: call.name,
        args: call.args,
      }
    }
    const output =
      (step.text ?? '').length + (step.thinking ?? '').length + JSON.stringify(calls).length
    yield {
      type: 'usage',
      usage: { inputTokens: estimateTokens(request), outputTokens: Math.ceil(output / 4) },
    }
    yield { type: 'end', stopReason: step.stop ?? (calls.length > 0 ? 'tool-calls' : 'stop') }
  }

  return { id: options.id ?? 'scripted', model: options.model ?? 'scripted', requests, stream }
}

/**
 * A deterministic token estimate (4 characters a token) so usage figures are stable in tests.
 * Kept incrementally across requests: the agent's `messages()` only grows between compactions
 * (decision 0140), so a request that starts with the same first message and still holds the
 * last one counted only adds its new messages; anything else is counted afresh. Without this
 * a long scripted turn costs O(history) a step in the test double alone (bench B5+).
 */
function createTokenEstimator(): (request: ModelRequest) => number {
  let counted: readonly Message[] = []
  let count = 0
  let characters = 0
  return (request) => {
    const messages = request.messages
    const isContinued =
      count > 0 &&
      messages.length >= count &&
      messages[0] === counted[0] &&
      messages[count - 1] === counted[count - 1]
    if (!isContinued) {
      count = 0
      characters = 0
    }
    for (let index = count; index < messages.length; index++)
      characters += textOf(messages[index]!.content).length
    counted = messages
    count = messages.length
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
