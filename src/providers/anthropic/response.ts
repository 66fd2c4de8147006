/**
 * Reading an Anthropic Messages stream: events in, stream parts out. Text and thinking pass on as
 * they arrive; a `signature_delta` closes its thinking block; a tool call is passed on, complete,
 * when its block stops; usage comes last, then `end`.
 */
import type {
  MessageDeltaUsage,
  RawMessageStreamEvent,
  Usage as WireUsage,
} from '@anthropic-ai/sdk/resources/messages'
import type { StopReason, Usage } from '../../core/index.js'
import {
  abortedPart,
  httpFailurePart,
  incompleteResponsePart,
  invalidResponsePart,
} from '../failure.js'
import type { StreamPart } from '../provider.js'
import type { ReadContext } from '../sdk-stream.js'
import type { ServerSentEvent } from '../sse.js'
import { parseToolArguments } from '../tool-arguments.js'
import { REDACTED_THINKING_PREFIX } from './request.js'

type PendingCall = { readonly id: string; readonly name: string; readonly fragments: string[] }

type Counts = {
  input: number
  output: number
  cacheRead: number | undefined
  cacheWrite: number | undefined
}

/** The `error` event: `{"type":"error","error":{"type":"overloaded_error","message":"…"}}`. */
type ErrorEvent = {
  readonly type: 'error'
  readonly error?: { readonly type?: unknown; readonly message?: unknown } | null
}

/** What a new tool call costs against the size cap besides its text (see the OpenAI reader). */
const CALL_COST = 32

/**
 * Turns the events of one response into stream parts, ending with exactly one `end` or `error`.
 *
 * The response is complete at `message_stop`, or when the body ends after a `message_delta`
 * gave the stop reason (a proxy may leave out `message_stop`). A body that ends before both is
 * cut off (`incomplete-response`, retryable). An `error` event ends the stream with its error
 * part, after the usage counted so far; so does an event that is not JSON. Errors thrown by
 * `events` before completion propagate to the caller after that usage; after completion they
 * are ignored. `ping` events are keep-alives: they do not hold off the idle timeout.
 */
export async function* readMessageStream(
  events: AsyncIterable<ServerSentEvent>,
  context: ReadContext,
): AsyncGenerator<StreamPart, void, undefined> {
  const { provider } = context
  const state: ReadState = {
    calls: new Map(),
    counts: { input: 0, output: 0, cacheRead: undefined, cacheWrite: undefined },
    stopReason: null,
    sawToolCall: false,
    sawUsage: false,
    isStopped: false,
  }
  // Before a failure: the counts so far, unless the caller aborted and wants nothing more.
  const usagePart = (): StreamPart[] =>
    state.sawUsage && !context.signal.aborted
      ? [{ type: 'usage', usage: toUsage(state.counts) }]
      : []
  const isComplete = () => state.isStopped || state.stopReason !== null
  try {
    for await (const sse of events) {
      const event = parseEvent(sse.data)
      if (typeof event === 'string') {
        if (isComplete()) break
        yield* usagePart()
        yield invalidResponsePart(provider, event)
        return
      }
      if (event.type === 'ping') continue
      if (event.type === 'error') {
        if (isComplete()) break
        yield* usagePart()
        yield errorEventPart(event as ErrorEvent, context)
        return
      }
      let parts: StreamPart[]
      try {
        const known = event as RawMessageStreamEvent
        context.guard.progress(costOf(known))
        parts = [...partsOf(known, state)]
      } catch (error) {
        // A field the Messages API always sends is missing (`delta`, `content_block`, …).
        if (!(error instanceof TypeError)) throw error
        yield* usagePart()
        const what = `a ${JSON.stringify(event.type)} event lacks a field the Messages API sends`
        yield invalidResponsePart(provider, `${what} (${error.message})`)
        return
      }
      yield* parts
      if (state.isStopped) break
    }
  } catch (error) {
    if (!isComplete()) {
      yield* usagePart()
      throw error
    }
    // The response was complete; a failure while the connection closes loses nothing.
  }
  if (!isComplete()) {
    yield* usagePart()
    yield context.signal.aborted ? abortedPart(provider) : incompleteResponsePart(provider)
    return
  }
  yield { type: 'usage', usage: toUsage(state.counts) }
  yield { type: 'end', stopReason: toStopReason(state.stopReason, state.sawToolCall) }
}

/** The event, or what is wrong with it. */
function parseEvent(data: string): { readonly type?: unknown } | string {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch (error) {
    return `an event is not valid JSON (${(error as Error).message})`
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `an event is ${JSON.stringify(value)?.slice(0, 80)}, not a JSON object`
  return value
}

function errorEventPart(event: ErrorEvent, context: ReadContext) {
  const type = event.error?.type
  const message = event.error?.message
  return httpFailurePart({
    provider: context.provider,
    headers: context.headers,
    ...(typeof type === 'string' && type !== '' ? { code: type } : {}),
    message: typeof message === 'string' ? message : JSON.stringify(event).slice(0, 500),
  })
}

/** The characters an event adds to the response, for the size cap. */
function costOf(event: RawMessageStreamEvent): number {
  if (event.type === 'content_block_delta') {
    const delta = event.delta
    if (delta.type === 'text_delta') return delta.text.length
    if (delta.type === 'thinking_delta') return delta.thinking.length
    if (delta.type === 'signature_delta') return delta.signature.length
    if (delta.type === 'input_json_delta') return delta.partial_json.length
    return 0
  }
  if (event.type !== 'content_block_start') return 0
  const block = event.content_block
  if (block.type === 'text') return block.text.length
  if (block.type === 'thinking') return block.thinking.length
  if (block.type === 'redacted_thinking') return block.data.length
  if (block.type === 'tool_use') return CALL_COST + block.id.length + block.name.length
  return 0
}

type ReadState = {
  readonly calls: Map<number, PendingCall>
  readonly counts: Counts
  stopReason: string | null
  sawToolCall: boolean
  /** Whether any event carried usage (they all do on Anthropic's own API). */
  sawUsage: boolean
  isStopped: boolean
}

function* partsOf(event: RawMessageStreamEvent, state: ReadState): Generator<StreamPart> {
  switch (event.type) {
    case 'message_start':
      if (takeCounts(state.counts, event.message?.usage)) state.sawUsage = true
      return
    case 'content_block_start': {
      const block = event.content_block
      if (block.type === 'text' && block.text !== '') yield { type: 'text-delta', text: block.text }
      else if (block.type === 'thinking' && block.thinking !== '')
        yield { type: 'thinking-delta', text: block.thinking }
      else if (block.type === 'redacted_thinking')
        yield { type: 'thinking-delta', text: '', signature: REDACTED_THINKING_PREFIX + block.data }
      else if (block.type === 'tool_use') {
        const start = JSON.stringify(block.input ?? {})
        // The input usually streams as `input_json_delta`; a start input other than `{}` is the
        // whole input already.
        const fragments = start === '{}' ? [] : [start]
        state.calls.set(event.index, { id: block.id, name: block.name, fragments })
      }
      // Server-tool blocks are never requested by rudder; nothing else starts a block.
      return
    }
    case 'content_block_delta': {
      const delta = event.delta
      if (delta.type === 'text_delta') yield { type: 'text-delta', text: delta.text }
      else if (delta.type === 'thinking_delta')
        yield { type: 'thinking-delta', text: delta.thinking }
      else if (delta.type === 'signature_delta')
        yield { type: 'thinking-delta', text: '', signature: delta.signature }
      else if (delta.type === 'input_json_delta')
        state.calls.get(event.index)?.fragments.push(delta.partial_json)
      // citations_delta: rudder's text blocks carry no citations.
      return
    }
    case 'content_block_stop': {
      const call = state.calls.get(event.index)
      if (!call) return
      state.calls.delete(event.index)
      state.sawToolCall = true
      const args = parseToolArguments(call.fragments.join(''))
      yield { type: 'tool-call', id: call.id, name: call.name, args }
      return
    }
    case 'message_delta':
      state.stopReason = event.delta?.stop_reason ?? state.stopReason
      if (takeCounts(state.counts, event.usage)) state.sawUsage = true
      return
    case 'message_stop':
      state.isStopped = true
      return
    default:
      // The API may add event types (its versioning policy says so); unknown ones are skipped.
      return
  }
}

/**
 * `message_delta` counts are cumulative: the latest value of each field wins. Returns whether
 * there were counts.
 */
function takeCounts(
  counts: Counts,
  usage: WireUsage | MessageDeltaUsage | null | undefined,
): boolean {
  if (!usage) return false
  if (typeof usage.input_tokens === 'number') counts.input = usage.input_tokens
  if (typeof usage.output_tokens === 'number') counts.output = usage.output_tokens
  if (typeof usage.cache_read_input_tokens === 'number')
    counts.cacheRead = usage.cache_read_input_tokens
  if (typeof usage.cache_creation_input_tokens === 'number')
    counts.cacheWrite = usage.cache_creation_input_tokens
  return true
}

/**
 * `inputTokens` counts the whole prompt, as the OpenAI adapter does: Anthropic's `input_tokens`
 * leaves out what was read from or written to the cache, so those are added.
 */
function toUsage(counts: Counts): Usage {
  return {
    inputTokens: counts.input + (counts.cacheRead ?? 0) + (counts.cacheWrite ?? 0),
    outputTokens: counts.output,
    ...(counts.cacheRead === undefined ? {} : { cacheReadTokens: counts.cacheRead }),
    ...(counts.cacheWrite === undefined ? {} : { cacheWriteTokens: counts.cacheWrite }),
  }
}

/**
 * `max_tokens` and `model_context_window_exceeded` (the output ran into the window) are
 * max-tokens; `tool_use` asks for tools. `end_turn`, `stop_sequence`, `pause_turn` and `refusal`
 * end the response normally with what the model said.
 */
function toStopReason(stopReason: string | null, sawToolCall: boolean): StopReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max-tokens'
    case 'tool_use':
      return 'tool-calls'
    default:
      return sawToolCall ? 'tool-calls' : 'stop'
  }
}
