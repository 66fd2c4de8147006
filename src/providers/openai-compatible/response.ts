/**
 * Reading a Chat Completions stream: events in, stream parts out. Text and reasoning are passed
 * on as they arrive; tool calls are assembled from their fragments and passed on, complete, when
 * the choice finishes (or the stream ends with `[DONE]`); usage comes last, then `end`.
 */
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
import { type ChunkUsage, contentPartsOf, type WireChunk } from './wire-chunk.js'

type PendingCall = { id: string; name: string; readonly fragments: string[] }

/**
 * What a new call costs against the size cap besides its text: the bookkeeping of a call, so
 * that an endless run of empty calls also ends.
 */
const CALL_COST = 32

/**
 * Turns the events of one response into stream parts, ending with exactly one `end` or `error`.
 *
 * The response is complete at its finish reason, or at `[DONE]` without one (Snowflake Cortex,
 * some OpenRouter routes): then the stop reason is inferred, `tool-calls` if calls were seen,
 * else `stop`. A body that ends before both is cut off (`incomplete-response`, retryable). An
 * error object in a chunk ends the stream with its error part, after the usage the chunk (or an
 * earlier one) carried. Errors thrown by `events` before completion propagate to the caller,
 * after the usage seen so far; after completion they are ignored, since only the usage chunk can
 * be missing.
 */
export async function* readChatStream(
  events: AsyncIterable<ServerSentEvent>,
  context: ReadContext,
): AsyncGenerator<StreamPart, void, undefined> {
  const { provider, guard } = context
  const calls: PendingCall[] = []
  const callAtIndex = new Map<number, PendingCall>()
  let finishReason: string | undefined
  let isDone = false
  let usage: Usage | undefined
  // Before the end or a failure: the counts, unless the caller aborted and wants nothing more.
  const usagePart = (): StreamPart[] =>
    usage && !context.signal.aborted ? [{ type: 'usage', usage }] : []

  try {
    for await (const event of events) {
      if (event.data.trim() === '[DONE]') {
        isDone = true
        break
      }
      const chunk = parseChunk(event.data)
      if (typeof chunk === 'string') {
        yield* usagePart()
        yield invalidResponsePart(provider, chunk)
        return
      }
      if (isObject(chunk.usage)) usage = toUsage(chunk.usage)
      if (isObject(chunk.error) && finishReason === undefined) {
        yield* usagePart()
        yield inStreamErrorPart(chunk.error, context)
        return
      }
      // Rudder asks for one choice; a server that sends more is answered from the first.
      const choices = Array.isArray(chunk.choices) ? chunk.choices.filter(isObject) : []
      const choice = choices.find((c) => c.index === 0) ?? choices[0]
      const delta = isObject(choice?.delta) ? choice.delta : {}
      const parts = contentPartsOf(delta)
      let cost = 0
      for (const part of parts) cost += part.text.length
      const fragments = Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObject) : []
      for (const fragment of fragments) {
        const index = typeof fragment.index === 'number' ? fragment.index : 0
        let call = callAtIndex.get(index)
        // Some servers (Ollama) number every call of a parallel batch 0 and tell them apart by
        // id: a new id at a used index starts a new call.
        if (!call || (fragment.id && call.id && fragment.id !== call.id)) {
          call = { id: '', name: '', fragments: [] }
          callAtIndex.set(index, call)
          calls.push(call)
          cost += CALL_COST
        }
        if (typeof fragment.id === 'string' && fragment.id && !call.id) {
          call.id = fragment.id
          cost += call.id.length
        }
        const name = isObject(fragment.function) ? fragment.function.name : undefined
        if (typeof name === 'string' && name && !call.name) {
          call.name = name
          cost += name.length
        }
        const args = isObject(fragment.function) ? fragment.function.arguments : undefined
        if (typeof args === 'string' && args !== '') {
          call.fragments.push(args)
          cost += args.length
        }
      }
      guard.progress(cost)
      yield* parts.map((part): StreamPart => ({ type: part.kind, text: part.text }))
      const finish = choice?.finish_reason
      if (typeof finish === 'string' && finish !== '' && finishReason === undefined) {
        finishReason = finish
        yield* completedCalls(calls)
      }
    }
  } catch (error) {
    if (finishReason === undefined) {
      yield* usagePart()
      throw error
    }
    // The response finished; a failure while waiting for the usage chunk loses only the counts.
  }

  if (finishReason === undefined) {
    if (!isDone) {
      yield* usagePart()
      yield context.signal.aborted ? abortedPart(provider) : incompleteResponsePart(provider)
      return
    }
    // `[DONE]` after no finish reason: a normal end from a server that does not send one.
    yield* completedCalls(calls)
  }
  yield* usagePart()
  yield { type: 'end', stopReason: toStopReason(finishReason, calls.length > 0) }
}

function isObject<T>(value: T): value is T & object {
  return typeof value === 'object' && value !== null
}

/** The chunk, or what is wrong with it. */
function parseChunk(data: string): WireChunk | string {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch (error) {
    return `an event is not valid JSON (${(error as Error).message})`
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `an event is ${JSON.stringify(value)?.slice(0, 80)}, not a JSON object`
  return value as WireChunk
}

function* completedCalls(calls: readonly PendingCall[]): Generator<StreamPart> {
  for (const call of calls) {
    yield {
      type: 'tool-call',
      // A few local servers send calls without ids; the agent needs one to pair the result.
      id: call.id || `call_${crypto.randomUUID()}`,
      name: call.name,
      args: parseToolArguments(call.fragments.join('')),
    }
  }
}

/** An error object sent inside the stream (OpenAI's `server_error`, OpenRouter's mid-stream failures). */
function inStreamErrorPart(error: NonNullable<WireChunk['error']>, context: ReadContext) {
  const code = typeof error.code === 'string' || typeof error.code === 'number' ? error.code : null
  const type = typeof error.type === 'string' ? error.type : undefined
  const codeText = code !== null && code !== '' ? String(code) : type
  return httpFailurePart({
    provider: context.provider,
    headers: context.headers,
    ...(codeText ? { code: codeText } : {}),
    message:
      typeof error.message === 'string' ? error.message : JSON.stringify(error).slice(0, 500),
  })
}

/**
 * `length` is max-tokens. A response with tool calls asks for them even when the server says
 * `stop` (Ollama does). `content_filter` and unknown reasons end the response normally: the text
 * so far is what the model was allowed to say. No reason at all (a `[DONE]`-ended stream) is
 * `stop`, or `tool-calls` when there were calls.
 */
function toStopReason(finishReason: string | undefined, hasToolCalls: boolean): StopReason {
  if (finishReason === 'length') return 'max-tokens'
  if (hasToolCalls || finishReason === 'tool_calls' || finishReason === 'function_call')
    return 'tool-calls'
  return 'stop'
}

/** Token counts. `inputTokens` counts the whole prompt, cached part included. */
function toUsage(usage: ChunkUsage): Usage {
  const count = (value: unknown) => (typeof value === 'number' ? value : undefined)
  const cached =
    count(usage.prompt_tokens_details?.cached_tokens) ?? count(usage.prompt_cache_hit_tokens)
  const reasoning = count(usage.completion_tokens_details?.reasoning_tokens)
  return {
    inputTokens: count(usage.prompt_tokens) ?? 0,
    outputTokens: count(usage.completion_tokens) ?? 0,
    ...(cached === undefined ? {} : { cacheReadTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  }
}
