/**
 * `createAgent` (docs/spec.md §5): the queue of direct prompts, the outbox of staged steering and
 * contexts, the acceptance window, prompt admission, cancel, continue and dispose. The steps of
 * a turn live in turn.ts and the tools of a step in tool-batch.ts.
 */
import {
  type Cancellation,
  type Delivery,
  type DeliveryResult,
  type EventMap,
  type HookName,
  messageOf,
  type PendingItem,
  planCrashRepair,
  RudderError,
  type SendOptions,
  type Session,
  type UserMessageData,
} from '../core/index.js'
import type { ModelParams, Provider } from '../providers/provider.js'
import { defaultSpillDirectory } from '../tools/output-spill.js'
import type { Tool, ToolAgent } from '../tools/tool.js'
import {
  type CompactionOptions,
  type CompactResult,
  compact,
  compactionSettings,
} from './compaction.js'
import { type Deferred, defer, raceAbort } from './deferred.js'
import {
  createHookRegistry,
  type HookListeners,
  type HookOptions,
  type PromptSubmitResult,
  runSerial,
  runWaterfall,
} from './hooks.js'
import { newMessageId, toUserMessage } from './inputs.js'
import type { AgentListener, AgentNotification, AgentStatus } from './notifications.js'
import { checkAdmission, deliveryResult } from './outcomes.js'
import { type RetryOptions, retryPolicy } from './retry.js'
import { readHistory } from './session-history.js'
import { runTurn } from './turn.js'
import type { ApproveCallback, StepSettingsOf, TurnContext } from './turn-context.js'

export type AgentOptions = {
  /** A live session: from a store, or `createSession()`. The agent does not close it. */
  readonly session: Session
  readonly provider: Provider
  /** Default: the provider's model. */
  readonly model?: string
  readonly system?: string
  readonly params?: ModelParams
  readonly tools?: readonly Tool[]
  readonly hooks?: HookOptions
  /** Decides `ask` answers of `tool-pre`. Default: refuse, with a message saying how to allow. */
  readonly approve?: ApproveCallback
  /** Steps per turn before it ends with `step-limit` (default 100). */
  readonly maxSteps?: number
  /** `turn-stopping` continuations per turn before `stop-limit` (default 8). */
  readonly maxStopContinuations?: number
  /** The tools' working directory (default `process.cwd()`). */
  readonly cwd?: string
  readonly retry?: RetryOptions
  /** Tool results above `limit` characters (default 50 000) are cut; the full text goes to a file in `dir`. */
  readonly toolOutput?: { readonly limit?: number; readonly dir?: string }
  /** The `session-start` reason; inferred from the session when absent. */
  readonly startReason?: 'new' | 'resume' | 'fork'
  /** Automatic compaction needs the model's context window; see `CompactionOptions`. */
  readonly compaction?: CompactionOptions
}

/** The agent (docs/spec.md §5.1). */
export interface Agent extends ToolAgent {
  readonly session: Session
  readonly status: AgentStatus
  /** Queues a direct message: one send is one turn. `target: 'next-step'` is `steer`. */
  send(input: string | UserMessageData, options?: SendOptions): Delivery
  /** Redirects the running turn (joins its next request); when no window is open, a queued prompt. */
  steer(input: string | UserMessageData): Delivery
  /** Supplementary context with a non-user source; logged at once when no window is open. */
  inject(context: UserMessageData): Delivery
  /** Queues a turn without a new prompt. */
  continue(): Delivery
  /**
   * Summarizes older history into a `compaction` event (docs/spec.md §10). Runs between turns, after
   * whatever is already queued; resolves with what happened.
   */
  compact(options?: { readonly instructions?: string }): Promise<CompactResult>
  /**
   * Changes what the next requests are made with: the provider and model (`/model` in a front
   * end), the system prompt, parameters or the tool set (an MCP server's tools changed). It
   * takes effect at the next step, even inside a running turn; a step already started keeps
   * what it started with. The change reaches the log as a new `request/header` at that step.
   * Throws `INVALID_INPUT` (nothing changed) for a model-less provider or duplicate tool names.
   */
  configure(changes: AgentSettingsChange): void
  /** What the next step will be made with. */
  readonly settings: AgentSettings
  /** Aborts the current admission or turn; discards the outbox and, unless `keepQueue`, the queue. */
  cancel(options?: { readonly keepQueue?: boolean }): Cancellation
  on<K extends HookName>(hook: K, listener: HookListeners[K]): () => void
  /** Live notifications (deltas, status, retries, tool progress, delivery outcomes). */
  subscribe(listener: AgentListener): () => void
  pending(): { readonly queued: PendingItem[]; readonly staged: PendingItem[] }
  /** Resolves when nothing runs and nothing waking is queued. */
  idle(): Promise<void>
  /** Cancel, dropping everything, then release; later calls throw. */
  dispose(): Promise<void>
}

/** What a step's request is made with (see `Agent.configure`). */
export type AgentSettings = {
  readonly provider: Provider
  readonly model: string
  readonly system: string
  readonly params: ModelParams
  readonly tools: readonly Tool[]
}
/** A change of settings; a new `provider` without a `model` uses the provider's own model. */
export type AgentSettingsChange = Partial<AgentSettings>

type Entry = {
  readonly id: string
  readonly kind: 'prompt' | 'continue' | 'compact' | 'steering' | 'context'
  readonly data?: UserMessageData
  readonly wakeup: boolean
  readonly done: Deferred<DeliveryResult>
  /** Contexts returned by hooks: nobody holds their delivery. */
  readonly isInternal?: boolean
  /** For `compact` entries: the instructions and the outcome. */
  readonly compaction?: { readonly instructions?: string; readonly done: Deferred<CompactResult> }
}
type Run = {
  readonly controller: AbortController
  cause: string
  admitting: Entry | undefined
  /** The prompt and steering this run's turn carries: they end with the turn. */
  readonly carried: Entry[]
  /** Delivery outcomes, settled once the agent has moved on (so a caller sees the new status). */
  readonly settlements: (() => void)[]
}

const SEND_OPTION_KEYS = new Set(['target', 'wakeup'])

export function createAgent(options: AgentOptions): Agent {
  const { session, provider } = options
  if (!session || typeof session.append !== 'function')
    throw new RudderError(
      'INVALID_INPUT',
      'createAgent: session must be a live session (createSession() or store.open())',
    )
  if (!provider || typeof provider.stream !== 'function')
    throw new RudderError(
      'INVALID_INPUT',
      'createAgent: provider must implement stream(request, signal)',
    )
  let settings = stepSettings({
    provider,
    model: options.model ?? provider.model ?? missingModel(provider),
    system: options.system ?? '',
    params: options.params ?? {},
    tools: options.tools ?? [],
  })
  const maxSteps = positiveInteger(options.maxSteps ?? 100, 'maxSteps')
  const maxStopContinuations = nonNegativeInteger(
    options.maxStopContinuations ?? 8,
    'maxStopContinuations',
  )
  const history = readHistory(session)
  const hooks = createHookRegistry(options.hooks)
  const approve: ApproveCallback =
    options.approve ??
    (({ call }) => ({
      approved: false,
      reason: `The tool ${call.name} needs approval and no approver is configured, so the call was refused. The user can allow it with an approval policy, by answering 'run' in a tool-pre hook, or by giving the agent an approve callback.`,
    }))
  const retry = retryPolicy(options.retry)
  const toolOutput = {
    limit: options.toolOutput?.limit ?? 50_000,
    dir: options.toolOutput?.dir ?? defaultSpillDirectory(),
  }
  const cwd = options.cwd ?? process.cwd()
  const header: { last: EventMap['request/header'] | undefined } = { last: history.lastHeader }
  const lifetime = new AbortController()
  const compaction = compactionSettings(options.compaction)

  const listeners = new Set<AgentListener>()
  const queue: Entry[] = []
  const outbox: Entry[] = []
  const idleWaiters: Deferred<void>[] = []
  let lastTurn = history.lastTurn
  let status: AgentStatus = 'idle'
  let isWindowOpen = false
  let isSessionStarting = false
  let isDriving = false
  let driving: Promise<void> = Promise.resolve()
  let run: Run | undefined
  let disposing: Promise<void> | undefined
  let fatal: RudderError | undefined

  function emit(notification: AgentNotification): void {
    for (const listener of [...listeners]) {
      try {
        listener(notification)
      } catch (error) {
        // A live listener that throws cannot be told through itself; the console is the last resort.
        console.error('rudder: an agent listener threw:', error)
      }
    }
  }
  const reportError = (source: string, error: unknown) =>
    emit({ type: 'listener/error', source, message: messageOf(error), error })
  const unsubscribeListenerErrors = session.subscribeListenerErrors((error, event) =>
    reportError(`session-listener (seq ${event.seq}, ${event.type})`, error),
  )

  function setStatus(next: AgentStatus): void {
    if (status === next) return
    status = next
    emit({ type: 'status/change', status })
  }

  function finish(entry: Entry, result: DeliveryResult): void {
    if (entry.compaction && result.status === 'discarded')
      entry.compaction.done.resolve({ status: 'discarded', reason: result.reason })
    if (entry.done.isSettled) return
    entry.done.resolve(result)
    if (!entry.isInternal && entry.kind !== 'compact')
      emit({ type: 'delivery/end', id: entry.id, kind: entry.kind, result })
  }

  function assertUsable(call: string): void {
    if (disposing)
      throw new RudderError(
        'DISPOSED',
        `agent.${call}(): this agent was disposed; create a new one with createAgent()`,
      )
    if (fatal)
      throw new RudderError(
        fatal.code,
        `agent.${call}(): the agent stopped after an error (${fatal.message}); create a new agent over a reopened session`,
        { cause: fatal },
      )
  }

  const messageData = (entry: Entry) => ({ id: entry.id, ...entry.data! })

  function appendContextNow(entry: Entry, turn?: number): void {
    const event = session.append('user/message', messageData(entry))
    finish(
      entry,
      turn === undefined
        ? { status: 'logged', seq: event.seq }
        : { status: 'logged', seq: event.seq, turn },
    )
  }

  /** Appends the outbox in acceptance order (docs/spec.md §5.4); true if any steering was appended. */
  function drain(turn: number): boolean {
    // After a cancel nothing joins the canceled turn: what was staged before it was discarded,
    // and what is accepted after it lands after the turn's end (docs/spec.md §5.5).
    if (run?.controller.signal.aborted) return false
    let steered = false
    while (outbox.length > 0) {
      const entry = outbox.shift()!
      if (entry.kind === 'context') appendContextNow(entry, turn)
      else {
        session.append('steering/message', { ...messageData(entry), turn })
        run?.carried.push(entry)
        steered = true
      }
    }
    return steered
  }

  /** The window closed with no turn to carry the outbox (docs/spec.md §5.3 step 4). */
  function settleOutbox(): void {
    // Steering waits for the next admitted prompt, and keeps its contexts in acceptance order.
    if (outbox.some((entry) => entry.kind === 'steering')) return
    while (outbox.length > 0) appendContextNow(outbox.shift()!)
  }

  function enqueue(
    kind: 'prompt' | 'continue',
    data: UserMessageData | undefined,
    wakeup: boolean,
  ): Delivery {
    const entry: Entry = {
      id: newMessageId(),
      kind,
      ...(data ? { data } : {}),
      wakeup,
      done: defer(),
    }
    return push(entry)
  }

  function push(entry: Entry): Delivery {
    queue.push(entry)
    startIfIdle()
    return { id: entry.id, result: entry.done.promise }
  }

  function startIfIdle(): void {
    if (isDriving || !queue.some((entry) => entry.wakeup)) return
    isDriving = true
    driving = drive()
  }

  /** Takes the next queued entry if anything waking is queued, opening the window for a prompt. */
  function beginNext(): Entry | undefined {
    if (!queue.some((entry) => entry.wakeup)) return undefined
    const entry = queue.shift()!
    run = {
      controller: new AbortController(),
      cause: 'cancel',
      admitting: entry.kind === 'prompt' ? entry : undefined,
      carried: [],
      settlements: [],
    }
    if (entry.kind === 'prompt') {
      isWindowOpen = true
      setStatus('admitting')
    } else setStatus('running')
    return entry
  }

  async function drive(): Promise<void> {
    try {
      for (let entry = beginNext(); entry; ) {
        const current = run!
        await sessionStart
        if (entry.kind === 'prompt') await admit(entry, current)
        else if (entry.kind === 'compact') await compactBetweenTurns(entry, current)
        else await startContinuation(entry, current)
        run = undefined
        entry = beginNext()
        if (!entry) becomeIdle()
        for (const settle of current.settlements.splice(0)) settle()
      }
    } catch (error) {
      const failed = run
      becomeIdle()
      stop(error, failed)
    }
  }

  function becomeIdle(): void {
    run = undefined
    isWindowOpen = false
    isDriving = false
    setStatus('idle')
    // A status listener may have started the agent again.
    if (!isDriving) for (const waiter of idleWaiters.splice(0)) waiter.resolve()
  }

  async function admit(entry: Entry, current: Run): Promise<void> {
    const { signal } = current.controller
    let decision: PromptSubmitResult
    if (signal.aborted) decision = { action: 'block', reason: 'canceled' }
    else {
      try {
        // A listener that ignores the signal must not hold a canceled agent.
        const submitted = runWaterfall(
          hooks.list('prompt-submit'),
          { prompt: entry.data!, signal },
          (): PromptSubmitResult => ({
            action: 'admit',
            content: entry.data!.content,
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
        reportError('hook:prompt-submit', error)
        decision = { action: 'block', reason: messageOf(error) }
      }
    }
    current.admitting = undefined
    if (signal.aborted || decision.action === 'block') {
      isWindowOpen = false
      settleOutbox()
      // After a cancel the delivery is already settled as discarded.
      if (decision.action === 'block') {
        const reason = decision.reason
        current.settlements.push(() => finish(entry, { status: 'blocked', reason }))
      }
      return
    }
    setStatus('running')
    const turn = ++lastTurn
    session.append('turn/start', { turn, trigger: 'prompt' })
    session.append('user/message', { ...messageData(entry), content: decision.content })
    for (const context of decision.additionalContexts)
      session.append('user/message', { id: newMessageId(), ...context })
    current.carried.push(entry)
    await runAdmittedTurn(turn, current)
  }

  async function startContinuation(entry: Entry, current: Run): Promise<void> {
    if (current.controller.signal.aborted) return
    const turn = ++lastTurn
    isWindowOpen = true
    session.append('turn/start', { turn, trigger: 'continue' })
    current.carried.push(entry)
    await runAdmittedTurn(turn, current)
  }

  async function compactBetweenTurns(entry: Entry, current: Run): Promise<void> {
    const done = entry.compaction!.done
    if (current.controller.signal.aborted) return
    const result = await runCompaction(
      'manual',
      current.controller.signal,
      entry.compaction!.instructions,
    )
    if (result.status === 'compacted') await session.flush()
    current.settlements.push(() => done.resolve(result))
  }

  function runCompaction(
    reason: 'manual' | 'auto' | 'overflow',
    signal: AbortSignal,
    instructions?: string,
  ): Promise<CompactResult> {
    return compact({
      events: session.events,
      provider: settings.step.provider,
      model: settings.step.model,
      retry,
      settings: compaction,
      signal,
      reason,
      ...(instructions === undefined ? {} : { instructions }),
      onAttempt: (attempt) =>
        emit({ type: 'compaction/request', reason, attempt, maxAttempts: retry.maxRetries + 1 }),
      append: (data) => session.append('compaction', data).seq,
    })
  }

  async function runAdmittedTurn(turn: number, current: Run): Promise<void> {
    // Inputs accepted during admission join the first request.
    if (!current.controller.signal.aborted) drain(turn)
    const outcome = await runTurn(turnContext(current), turn)
    // Durability point: a turn's end is on disk before anyone hears it ended.
    await session.flush()
    const result = deliveryResult(outcome, turn)
    const carried = current.carried.splice(0)
    current.settlements.push(() => {
      for (const entry of carried) finish(entry, result)
    })
    settleOutbox()
  }

  function turnContext(current: Run): TurnContext {
    return {
      session,
      ...settings.step,
      current: () => settings.step,
      hooks,
      approve,
      maxSteps,
      maxStopContinuations,
      toolOutput,
      retry,
      cwd,
      agent,
      signal: current.controller.signal,
      cancelCause: () => current.cause,
      header,
      emit,
      reportError,
      stage: (data) => {
        // A tool-post context of a canceled turn is discarded whenever its result is logged
        // (issue 9 item 13): it must not land after `turn/end` nor join the next prompt.
        if (current.controller.signal.aborted) return
        outbox.push({
          id: newMessageId(),
          kind: 'context',
          data,
          wakeup: false,
          done: defer(),
          isInternal: true,
        })
      },
      drain,
      closeWindow: () => {
        isWindowOpen = false
      },
      compaction,
      compact: (reason) => runCompaction(reason, current.controller.signal),
    }
  }

  /** A failure the agent cannot recover from (a store that cannot write, a bug): stop cleanly. */
  function stop(error: unknown, failed: Run | undefined): void {
    fatal =
      error instanceof RudderError
        ? error
        : new RudderError('INTERNAL', messageOf(error), { cause: error })
    reportError('agent', error)
    closeOpenTurn()
    const message = { code: fatal.code, message: fatal.message }
    for (const settle of failed?.settlements ?? []) settle()
    for (const entry of failed?.carried ?? [])
      finish(entry, { status: 'error', turn: lastTurn, error: message })
    if (failed?.admitting) finish(failed.admitting, { status: 'discarded', reason: 'disposed' })
    for (const entry of [...outbox.splice(0), ...queue.splice(0)])
      finish(entry, { status: 'discarded', reason: 'disposed' })
  }

  /** After a fatal error, close the turn as crash repair would, if the session still takes appends. */
  function closeOpenTurn(): void {
    const plan = planCrashRepair(session.events)
    if (!plan) return
    try {
      for (const [type, data] of plan.appends) session.append(type, data as never)
      session.flush().catch(() => {
        // The store that failed may fail again; reopening the session repairs its log.
      })
    } catch {
      // A session that no longer takes appends is repaired when it is opened again.
    }
  }

  function discardPending(cause: 'cancel' | 'dispose', keepQueue: boolean): Cancellation {
    const reason = cause === 'cancel' ? 'canceled' : 'disposed'
    const discarded: PendingItem[] = []
    const discard = (entry: Entry) => {
      finish(entry, { status: 'discarded', reason })
      if (
        (entry.kind === 'prompt' || entry.kind === 'steering' || entry.kind === 'context') &&
        !entry.isInternal
      )
        discarded.push(pendingItem(entry))
    }
    if (run?.admitting) {
      discard(run.admitting)
      run.admitting = undefined
    }
    for (const entry of outbox.splice(0)) discard(entry)
    if (!keepQueue) for (const entry of queue.splice(0)) discard(entry)
    if (run && !run.controller.signal.aborted) {
      run.cause = cause
      run.controller.abort()
    }
    return { discarded }
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

  const agent: Agent = {
    session,
    get status() {
      return status
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
      return enqueue('prompt', toUserMessage(input, 'agent.send()'), sendOptions?.wakeup ?? true)
    },
    steer(input) {
      assertUsable('steer')
      const data = toUserMessage(input, 'agent.steer()')
      // A canceled turn takes no steering: a steer made while it winds down is a queued prompt
      // that runs after it (docs/spec.md §5.5; issue 9 item 14).
      if (!isWindowOpen || run?.controller.signal.aborted) return enqueue('prompt', data, true)
      const entry: Entry = {
        id: newMessageId(),
        kind: 'steering',
        data,
        wakeup: false,
        done: defer(),
      }
      outbox.push(entry)
      return { id: entry.id, result: entry.done.promise }
    },
    inject(context) {
      assertUsable('inject')
      const data = toUserMessage(context, 'agent.inject()')
      if (data.source.kind === 'user') {
        throw new RudderError(
          'INVALID_INPUT',
          "agent.inject(): the source must name the producer (e.g. { kind: 'plugin', name: 'my-plugin' }); a person's message goes through send() or steer()",
        )
      }
      const entry: Entry = {
        id: newMessageId(),
        kind: 'context',
        data,
        wakeup: false,
        done: defer(),
      }
      // While session-start listeners run no turn can open, so their contexts land at once.
      if (isWindowOpen && !isSessionStarting) outbox.push(entry)
      else appendContextNow(entry)
      return { id: entry.id, result: entry.done.promise }
    },
    continue() {
      assertUsable('continue')
      return enqueue('continue', undefined, true)
    },
    get settings() {
      return settings.public
    },
    configure(changes) {
      assertUsable('configure')
      const next = { ...settings.public, ...changes }
      // A new provider without a model brings its own model.
      const model =
        changes.model ?? (changes.provider ? changes.provider.model : undefined) ?? next.model
      if (!model) missingModel(next.provider)
      settings = stepSettings({ ...next, model: model as string })
    },
    compact(compactOptions) {
      assertUsable('compact')
      const done = defer<CompactResult>()
      const instructions = compactOptions?.instructions
      push({
        id: newMessageId(),
        kind: 'compact',
        wakeup: true,
        done: defer(),
        compaction: { done, ...(instructions === undefined ? {} : { instructions }) },
      })
      return done.promise
    },
    cancel(cancelOptions) {
      assertUsable('cancel')
      return discardPending('cancel', cancelOptions?.keepQueue ?? false)
    },
    on: (hook, listener) => hooks.on(hook, listener),
    subscribe(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    pending() {
      return {
        queued: queue.filter((entry) => entry.kind === 'prompt').map(pendingItem),
        staged: outbox.filter((entry) => !entry.isInternal).map(pendingItem),
      }
    },
    idle() {
      if (!isDriving && !queue.some((entry) => entry.wakeup)) return Promise.resolve()
      const waiter = defer<void>()
      idleWaiters.push(waiter)
      return waiter.promise
    },
    dispose() {
      disposing ??= (async () => {
        discardPending('dispose', false)
        lifetime.abort()
        await driving
        await sessionStart
        unsubscribeListenerErrors()
      })()
      return disposing
    },
  }
  return agent
}

/** The settings as a step uses them: tools by name, their specs for the request. */
type StepSettings = { readonly step: StepSettingsOf<TurnContext>; readonly public: AgentSettings }

function stepSettings(settings: AgentSettings): StepSettings {
  if (!settings.provider || typeof settings.provider.stream !== 'function')
    throw new RudderError(
      'INVALID_INPUT',
      'createAgent: provider must implement stream(request, signal)',
    )
  const tools = new Map<string, Tool>()
  for (const tool of settings.tools) {
    if (tools.has(tool.name))
      throw new RudderError(
        'INVALID_INPUT',
        `createAgent: two tools are named ${JSON.stringify(tool.name)}; tool names must be unique`,
      )
    tools.set(tool.name, tool)
  }
  return {
    step: {
      provider: settings.provider,
      model: settings.model,
      system: settings.system,
      params: settings.params,
      tools,
      toolSpecs: [...tools.values()].map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
    },
    public: Object.freeze({ ...settings, tools: [...settings.tools] }),
  }
}

function missingModel(provider: Provider): never {
  throw new RudderError(
    'INVALID_INPUT',
    `createAgent: no model; pass createAgent({ model }) (provider ${provider.id} names no default)`,
  )
}

function pendingItem(entry: Entry): PendingItem {
  return { id: entry.id, kind: entry.kind as PendingItem['kind'], data: entry.data! }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RudderError(
      'INVALID_INPUT',
      `createAgent: ${name} must be a whole number of at least 1, got ${value}`,
    )
  return value
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0)
    throw new RudderError(
      'INVALID_INPUT',
      `createAgent: ${name} must be a whole number of at least 0, got ${value}`,
    )
  return value
}
