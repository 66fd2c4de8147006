/**
 * One turn after admission (docs/spec.md §5.4): steps, the drain points, `turn-stopping`, and the
 * end of the turn. The turn ends by closing the window and appending `turn/end` in one
 * synchronous stretch, so nothing staged can slip between the last drain and the end.
 */
import { appendOwned, type TurnEndReason } from '../core/index.js'
import { jsonLength } from '../core/json-length.js'
import { runSerial } from './hooks.js'
import { runStep } from './step.js'
import type { StepContext, StepSettings, TurnContext } from './turn-context.js'

/** How a turn ended, and the text of its last assistant message that had text. */
export type TurnOutcome = { readonly reason: TurnEndReason; readonly text?: string }

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
  let stepSettings: StepSettings | undefined
  let stepContext = context as StepContext
  // Made once a turn, not once a step (bench B5+).
  const onText = (text: string) => {
    lastText = text
  }
  const onStepError = (error: unknown) => context.reportError('hook:step', error)

  for (;;) {
    if (signal.aborted) return canceled()
    if (step >= context.maxSteps) return end({ kind: 'step-limit' })
    step++
    const stepListeners = context.hooks.list('step')
    // With no listener there is nothing to wait for: the drain follows at once, as it would
    // after listeners that return at once (docs/spec.md §5.4).
    if (stepListeners.length > 0) {
      await runSerial(stepListeners, { turn, step, signal, stop }, onStepError)
      if (signal.aborted) return canceled()
      if (isStopRequested) return end({ kind: 'completed' })
    }
    context.drain(turn)
    // Settings changed by agent.configure() apply from this step on; the step keeps them.
    // The flat context is rebuilt only when they change: a spread of it per step was a third
    // of the loop's allocation (B5+).
    const settings = context.current()
    if (settings !== stepSettings) {
      stepSettings = settings
      stepContext = stepContextOf(context, settings)
    }
    if (isPastThreshold(stepContext)) {
      const result = await context.compact('auto')
      if (result.status === 'error')
        context.reportError('compaction', new Error(result.error.message))
      if (signal.aborted) return canceled()
    }
    // The agent's own data, built here: frozen in place, not copied (decision 0077).
    appendOwned(context.session, 'step/start', { turn, step })
    const outcome = await runStep(stepContext, turn, step, onText)
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

/**
 * A turn's context with one step's settings, written out field by field rather than spread: an
 * object literal's shape is kept by the literal itself, while the shape a spread makes lives
 * only as long as objects of it do. Once an agent was collected, the next agent's step context
 * had a new shape and every function of the loop that had been optimized for the old one was
 * thrown back to the interpreter and compiled again (bench B5+, turns of 1k steps).
 */
function stepContextOf(context: TurnContext, settings: StepSettings): StepContext {
  return {
    session: context.session,
    hooks: context.hooks,
    approve: context.approve,
    maxSteps: context.maxSteps,
    maxStopContinuations: context.maxStopContinuations,
    toolOutput: context.toolOutput,
    retry: context.retry,
    cwd: context.cwd,
    agent: context.agent,
    compaction: context.compaction,
    emit: context.emit,
    hasListeners: context.hasListeners,
    reportError: context.reportError,
    current: context.current,
    signal: context.signal,
    cancelCause: context.cancelCause,
    compact: context.compact,
    stage: context.stage,
    drain: context.drain,
    closeWindow: context.closeWindow,
    provider: settings.provider,
    model: settings.model,
    system: settings.system,
    params: settings.params,
    tools: settings.tools,
    toolSpecs: settings.toolSpecs,
  }
}

/** Whether the next request would pass the automatic-compaction threshold. */
function isPastThreshold(context: StepContext): boolean {
  const { contextWindow, autoThreshold } = context.compaction
  if (contextWindow === undefined || autoThreshold === undefined) return false
  // Measured, not written out: the specs are the same every step (bench B5+).
  const tools = Math.ceil(jsonLength(context.toolSpecs) / 4)
  return (
    Math.ceil((context.session.transcriptCharacters() + context.system.length) / 4) + tools >
    autoThreshold * contextWindow
  )
}
