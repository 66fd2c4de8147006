/**
 * `createAgent` (docs/spec.md §5): wiring. The agent is in one `AgentPhase` (phase.ts) at a
 * time; its inputs wait in the inbox (inbox.ts); the driver (driver.ts) takes the queue in
 * order; one turn is turn.ts, one step step.ts, the tools of a step tool-batch.ts.
 */
import {
  type CompactionReason,
  optional,
  type PendingItem,
  RudderError,
  type Session,
} from '../core/index.js'
import { defaultSpillDirectory } from '../tools/output-spill.js'
import type { Agent, AgentOptions } from './agent-api.js'
import { refuseWithoutApprover } from './approval.js'
import { compact, compactionSettings } from './compaction.js'
import { type Deferred, defer } from './deferred.js'
import { createDriver } from './driver.js'
import { createHookRegistry, runSerial } from './hooks.js'
import { createInbox, entries } from './inbox.js'
import { toUserMessage } from './inputs.js'
import { createNotifier } from './notifications.js'
import {
  type AgentPhase,
  isWindowOpen,
  move,
  type Run,
  runOf,
  statusOf,
  takesSteering,
} from './phase.js'
import { retryPolicy } from './retry.js'
import { readHistory } from './session-history.js'
import {
  changedSettings,
  checkProvider,
  missingModel,
  toSettings,
  wholeNumber,
} from './settings.js'
import { runTurn } from './turn.js'
import type { TurnContext, TurnDependencies } from './turn-context.js'

export type { Agent, AgentOptions } from './agent-api.js'
export type { AgentSettings, AgentSettingsChange } from './settings.js'

const SEND_OPTION_KEYS = new Set(['target', 'wakeup'])

export function createAgent(options: AgentOptions): Agent {
  const { session, provider } = options
  checkSession(session)
  checkProvider(provider)
  let settings = toSettings({
    provider,
    model: options.model ?? provider.model ?? missingModel(provider),
    system: options.system ?? '',
    params: options.params ?? {},
    tools: options.tools ?? [],
  })
  const history = readHistory(session)
  const hooks = createHookRegistry(options.hooks)
  const retry = retryPolicy(options.retry)
  const compaction = compactionSettings(options.compaction)
  const notifier = createNotifier()
  const { emit, reportError } = notifier
  const lifetime = new AbortController()
  const unsubscribeListenerErrors = session.subscribeListenerErrors((error, event) =>
    reportError(`session-listener (seq ${event.seq}, ${event.type})`, error),
  )

  let phase: AgentPhase = { kind: 'idle' }
  /** The one promise of `dispose()`, from its first call: every later call throws at once. */
  let disposal: Promise<void> | undefined
  /** While `session-start` listeners run no turn opens, so their contexts land at once. */
  let isSessionStarting = false
  const idleWaiters: Deferred<void>[] = []

  function moveTo(next: AgentPhase): void {
    const before = statusOf(phase)
    phase = move(phase, next)
    if (statusOf(phase) !== before) emit({ type: 'status/change', status: statusOf(phase) })
  }

  const inbox = createInbox({
    session,
    onDeliveryEnd: (entry, result) =>
      emit({ type: 'delivery/end', id: entry.id, kind: entry.kind, result }),
  })

  function runCompaction(reason: CompactionReason, signal: AbortSignal, instructions?: string) {
    return compact({
      events: session.events,
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
  }

  const dependencies: TurnDependencies = {
    session,
    hooks,
    approve: options.approve ?? refuseWithoutApprover,
    maxSteps: wholeNumber(options.maxSteps ?? 100, 'maxSteps', 1),
    maxStopContinuations: wholeNumber(options.maxStopContinuations ?? 8, 'maxStopContinuations', 0),
    toolOutput: {
      limit: options.toolOutput?.limit ?? 50_000,
      dir: options.toolOutput?.dir ?? defaultSpillDirectory(),
    },
    retry,
    cwd: options.cwd ?? process.cwd(),
    get agent() {
      return agent
    },
    compaction,
    header: { last: history.lastHeader },
    emit,
    reportError,
    current: () => settings.step,
  }

  function turnContext(run: Run): TurnContext {
    const { signal } = run.controller
    return {
      ...dependencies,
      signal,
      cancelCause: () => run.cause,
      compact: (reason) => runCompaction(reason, signal),
      stage(data) {
        // A tool-post context of a canceled turn is dropped whenever its result is logged: it
        // must not land after `turn/end` nor join the next prompt (docs/spec.md §5.5).
        if (!signal.aborted) inbox.stage(entries.context(data, true))
      },
      drain(turn) {
        // After a cancel nothing joins the canceled turn (docs/spec.md §5.5).
        if (signal.aborted) return false
        const steering = inbox.drain(turn)
        run.carried.push(...steering)
        return steering.length > 0
      },
      closeWindow: () => moveTo({ kind: 'running', run, isWindowOpen: false }),
    }
  }

  const sessionStart = (async () => {
    // One microtask, so listeners registered with agent.on() right after createAgent run too.
    await Promise.resolve()
    const startListeners = hooks.list('session-start')
    if (startListeners.length === 0) return
    isSessionStarting = true
    try {
      await runSerial(
        startListeners,
        { reason: options.startReason ?? history.startReason, signal: lifetime.signal },
        (error) => reportError('hook:session-start', error),
      )
    } finally {
      isSessionStarting = false
    }
  })()

  const driver = createDriver({
    session,
    inbox,
    hooks,
    sessionStart,
    turns: { last: history.lastTurn },
    phase: () => phase,
    moveTo,
    reportError,
    runTurn: (run, turn) => runTurn(turnContext(run), turn),
    compact: (signal, instructions) => runCompaction('manual', signal, instructions),
    onIdle: () => {
      for (const waiter of idleWaiters.splice(0)) waiter.resolve()
    },
  })

  function assertUsable(call: string): void {
    if (disposal || phase.kind === 'disposed')
      throw new RudderError(
        'DISPOSED',
        `agent.${call}(): this agent was disposed; create a new one with createAgent()`,
      )
    if (phase.kind === 'stopped')
      throw new RudderError(
        phase.error.code,
        `agent.${call}(): the agent stopped after an error (${phase.error.message}); create a new agent over a reopened session`,
        { cause: phase.error },
      )
  }

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
      for (const key of Object.keys(sendOptions ?? {})) {
        if (!SEND_OPTION_KEYS.has(key))
          throw new RudderError(
            'INVALID_INPUT',
            `agent.send(): unknown option ${JSON.stringify(key)}; SendOptions has only target and wakeup`,
          )
      }
      const target = sendOptions?.target ?? 'next-turn'
      if (target !== 'next-turn' && target !== 'next-step')
        throw new RudderError(
          'INVALID_INPUT',
          `agent.send(): target must be 'next-turn' or 'next-step', got ${JSON.stringify(target)}`,
        )
      if (target === 'next-step') return agent.steer(input)
      const data = toUserMessage(input, 'agent.send()')
      return enqueue(entries.prompt(data, sendOptions?.wakeup ?? true))
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
      const data = toUserMessage(context, 'agent.inject()')
      if (data.source.kind === 'user')
        throw new RudderError(
          'INVALID_INPUT',
          "agent.inject(): the source must name the producer (e.g. { kind: 'plugin', name: 'my-plugin' }); a person's message goes through send() or steer()",
        )
      const entry = entries.context(data, false)
      // After a cancel the context is staged too: it lands right after the turn's end.
      if (isWindowOpen(phase) && !isSessionStarting) inbox.stage(entry)
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
        lifetime.abort()
        await driver.driving
        await sessionStart
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
