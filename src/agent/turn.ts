/**
 * One turn after admission (docs/spec.md §5.4): steps, the drain points, `turn-stopping`, and the
 * end of the turn. The turn ends by closing the window and appending `turn/end` in one
 * synchronous stretch, so nothing staged can slip between the last drain and the end.
 */
import {
  type EventMap,
  jsonEqual,
  messageOf,
  type ToolCallBlock,
  type TurnEndReason,
  textOf,
} from '../core/index.js'
import type { ModelRequest, StreamPart } from '../providers/provider.js'
import { ResponseAssembler } from './assembler.js'
import { runSerial } from './hooks.js'
import { newMessageId } from './inputs.js'
import { retryDelayMs, sleep } from './retry.js'
import { runToolBatch } from './tool-batch.js'
import type { TurnContext } from './turn-context.js'

/** How a turn ended, and the text of its last assistant message that had text. */
export type TurnOutcome = { readonly reason: TurnEndReason; readonly text?: string }

type StepOutcome =
  | { readonly kind: 'next' }
  | { readonly kind: 'would-end'; readonly reason: 'completed' | 'max-tokens' }
  | { readonly kind: 'canceled' }
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  /** The provider said the prompt is too long: compact, then try again in a new step. */
  | { readonly kind: 'overflow'; readonly message: string }

/** Runs the steps of an admitted turn and ends it. `turn/start` and the drain after admission are done. */
export async function runTurn(context: TurnContext, turn: number): Promise<TurnOutcome> {
  const { signal } = context
  let step = 0
  let stopCount = 0
  let hasCompactedForOverflow = false
  let lastText: string | undefined
  // Set by a `step` or `turn-stopping` listener's stop(): the turn ends at the next check.
  let isStopRequested = false
  const stop = () => {
    isStopRequested = true
  }
  const end = (reason: TurnEndReason): TurnOutcome => {
    // Everything staged until now belongs to this turn, except after a cancel (discarded).
    if (reason.kind !== 'canceled') context.drain(turn)
    context.closeWindow()
    context.session.append('turn/end', { turn, reason })
    return lastText === undefined ? { reason } : { reason, text: lastText }
  }
  const canceled = (): TurnOutcome => end({ kind: 'canceled', cause: context.cancelCause() })

  for (;;) {
    if (signal.aborted) return canceled()
    if (step >= context.maxSteps) return end({ kind: 'step-limit' })
    step++
    await runSerial(context.hooks.list('step'), { turn, step, signal, stop }, (error) =>
      context.reportError('hook:step', error),
    )
    if (signal.aborted) return canceled()
    if (isStopRequested) return end({ kind: 'completed' })
    context.drain(turn)
    // Settings changed by agent.configure() apply from this step on; the step keeps them.
    const stepContext: TurnContext = { ...context, ...context.current() }
    if (isPastThreshold(stepContext)) {
      const result = await context.compact('auto')
      if (result.status === 'error')
        context.reportError('compaction', new Error(result.error.message))
      if (signal.aborted) return canceled()
    }
    context.session.append('step/start', { turn, step })
    const outcome = await runStep(stepContext, turn, step, (text) => {
      lastText = text
    })
    switch (outcome.kind) {
      case 'canceled':
        return canceled()
      case 'error':
        return end({ kind: 'error', code: outcome.code, message: outcome.message })
      case 'next':
        hasCompactedForOverflow = false
        continue
      case 'overflow': {
        // One compaction per overflow: if the prompt still does not fit, the turn ends with the error.
        if (hasCompactedForOverflow)
          return end({ kind: 'error', code: 'context-overflow', message: outcome.message })
        hasCompactedForOverflow = true
        const result = await context.compact('overflow')
        if (signal.aborted) return canceled()
        if (result.status !== 'compacted') {
          const why =
            result.status === 'error'
              ? result.error.message
              : result.status === 'skipped'
                ? result.reason
                : 'canceled'
          return end({
            kind: 'error',
            code: 'context-overflow',
            message: `${outcome.message} (compaction did not help: ${why})`,
          })
        }
        continue
      }
      case 'would-end': {
        if (context.drain(turn)) continue
        await runSerial(
          context.hooks.list('turn-stopping'),
          { turn, stopCount, signal, stop },
          (error) => context.reportError('hook:turn-stopping', error),
        )
        if (signal.aborted) return canceled()
        if (isStopRequested) return end({ kind: outcome.reason })
        if (!context.drain(turn)) return end({ kind: outcome.reason })
        if (stopCount >= context.maxStopContinuations) return end({ kind: 'stop-limit' })
        stopCount++
        continue
      }
    }
  }
}

/** Whether the next request would pass the automatic-compaction threshold. */
function isPastThreshold(context: TurnContext): boolean {
  const { contextWindow, autoThreshold } = context.compaction
  if (contextWindow === undefined || autoThreshold === undefined) return false
  const tools = Math.ceil(JSON.stringify(context.toolSpecs).length / 4)
  return (
    Math.ceil((context.session.transcriptCharacters() + context.system.length) / 4) + tools >
    autoThreshold * contextWindow
  )
}

/** One step: header, request (with retries), assistant message, tools, `step/end`. */
async function runStep(
  context: TurnContext,
  turn: number,
  step: number,
  onText: (text: string) => void,
): Promise<StepOutcome> {
  const { session, signal } = context
  const stepEnd = <T extends StepOutcome>(outcome: T): T => {
    session.append('step/end', { turn, step })
    return outcome
  }
  const header: EventMap['request/header'] = {
    provider: context.provider.id,
    model: context.model,
    system: context.system,
    tools: context.toolSpecs,
    params: context.params,
  }
  if (!context.header.last || !jsonEqual(context.header.last, header)) {
    context.header.last = session.append('request/header', header).data
  }
  // Durability point: the log holds everything the request is built from before it is sent.
  await session.flush()
  if (signal.aborted) return stepEnd({ kind: 'canceled' })

  const request: ModelRequest = {
    model: context.model,
    system: context.system,
    messages: session.messages(),
    tools: context.toolSpecs,
    params: context.params,
  }
  let assembler = new ResponseAssembler()
  let failure: Extract<StreamPart, { type: 'error' }> | undefined
  for (let attempt = 1; ; attempt++) {
    assembler = new ResponseAssembler()
    const maxAttempts = context.retry.maxRetries + 1
    context.emit({ type: 'request/start', turn, step, attempt, maxAttempts })
    failure = await consume(context, request, assembler, (delta) =>
      context.emit({ type: 'assistant/delta', turn, step, attempt, ...delta }),
    )
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
    // A cut-short response keeps its streamed text, so the next request shows what the user saw.
    const partial = assembler.partialContent()
    if (partial.length > 0) {
      session.append('assistant/message', {
        id: newMessageId(),
        content: partial,
        provider: context.provider.id,
        model: context.model,
        stopReason: signal.aborted ? 'canceled' : 'error',
        usage: assembler.usage,
        interrupted: true,
      })
      onText(textOf(partial))
    }
    if (signal.aborted) return stepEnd({ kind: 'canceled' })
    if (failure!.code === 'context-overflow')
      return stepEnd({ kind: 'overflow', message: failure!.message })
    return stepEnd({ kind: 'error', code: failure!.code, message: failure!.message })
  }

  const stopReason = assembler.stopReason ?? 'stop'
  let content = assembler.content()
  // On max-tokens the calls may be cut off mid-arguments: they are dropped and not run.
  if (stopReason === 'max-tokens') content = content.filter((block) => block.type !== 'tool-call')
  session.append('assistant/message', {
    id: newMessageId(),
    content,
    provider: context.provider.id,
    model: context.model,
    stopReason,
    usage: assembler.usage,
  })
  const text = textOf(content)
  if (text !== '') onText(text)
  if (stopReason === 'max-tokens') return stepEnd({ kind: 'would-end', reason: 'max-tokens' })
  const calls = content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
  if (calls.length === 0) return stepEnd({ kind: 'would-end', reason: 'completed' })
  const batch = await runToolBatch(context, turn, step, calls)
  if (batch.isCanceled) return stepEnd({ kind: 'canceled' })
  return stepEnd(
    batch.concludesTurn ? { kind: 'would-end', reason: 'completed' } : { kind: 'next' },
  )
}

/**
 * Reads one response. Returns the failure part if it failed; a stream that throws or ends
 * without a final part counts as a (non-retryable) failure unless the run was aborted.
 */
async function consume(
  context: TurnContext,
  request: ModelRequest,
  assembler: ResponseAssembler,
  onDelta: (delta: { block: number; kind: 'text' | 'thinking'; text: string }) => void,
): Promise<Extract<StreamPart, { type: 'error' }> | undefined> {
  const { signal } = context
  try {
    for await (const part of context.provider.stream(request, signal)) {
      if (signal.aborted) return undefined
      switch (part.type) {
        case 'error':
          return part
        case 'end':
          assembler.stopReason = part.stopReason
          return undefined
        default: {
          const delta = assembler.add(part)
          if (delta) onDelta(delta)
        }
      }
    }
  } catch (error) {
    if (signal.aborted) return undefined
    return {
      type: 'error',
      code: 'provider-threw',
      message: `provider ${context.provider.id} threw instead of ending its stream with an error part: ${messageOf(error)}`,
      retryable: false,
    }
  }
  if (signal.aborted) return undefined
  return {
    type: 'error',
    code: 'stream-incomplete',
    message: `provider ${context.provider.id} ended its stream without an end or error part`,
    retryable: true,
  }
}
