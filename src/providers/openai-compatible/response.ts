/**
 * Reading a Chat Completions stream: chunks in, stream parts out. Text and reasoning are passed
 * on as they arrive; tool calls are assembled from their fragments and passed on, complete, when
 * the choice finishes; usage comes last, then `end`.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions'
import type { StopReason, Usage } from '../../core/index.js'
import { abortedPart, incompleteResponsePart } from '../failure.js'
import type { StreamPart } from '../provider.js'
import { parseToolArguments } from '../tool-arguments.js'

type PendingCall = { id: string; name: string; readonly fragments: string[] }

/** Fields some servers add to a delta: DeepSeek and older vLLM `reasoning_content`, others `reasoning`. */
type ReasoningDelta = { readonly reasoning_content?: unknown; readonly reasoning?: unknown }
/** DeepSeek reports cache hits outside `prompt_tokens_details`. */
type DeepSeekUsage = { readonly prompt_cache_hit_tokens?: unknown }

/**
 * Turns the chunks of one response into stream parts, ending with `end`, or with an error part
 * when the stream stops before a finish reason (aborted, or cut off). Errors thrown by `chunks`
 * before the finish reason propagate to the caller; after it they are ignored, since the
 * response is already complete and only the usage chunk can be missing.
 */
export async function* readChatStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
  provider: string,
  signal: AbortSignal,
): AsyncGenerator<StreamPart, void, undefined> {
  const calls: PendingCall[] = []
  const callAtIndex = new Map<number, PendingCall>()
  let finishReason: string | undefined
  let usage: Usage | undefined

  try {
    for await (const chunk of chunks) {
      if (chunk.usage) usage = toUsage(chunk.usage)
      // Rudder asks for one choice; a server that sends more is answered from the first.
      const choice = chunk.choices?.find((c) => c.index === 0) ?? chunk.choices?.[0]
      if (!choice) continue
      const delta = choice.delta ?? {}
      const reasoning = reasoningOf(delta as ReasoningDelta)
      if (reasoning !== '') yield { type: 'thinking-delta', text: reasoning }
      if (typeof delta.content === 'string' && delta.content !== '')
        yield { type: 'text-delta', text: delta.content }
      for (const fragment of delta.tool_calls ?? []) {
        let call = callAtIndex.get(fragment.index)
        // Some servers (Ollama) number every call of a parallel batch 0 and tell them apart by
        // id: a new id at a used index starts a new call.
        if (!call || (fragment.id && call.id && fragment.id !== call.id)) {
          call = { id: '', name: '', fragments: [] }
          callAtIndex.set(fragment.index, call)
          calls.push(call)
        }
        if (fragment.id && !call.id) call.id = fragment.id
        if (fragment.function?.name && !call.name) call.name = fragment.function.name
        if (fragment.function?.arguments) call.fragments.push(fragment.function.arguments)
      }
      if (choice.finish_reason && finishReason === undefined) {
        finishReason = choice.finish_reason
        yield* completedCalls(calls)
      }
    }
  } catch (error) {
    if (finishReason === undefined) throw error
    // The response finished; a failure while waiting for the usage chunk loses only the counts.
  }

  if (finishReason === undefined) {
    yield signal.aborted ? abortedPart(provider) : incompleteResponsePart(provider)
    return
  }
  if (usage) yield { type: 'usage', usage }
  yield { type: 'end', stopReason: toStopReason(finishReason, calls.length > 0) }
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

function reasoningOf(delta: ReasoningDelta): string {
  if (typeof delta.reasoning_content === 'string') return delta.reasoning_content
  if (typeof delta.reasoning === 'string') return delta.reasoning
  return ''
}

/**
 * `length` is max-tokens. A response with tool calls asks for them even when the server says
 * `stop` (Ollama does). `content_filter` and unknown reasons end the response normally: the text
 * so far is what the model was allowed to say.
 */
function toStopReason(finishReason: string, hasToolCalls: boolean): StopReason {
  if (finishReason === 'length') return 'max-tokens'
  if (hasToolCalls || finishReason === 'tool_calls' || finishReason === 'function_call')
    return 'tool-calls'
  return 'stop'
}

/** Token counts. `inputTokens` counts the whole prompt, cached part included. */
function toUsage(usage: NonNullable<ChatCompletionChunk['usage']>): Usage {
  const deepSeekHits = (usage as DeepSeekUsage).prompt_cache_hit_tokens
  const cached =
    usage.prompt_tokens_details?.cached_tokens ??
    (typeof deepSeekHits === 'number' ? deepSeekHits : undefined)
  const reasoning = usage.completion_tokens_details?.reasoning_tokens
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    ...(typeof cached === 'number' ? { cacheReadTokens: cached } : {}),
    ...(typeof reasoning === 'number' ? { reasoningTokens: reasoning } : {}),
  }
}
