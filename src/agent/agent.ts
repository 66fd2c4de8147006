/**
 * `createAgent` (docs/spec.md §5): wiring. The agent is in one `AgentPhase` (phase.ts) at a
 * time; its inputs wait in the inbox (inbox.ts); the driver (driver.ts) takes the queue in
 * order; one turn is turn.ts, one step step.ts, the tools of a step tool-batch.ts.
 */
import {
  type CompactionReason,
  holdSession,
  optional,
  type PendingItem,
  RudderError,
  type Session,
} from '../core/index.js'
import type { Agent, AgentOptions } from './agent-api.js'
import { compact, compactionSettings } from './compaction.js'
import { type Deferred, defer } from './deferred.js'
import { createDriver } from './driver.js'
import { createHookRegistry } from './hooks.js'
import { createInbox, entries } from './inbox.js'
import { checkSendOptions, toInjectedContext, toUserMessage } from './inputs.js'
import { createNotifier } from './notifications.js'
import {
  type AgentPhase,
  assertUsablePhase,
  isWindowOpen,
  move,
  runOf,
  statusOf,
  takesSteering,
} from './phase.js'
import { retryPolicy } from './retry.js'
import { turnContextOf } from './run-scope.js'
import { readHistory } from './session-history.js'
import { startSession } from './session-start.js'
import { agentLimits, changedSettings, initialSettings, releaseHistoryDelay } from './settings.js'
import { runTurn } from './turn.js'
import type { TurnDependencies } from './turn-context.js'

export type { Agent, AgentOptions } from './agent-api.js'
export type { AgentSettings, AgentSettingsChange } from './settings.js'

export function createAgent(options: AgentOptions): Agent {
  const { session } = options
  checkSession(session)
  let settings = initialSettings(options)
  const history = readHistory(session)
  const hooks = createHookRegistry(options.hooks)
  const retry = retryPolicy(options.retry)
  const compaction = compactionSettings(options.compaction)
  const releaseAfterMs = releaseHistoryDelay(options)
  const notifier = createNotifier()
  const { emit, reportError } = notifier
  const lifetime = new AbortController()
  const unsubscribeListenerErrors = session.subscribeListenerErrors((error, event) =>
    reportError(`session-listener (seq ${event.seq}, ${event.type})`, error),
  )

  let phase: AgentPhase = { kind: 'idle' }
  /** The one promise of `dispose()`, from its first call: every later call throws at once. */
  let disposal: Promise<void> | undefined
  const idleWaiters: Deferred<void>[] = []

  function moveTo(next: AgentPhase): void {
    const before = statusOf(phase)
    phase = move(phase, next)
    holdWhileRunning()
    if (statusOf(phase) !== before) emit({ type: 'status/change', status: statusOf(phase) })
  }

  // Releasing an idle session's history (decision 0166): a run holds the session, so it keeps
  // its projection from `loadProjection` to the run's end; once idle for `releaseAfterMs` with
  // nothing queued, the agent asks the session to let go of it.
  let runHold: (() => void) | undefined
  let releaseTimer: ReturnType<typeof setTimeout> | undefined
  function holdWhileRunning(): void {
    if (runOf(phase)) {
      runHold ??= holdSession(session)
      clearTimeout(releaseTimer)
    } else {
      runHold?.()
      runHold = undefined
    }
  }
  function releaseWhenIdle(): void {
    clearTimeout(releaseTimer)
    if (!Number.isFinite(releaseAfterMs) || phase.kind !== 'idle' || disposal) return
    releaseTimer = setTimeout(() => {
      const { queued, staged } = inbox.pending()
      if (phase.kind !== 'idle' || disposal || queued.length + staged.length > 0) return
      session.releaseHistory().catch((error) => reportError('session-release', error))
    }, releaseAfterMs)
    // An idle session must not keep the process alive.
    releaseTimer.unref?.()
  }

  const inbox = createInbox({
    session,
    onDeliveryEnd: (entry, result) =>
      emit({ type: 'delivery/end', id: entry.id, kind: entry.kind, result }),
  })

  const runCompaction = (reason: CompactionReason, signal: AbortSignal, instructions?: string) =>
    compact({
      events: session.residentEvents,
      fromSeq: session.residentFrom,
      messages: session.messages(),
      provider: settings.step.provider,
      model: settings.step.model,
      retry,
      settings: compaction,
      signal,
      reason,
      ...optional('instructions', instructions),
      onAttempt: (attempt) =>
        emit({ type: 'compaction/request', reason, attempt, maxAttempts: retry.maxRetries + 1 }),
      append: (data) => session.append('compaction', data).seq,
    })

  const dependencies: TurnDependencies = {
    session,
    hooks,
    ...agentLimits(options),
    retry,
    get agent() {
      return agent
    },
    compaction,
    emit,
    hasListeners: notifier.hasListeners,
    reportError,
    current: () => settings.step,
  }

  const sessionStart = startSession({
    hooks,
    reason: options.startReason ?? history.startReason,
    signal: lifetime.signal,
    reportError,
  })

  const driver = createDriver({
    session,
    inbox,
    hooks,
    sessionStart: sessionStart.done,
    turns: { last: history.lastTurn },
    phase: () => phase,
    moveTo,
    reportError,
    runTurn: (run, turn) =>
      runTurn(turnContextOf({ run, dependencies, inbox, moveTo, compact: runCompaction }), turn),
    compact: (signal, instructions) => runCompaction('manual', signal, instructions),
    onIdle: () => {
      for (const waiter of idleWaiters.splice(0)) waiter.resolve()
      releaseWhenIdle()
    },
  })
  void sessionStart.done.then(releaseWhenIdle)

  const assertUsable = (call: string) => assertUsablePhase(phase, disposal !== undefined, call)

  function enqueue(entry: ReturnType<typeof entries.prompt | typeof entries.continue>) {
    inbox.enqueue(entry)
    driver.startIfIdle()
    return { id: entry.id, result: entry.done.promise }
  }

  /** Aborts the run, discarding what it admits and the outbox (and the queue unless kept). */
  function discardPending(cause: 'cancel' | 'dispose', keepQueue: boolean) {
    const reason = cause === 'cancel' ? 'canceled' : 'disposed'
    const discarded: PendingItem[] = []
    if (phase.kind === 'admitting' && phase.prompt) {
      const { prompt } = phase
      moveTo({ ...phase, prompt: undefined })
      inbox.settle(prompt, { status: 'discarded', reason })
      discarded.push({ id: prompt.id, kind: prompt.kind, data: prompt.data })
    }
    discarded.push(...inbox.discard(reason, { keepQueue }))
    const run = runOf(phase)
    if (run && !run.controller.signal.aborted) {
      run.cause = cause
      run.controller.abort()
    }
    return { discarded }
  }

  const agent: Agent = {
    session,
    get status() {
      return statusOf(phase)
    },
    send(input, sendOptions) {
      assertUsable('send')
      const { target, wakeup } = checkSendOptions(sendOptions)
      if (target === 'next-step') return agent.steer(input)
      return enqueue(entries.prompt(toUserMessage(input, 'agent.send()'), wakeup))
    },
    steer(input) {
      assertUsable('steer')
      const data = toUserMessage(input, 'agent.steer()')
      // No window, or a canceled turn winding down: a queued prompt (docs/spec.md §5.2, §5.5).
      if (!takesSteering(phase)) return enqueue(entries.prompt(data, true))
      const entry = entries.steering(data)
      inbox.stage(entry)
      return { id: entry.id, result: entry.done.promise }
    },
    inject(context) {
      assertUsable('inject')
      const entry = entries.context(toInjectedContext(context), false)
      // After a cancel the context is staged too: it lands right after the turn's end.
      if (isWindowOpen(phase) && !sessionStart.isRunning) inbox.stage(entry)
      else inbox.appendContext(entry)
      return { id: entry.id, result: entry.done.promise }
    },
    continue() {
      assertUsable('continue')
      return enqueue(entries.continue())
    },
    get settings() {
      return settings.public
    },
    configure(changes) {
      assertUsable('configure')
      settings = changedSettings(settings.public, changes)
    },
    compact(compactOptions) {
      assertUsable('compact')
      const entry = entries.compact(compactOptions?.instructions)
      inbox.enqueue(entry)
      driver.startIfIdle()
      return entry.done.promise
    },
    cancel(cancelOptions) {
      assertUsable('cancel')
      return discardPending('cancel', cancelOptions?.keepQueue ?? false)
    },
    withdraw(id) {
      assertUsable('withdraw')
      return inbox.withdraw(id)
    },
    on: (hook, listener) => hooks.on(hook, listener),
    subscribe: notifier.subscribe,
    pending: () => inbox.pending(),
    idle() {
      if (!runOf(phase) && !inbox.hasWaking()) return Promise.resolve()
      const waiter = defer<void>()
      idleWaiters.push(waiter)
      return waiter.promise
    },
    dispose() {
      disposal ??= (async () => {
        discardPending('dispose', false)
        clearTimeout(releaseTimer)
        lifetime.abort()
        await driver.driving
        await sessionStart.done
        unsubscribeListenerErrors()
        moveTo({ kind: 'disposed' })
      })()
      return disposal
    },
  }
  return agent
}

function checkSession(session: Session | undefined): asserts session is Session {
  if (!session || typeof session.append !== 'function')
    throw new RudderError(
      'INVALID_INPUT',
      'createAgent: session must be a live session (createSession() or store.open())',
    )
}
