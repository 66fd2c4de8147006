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
import { abortedPart, incompleteResponsePart } from '../failure.js'
import type { StreamPart } from '../provider.js'
import { parseToolArguments } from '../tool-arguments.js'
import { REDACTED_THINKING_PREFIX } from './request.js'

type PendingCall = { readonly id: string; readonly name: string; readonly fragments: string[] }

type Counts = {
  input: number
  output: number
  cacheRead: number | undefined
  cacheWrite: number | undefined
}

/**
 * Turns the events of one response into stream parts, ending with `end`, or with an error part
 * when the stream stops before `message_stop` (aborted, or cut off). Errors thrown by `events`
 * (an `error` event, a malformed line, a broken connection) before `message_stop` propagate to
 * the caller; after it the response is complete and they are ignored.
 */
export async function* readMessageStream(
  events: AsyncIterable<RawMessageStreamEvent>,
  provider: string,
  signal: AbortSignal,
): AsyncGenerator<StreamPart, void, undefined> {
  const state: ReadState = {
    calls: new Map(),
    counts: { input: 0, output: 0, cacheRead: undefined, cacheWrite: undefined },
    stopReason: null,
    sawToolCall: false,
    isStopped: false,
  }
  try {
    for await (const event of events) yield* partsOf(event, state)
  } catch (error) {
    if (!state.isStopped) throw error
    // The response was complete; a failure while the connection closes loses nothing.
  }
  if (!state.isStopped) {
    yield signal.aborted ? abortedPart(provider) : incompleteResponsePart(provider)
    return
  }
  yield { type: 'usage', usage: toUsage(state.counts) }
  yield { type: 'end', stopReason: toStopReason(state.stopReason, state.sawToolCall) }
}

type ReadState = {
  readonly calls: Map<number, PendingCall>
  readonly counts: Counts
  stopReason: string | null
  sawToolCall: boolean
  isStopped: boolean
}

function* partsOf(event: RawMessageStreamEvent, state: ReadState): Generator<StreamPart> {
  switch (event.type) {
    case 'message_start':
      takeCounts(state.counts, event.message.usage)
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
      state.stopReason = event.delta.stop_reason ?? state.stopReason
      takeCounts(state.counts, event.usage)
      return
    case 'message_stop':
      state.isStopped = true
      return
    default:
      // The API may add event types (its versioning policy says so); unknown ones are skipped.
      return
  }
}

/** `message_delta` counts are cumulative: the latest value of each field wins. */
function takeCounts(counts: Counts, usage: WireUsage | MessageDeltaUsage | null | undefined): void {
  if (!usage) return
  if (typeof usage.input_tokens === 'number') counts.input = usage.input_tokens
  if (typeof usage.output_tokens === 'number') counts.output = usage.output_tokens
  if (typeof usage.cache_read_input_tokens === 'number')
    counts.cacheRead = usage.cache_read_input_tokens
  if (typeof usage.cache_creation_input_tokens === 'number')
    counts.cacheWrite = usage.cache_creation_input_tokens
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
