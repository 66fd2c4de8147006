/**
 * The loop that takes the queue in order (docs/spec.md §5.2–§5.5): admit a prompt, open a
 * continuation, or compact between turns; then the next waking entry, or idle. It owns the
 * phase changes of a run; `createAgent` owns the ones of the caller's calls.
 */
import {
  appendOwned,
  applyCrashRepair,
  crashRepairOfState,
  type DeliveryResult,
  messageOf,
  RudderError,
  type Session,
} from '../core/index.js'
import type { CompactResult } from './compaction.js'
import { raceAbort } from './deferred.js'
import { type HookRegistry, type PromptSubmitResult, runWaterfall } from './hooks.js'
import type { CompactEntry, ContinueEntry, Inbox, PromptEntry, QueuedEntry } from './inbox.js'
import { newMessageId } from './inputs.js'
import { checkAdmission, deliveryResult } from './outcomes.js'
import { type AgentPhase, newRun, type Run, runOf } from './phase.js'
import type { TurnOutcome } from './turn.js'

export type DriverOptions = {
  readonly session: Session
  readonly inbox: Inbox
  readonly hooks: HookRegistry
  /** Resolves when the `session-start` listeners are done: no turn opens before. */
  readonly sessionStart: Promise<void>
  /** The number of the last turn in the log. */
  readonly turns: { last: number }
  readonly phase: () => AgentPhase
  /** Moves to the next phase (checked against the table of phase.ts) and announces the status. */
  readonly moveTo: (next: AgentPhase) => void
  readonly reportError: (source: string, error: unknown) => void
  /** Runs the steps of an admitted turn (turn/start and the first drain done) and ends it. */
  readonly runTurn: (run: Run, turn: number) => Promise<TurnOutcome>
  readonly compact: (signal: AbortSignal, instructions?: string) => Promise<CompactResult>
  /** Nothing runs and nothing waking is queued. */
  readonly onIdle: () => void
}

export type Driver = {
  /** Starts the loop if nothing runs and something waking is queued. */
  startIfIdle(): void
  /** The current loop (resolved when idle). */
  readonly driving: Promise<void>
}

export function createDriver(options: DriverOptions): Driver {
  const { session, inbox, turns } = options
  let driving: Promise<void> = Promise.resolve()

  /** Takes the next waking entry and moves into its phase; undefined when nothing wakes. */
  function beginNext(): { entry: QueuedEntry; run: Run } | undefined {
    const entry = inbox.takeNext()
    if (!entry) return undefined
    const run = newRun()
    switch (entry.kind) {
      case 'prompt':
        options.moveTo({ kind: 'admitting', run, prompt: entry, isWindowOpen: true })
        break
      case 'continue':
        options.moveTo({ kind: 'running', run, isWindowOpen: false })
        break
      case 'compact':
        options.moveTo({ kind: 'compacting', run })
        break
    }
    return { entry, run }
  }

  async function drive(): Promise<void> {
    try {
      for (let next = beginNext(); next; ) {
        const { entry, run } = next
        await options.sessionStart
        // A resumed session reads the history its projection needs before its first turn or
        // compaction, not at open (docs/spec.md §9.2). Not canceled with the run: a cancel
        // arriving meanwhile is seen by the run once it starts.
        if (!session.isProjectionLoaded) await session.loadProjection()
        switch (entry.kind) {
          case 'prompt':
            await admit(entry, run)
            break
          case 'continue':
            await startContinuation(entry, run)
            break
          case 'compact':
            await compactBetweenTurns(entry, run)
            break
        }
        next = beginNext()
        if (!next) becomeIdle()
        for (const settle of run.settlements.splice(0)) settle()
      }
    } catch (error) {
      stop(error, runOf(options.phase()))
    }
  }

  function becomeIdle(): void {
    options.moveTo({ kind: 'idle' })
    // A status listener may have started the agent again.
    if (options.phase().kind === 'idle') options.onIdle()
  }

  async function admit(entry: PromptEntry, run: Run): Promise<void> {
    const { signal } = run.controller
    let decision: PromptSubmitResult
    if (signal.aborted) decision = { action: 'block', reason: 'canceled' }
    else {
      try {
        // A listener that ignores the signal must not hold a canceled agent.
        const submitted = runWaterfall(
          options.hooks.list('prompt-submit'),
          { prompt: entry.data, signal },
          (): PromptSubmitResult => ({
            action: 'admit',
            content: entry.data.content,
            additionalContexts: [],
          }),
        )
        decision = checkAdmission(
          await raceAbort<unknown>(submitted, signal, () => ({
            action: 'block',
            reason: 'canceled',
          })),
        )
      } catch (error) {
        options.reportError('hook:prompt-submit', error)
        decision = { action: 'block', reason: messageOf(error) }
      }
    }
    if (signal.aborted || decision.action === 'block') {
      options.moveTo({ kind: 'admitting', run, prompt: undefined, isWindowOpen: false })
      inbox.settleOutbox()
      // After a cancel the delivery is already settled as discarded.
      if (decision.action === 'block') {
        const reason = decision.reason
        run.settlements.push(() => inbox.settle(entry, { status: 'blocked', reason }))
      }
      return
    }
    options.moveTo({ kind: 'running', run, isWindowOpen: true })
    const turn = ++turns.last
    appendOwned(session, 'turn/start', { turn, trigger: 'prompt' })
    session.append('user/message', { id: entry.id, ...entry.data, content: decision.content })
    for (const context of decision.additionalContexts)
      session.append('user/message', { id: newMessageId(), ...context })
    run.carried.push(entry)
    await runAdmittedTurn(turn, run)
  }

  async function startContinuation(entry: ContinueEntry, run: Run): Promise<void> {
    if (run.controller.signal.aborted) return
    const turn = ++turns.last
    options.moveTo({ kind: 'running', run, isWindowOpen: true })
    appendOwned(session, 'turn/start', { turn, trigger: 'continue' })
    run.carried.push(entry)
    await runAdmittedTurn(turn, run)
  }

  async function compactBetweenTurns(entry: CompactEntry, run: Run): Promise<void> {
    if (run.controller.signal.aborted) {
      entry.done.resolve({ status: 'discarded', reason: discardReason(run) })
      return
    }
    const result = await options.compact(run.controller.signal, entry.instructions)
    if (result.status === 'compacted') await session.flush()
    run.settlements.push(() => entry.done.resolve(result))
  }

  async function runAdmittedTurn(turn: number, run: Run): Promise<void> {
    // Inputs accepted during admission join the first request.
    if (!run.controller.signal.aborted) run.carried.push(...inbox.drain(turn))
    const outcome = await options.runTurn(run, turn)
    // Durability point: a turn's end is on disk before anyone hears it ended.
    await session.flush()
    const result: DeliveryResult = deliveryResult(outcome, turn)
    const carried = run.carried.splice(0)
    run.settlements.push(() => {
      for (const entry of carried) inbox.settle(entry, result)
    })
    inbox.settleOutbox()
  }

  /** A failure the agent cannot recover from (a store that cannot write, a bug): stop cleanly. */
  function stop(error: unknown, failed: Run | undefined): void {
    const fatal =
      error instanceof RudderError
        ? error
        : new RudderError('INTERNAL', messageOf(error), { cause: error })
    const admitting = options.phase()
    options.moveTo({ kind: 'stopped', error: fatal })
    options.onIdle()
    options.reportError('agent', error)
    closeOpenTurn(session)
    const message = { code: fatal.code, message: fatal.message }
    for (const settle of failed?.settlements ?? []) settle()
    for (const entry of failed?.carried ?? [])
      inbox.settle(entry, { status: 'error', turn: turns.last, error: message })
    if (admitting.kind === 'admitting' && admitting.prompt)
      inbox.settle(admitting.prompt, { status: 'discarded', reason: 'disposed' })
    inbox.discard('disposed', { keepQueue: false })
  }

  return {
    startIfIdle() {
      if (runOf(options.phase()) || !inbox.hasWaking()) return
      driving = drive()
    },
    get driving() {
      return driving
    },
  }
}

const discardReason = (run: Run) => (run.cause === 'cancel' ? 'canceled' : 'disposed')

/** After a fatal error, close the turn as crash repair would, if the session still takes appends. */
function closeOpenTurn(session: Session): void {
  const plan = crashRepairOfState(session.state())
  if (!plan) return
  try {
    applyCrashRepair(session, plan)
    session.flush().catch(() => {
      // The store that failed may fail again; reopening the session repairs its log.
    })
  } catch {
    // A session that no longer takes appends is repaired when it is opened again.
  }
}
