/**
 * One step of a turn (docs/spec.md §5.4), after `step/start`: the `request/header` if it
 * changed, the request with its retries, the assistant message, the tools, then `step/end`.
 */
import {
  type AssistantBlock,
  appendOwned,
  type EventMap,
  jsonEqual,
  messageOf,
  type ToolCallBlock,
  textOf,
  toFrozenJson,
  type Usage,
} from '../core/index.js'
import type { ModelRequest, StreamPart } from '../providers/provider.js'
import { ResponseAssembler } from './assembler.js'
import { newMessageId } from './inputs.js'
import { retryDelayMs, sleep } from './retry.js'
import { runToolBatch } from './tool-batch.js'
import type { StepContext } from './turn-context.js'

/** What a step leaves the turn to do next. */
export type StepOutcome =
  | { readonly kind: 'next' }
  | { readonly kind: 'would-end'; readonly reason: 'completed' | 'max-tokens' }
  | { readonly kind: 'canceled' }
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  /** The provider said the prompt is too long: compact, then try again in a new step. */
  | { readonly kind: 'overflow'; readonly message: string }

type Failure = Extract<StreamPart, { type: 'error' }>

/** Runs one step; `onText` hears the text of the assistant message logged, if it has any. */
export async function runStep(
  context: StepContext,
  turn: number,
  step: number,
  onText: (text: string) => void,
): Promise<StepOutcome> {
  const { session, signal } = context
  logHeader(context)
  // Durability point: the log holds everything the request is built from before it is sent.
  await session.flush()
  if (signal.aborted) return stepEnd(context, turn, step, CANCELED)

  // The request, with its retries, is written out here rather than in a function of its
  // own: an async call a step is a promise and a frame the loop pays for (bench B5+).
  const request: ModelRequest = {
    model: context.model,
    system: context.system,
    messages: session.messages(),
    tools: context.toolSpecs,
    params: context.params,
  }
  const maxAttempts = context.retry.maxRetries + 1
  let assembler: ResponseAssembler
  let failure: Failure | undefined
  for (let attempt = 1; ; attempt++) {
    assembler = new ResponseAssembler()
    failure = undefined
    // Built only when someone listens: a step of an unwatched agent makes no notification.
    if (context.hasListeners())
      context.emit({ type: 'request/start', turn, step, attempt, maxAttempts })
    // Reading the response: a stream that throws or ends without a final part counts as a
    // failure unless the run was aborted.
    let isEnded = false
    try {
      for await (const part of context.provider.stream(request, signal)) {
        if (signal.aborted) break
        if (part.type === 'error') failure = part
        else if (part.type === 'end') assembler.stopReason = part.stopReason
        else {
          const delta = assembler.add(part, context.hasListeners())
          if (delta) context.emit({ type: 'assistant/delta', turn, step, attempt, ...delta })
          continue
        }
        isEnded = true
        break
      }
    } catch (error) {
      if (!signal.aborted)
        failure = {
          type: 'error',
          code: 'provider-threw',
          message: `provider ${context.provider.id} threw instead of ending its stream with an error part: ${messageOf(error)}`,
          retryable: false,
        }
      isEnded = true
    }
    if (!isEnded && !signal.aborted)
      failure = {
        type: 'error',
        code: 'stream-incomplete',
        message: `provider ${context.provider.id} ended its stream without an end or error part`,
        retryable: true,
      }
    if (!failure?.retryable || signal.aborted || attempt > context.retry.maxRetries) break
    const delayMs = retryDelayMs(context.retry, attempt, failure.retryAfterMs)
    context.emit({
      type: 'request/retry',
      turn,
      step,
      attempt: attempt + 1,
      maxAttempts,
      delayMs,
      provider: context.provider.id,
      model: context.model,
      error: { code: failure.code, message: failure.message },
    })
    await sleep(delayMs, signal)
    if (signal.aborted) break
  }

  if (signal.aborted || failure) {
    recordPartial(context, assembler, onText)
    if (signal.aborted || !failure) return stepEnd(context, turn, step, CANCELED)
    if (failure.code === 'context-overflow')
      return stepEnd(context, turn, step, { kind: 'overflow', message: failure.message })
    return stepEnd(context, turn, step, {
      kind: 'error',
      code: failure.code,
      message: failure.message,
    })
  }
  const { calls, logged } = recordResponse(context, assembler, onText)
  if (assembler.stopReason === 'max-tokens') return stepEnd(context, turn, step, MAX_TOKENS)
  if (calls.length === 0) return stepEnd(context, turn, step, COMPLETED)
  const batch = await runToolBatch(context, turn, step, calls, logged)
  if (batch.isCanceled) return stepEnd(context, turn, step, CANCELED)
  return stepEnd(context, turn, step, batch.concludesTurn ? COMPLETED : NEXT)
}

// The outcomes that carry nothing of their own, made once.
const NEXT: StepOutcome = Object.freeze({ kind: 'next' })
const CANCELED: StepOutcome = Object.freeze({ kind: 'canceled' })
const COMPLETED: StepOutcome = Object.freeze({ kind: 'would-end', reason: 'completed' })
const MAX_TOKENS: StepOutcome = Object.freeze({ kind: 'would-end', reason: 'max-tokens' })

function stepEnd(context: StepContext, turn: number, step: number, outcome: StepOutcome) {
  appendOwned(context.session, 'step/end', { turn, step })
  return outcome
}

/**
 * The header each step context was last found to match. A step context's settings are fixed
 * (turn.ts builds a new one when `agent.configure()` changes them) but for `params`, the
 * caller's object, so after one full comparison a step compares only `params`: comparing the
 * tool schemas every step was a steady cost of the loop (bench B5+).
 */
const matchedHeaders = new WeakMap<StepContext, EventMap['request/header']>()

/** Logs a `request/header` when the settings differ from the last one logged. */
function logHeader(context: StepContext): void {
  const last = context.session.requestHeader()
  if (last && matchedHeaders.get(context) === last && jsonEqual(last.params, context.params)) return
  const header = {
    provider: context.provider.id,
    model: context.model,
    system: context.system,
    tools: context.toolSpecs,
    params: context.params,
  }
  const matched =
    last && jsonEqual(last, header) ? last : context.session.append('request/header', header).data
  matchedHeaders.set(context, matched)
}

/** A cut-short response keeps its streamed text, so the next request shows what the user saw. */
function recordPartial(
  context: StepContext,
  assembler: ResponseAssembler,
  onText: (text: string) => void,
): void {
  const partial = assembler.partialContent()
  if (partial.length === 0) return
  context.session.append('assistant/message', {
    id: newMessageId(),
    content: partial,
    provider: context.provider.id,
    model: context.model,
    stopReason: context.signal.aborted ? 'canceled' : 'error',
    usage: assembler.usage,
    interrupted: true,
  })
  onText(textOf(partial))
}

/**
 * The calls of a logged response: `calls` as the provider made them (the tools and hooks get
 * these objects), `logged` the same calls as the assistant message's blocks hold them (frozen
 * copies of the arguments: the `tool/call` events take these over, decision 0079).
 */
type RecordedCalls = { readonly calls: ToolCallBlock[]; readonly logged: ToolCallBlock[] }

const NO_CALLS: RecordedCalls = Object.freeze({ calls: [], logged: [] })

/**
 * Logs the complete response and returns its calls; on max-tokens its calls may be cut off, so
 * they are dropped.
 */
function recordResponse(
  context: StepContext,
  assembler: ResponseAssembler,
  onText: (text: string) => void,
): RecordedCalls {
  const stopReason = assembler.stopReason ?? 'stop'
  let content = assembler.content()
  if (stopReason === 'max-tokens') content = content.filter((block) => block.type !== 'tool-call')
  // Counted first so that a response without text or calls makes no array for them.
  let texts = 0
  let callCount = 0
  for (const block of content) {
    if (block.type === 'text') texts++
    else if (block.type === 'tool-call') callCount++
  }
  const recorded: RecordedCalls =
    callCount === 0 ? NO_CALLS : { calls: new Array(callCount), logged: new Array(callCount) }
  // Built here for the log and handed over: frozen in place, not copied (decision 0077). What
  // came from the provider is copied: the calls' arguments (the tools get the provider's
  // objects, as before) and the usage.
  appendOwned(context.session, 'assistant/message', {
    id: newMessageId(),
    content: loggedContent(content, recorded),
    provider: context.provider.id,
    model: context.model,
    stopReason,
    usage: toFrozenJson(assembler.usage, APPEND_ASSISTANT, 'data.usage') as Usage,
  })
  if (texts > 0) {
    const text = textOf(content)
    if (text !== '') onText(text)
  }
  return recorded
}

const APPEND_ASSISTANT = 'cannot append "assistant/message"'

// `data.content[i].args`, named in the error when a call's arguments are not JSON: made once per
// index rather than for every call (bench B5+).
const argsPaths: string[] = []
function argsPath(index: number): string {
  if (index >= 64) return `data.content[${index}].args`
  argsPaths[index] ??= `data.content[${index}].args`
  return argsPaths[index]
}

/**
 * The assembler's content as the log takes it over: its text and thinking blocks (made by the
 * assembler for this message alone), and new call blocks holding a frozen copy of each call's
 * arguments, so the blocks the tools run with stay the assembler's. Puts each call in
 * `recorded`: the assembler's block and the logged one.
 */
function loggedContent(
  content: readonly AssistantBlock[],
  recorded: RecordedCalls,
): AssistantBlock[] {
  const logged: AssistantBlock[] = new Array(content.length)
  let index = 0
  let call = 0
  for (const block of content) {
    if (block.type === 'tool-call') {
      const copy: ToolCallBlock = {
        type: 'tool-call',
        id: block.id,
        name: block.name,
        args: toFrozenJson(block.args, APPEND_ASSISTANT, argsPath(index)),
      }
      recorded.calls[call] = block
      recorded.logged[call++] = copy
      logged[index] = copy
    } else logged[index] = block
    index++
  }
  return logged
}
