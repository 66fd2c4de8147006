/**
 * The extension points of docs/spec.md §6: their event and result types, the registry behind
 * `agent.on`, and the waterfall and serial runners.
 */
import type { ContentBlock, HookName, JsonValue, UserMessageData } from '../core/index.js'

export type PromptSubmitEvent = { readonly prompt: UserMessageData; readonly signal: AbortSignal }
export type PromptSubmitResult =
  | {
      readonly action: 'admit'
      /** Replaces only the direct prompt's content. */
      readonly content: readonly ContentBlock[]
      /** Written after the prompt, FIFO, each with its own source, only if the final decision admits. */
      readonly additionalContexts: readonly UserMessageData[]
    }
  | { readonly action: 'block'; readonly reason: string }

export type StepEvent = {
  readonly turn: number
  readonly step: number
  readonly signal: AbortSignal
  /**
   * Ends the turn instead of running this step: once the `step` listeners are done, the outbox
   * is drained and the turn ends `completed`. For a listener that was told to stop the agent
   * (a command hook's `continue: false`); showing why is the caller's business.
   */
  stop(): void
}

/** A tool call as the model made it (`args` as sent, before validation). */
export type ToolCallInfo = { readonly id: string; readonly name: string; readonly args: JsonValue }
export type ToolPreEvent = { readonly call: ToolCallInfo; readonly signal: AbortSignal }
export type ToolPreResult =
  | { readonly action: 'run'; readonly args?: JsonValue }
  | { readonly action: 'deny'; readonly reason: string }
  /** `args`, when given, replace the call's arguments: the approver is asked about them and they run. */
  | { readonly action: 'ask'; readonly reason?: string; readonly args?: JsonValue }

export type ToolPostEvent = {
  readonly call: ToolCallInfo
  readonly result: { readonly content: readonly ContentBlock[]; readonly isError: boolean }
  readonly signal: AbortSignal
}
export type ToolPostResult = {
  readonly content: readonly ContentBlock[]
  readonly isError: boolean
  readonly additionalContexts: readonly UserMessageData[]
}

export type TurnStoppingEvent = {
  readonly turn: number
  readonly stopCount: number
  readonly signal: AbortSignal
  /**
   * Ends the turn now, with the reason it was about to end with, even if a listener steered:
   * it takes precedence over continuing (steering already staged is still logged before
   * `turn/end`, like everything staged in the turn). Showing why is the caller's business.
   */
  stop(): void
}
export type SessionStartEvent = {
  readonly reason: 'new' | 'resume' | 'fork'
  readonly signal: AbortSignal
}

/** A waterfall listener: `await next()` gives the downstream result; what it returns is final. */
export type WaterfallListener<Event, Result> = (
  event: Event,
  next: () => Promise<Result>,
) => Result | Promise<Result>
/** A serial listener, awaited one after another. */
export type SerialListener<Event> = (event: Event) => void | Promise<void>

/**
 * Every extension point and its listener type (docs/spec.md §6). Listeners run in registration
 * order, the first registered outermost. A listener may throw: what the agent then does is
 * written on each point below, and every throw is reported as a `listener/error` notification.
 * A listener should honour `event.signal`; one that ignores it is not waited for after a cancel
 * where that is said below.
 */
export type HookListeners = {
  /**
   * Waterfall, during admission, before the turn opens (§6.1). The final result decides:
   * `admit` replaces only the prompt's content and adds `additionalContexts` (logged after the
   * prompt, FIFO, each with its own source); `block` writes nothing and the delivery resolves
   * `blocked`. A throw or a malformed result blocks with the error's message. Not waited for
   * after a cancel.
   */
  'prompt-submit': WaterfallListener<PromptSubmitEvent, PromptSubmitResult>
  /** Serial, before each step's drain (§6.2); `stop()` ends the turn `completed`. A throw is reported and the step runs. */
  step: SerialListener<StepEvent>
  /**
   * Waterfall, per call, in call order, before any call of the message runs (§6.3): `run`
   * (with replacement `args`, checked again), `deny` (the reason goes to the model) or `ask`
   * (the approver decides). A throw or a malformed result gives the call a `hook-failed`
   * error result; the call does not run.
   */
  'tool-pre': WaterfallListener<ToolPreEvent, ToolPreResult>
  /**
   * Waterfall, per call, after it ran and before its result is logged (§6.4): the final
   * `content`/`isError` replace the result; `additionalContexts` are staged and logged after
   * every result of the batch (dropped if the turn was canceled). A throw keeps the tool's own
   * result. Not run for a call that finished after a cancel.
   */
  'tool-post': WaterfallListener<ToolPostEvent, ToolPostResult>
  /**
   * Serial, once per attempt to end a turn when no steering was drained (§6.5): steering
   * staged by a listener continues the turn (up to `maxStopContinuations`); `stop()` ends it
   * anyway. A throw is reported and the turn ends as it would have.
   */
  'turn-stopping': SerialListener<TurnStoppingEvent>
  /** Serial, once per agent before its first turn (§6.6); contexts injected now land at once. A throw is reported. */
  'session-start': SerialListener<SessionStartEvent>
}

/** Listeners given to `createAgent({ hooks })`: one or several per extension point. */
export type HookOptions = {
  readonly [K in HookName]?: HookListeners[K] | readonly HookListeners[K][]
}

/** The listeners of each extension point, in registration order. */
export interface HookRegistry {
  on<K extends HookName>(hook: K, listener: HookListeners[K]): () => void
  /** A snapshot, so listeners added while a hook runs take effect from its next run. */
  list<K extends HookName>(hook: K): readonly HookListeners[K][]
}

const HOOK_NAMES: readonly HookName[] = [
  'prompt-submit',
  'step',
  'tool-pre',
  'tool-post',
  'turn-stopping',
  'session-start',
]

export function createHookRegistry(initial: HookOptions = {}): HookRegistry {
  const lists = new Map<HookName, { listener: unknown }[]>(HOOK_NAMES.map((name) => [name, []]))
  // The snapshot `list` gives, rebuilt only after a change: a step asks for three lists, and
  // a new array per ask was a steady cost of the loop (bench B5+).
  const snapshots = new Map<HookName, readonly unknown[]>()
  const registry: HookRegistry = {
    on(hook, listener) {
      const list = lists.get(hook)
      if (!list)
        throw new TypeError(
          `unknown extension point ${JSON.stringify(hook)}; known: ${HOOK_NAMES.join(', ')}`,
        )
      if (typeof listener !== 'function')
        throw new TypeError(`a listener for ${hook} must be a function`)
      // Wrap so the same function registered twice is two registrations, removed one at a time.
      const entry = { listener }
      list.push(entry)
      snapshots.delete(hook)
      return () => {
        const index = list.indexOf(entry)
        if (index >= 0) {
          list.splice(index, 1)
          snapshots.delete(hook)
        }
      }
    },
    list<K extends HookName>(hook: K) {
      let snapshot = snapshots.get(hook)
      if (!snapshot) {
        snapshot = Object.freeze((lists.get(hook) ?? []).map((entry) => entry.listener))
        snapshots.set(hook, snapshot)
      }
      return snapshot as readonly HookListeners[K][]
    },
  }
  for (const name of Object.keys(initial) as HookName[]) {
    const value = initial[name]
    const listeners = (
      Array.isArray(value) ? value : value === undefined ? [] : [value]
    ) as HookListeners[typeof name][]
    for (const listener of listeners) registry.on(name, listener)
  }
  return registry
}

/**
 * Runs a waterfall: the first listener is outermost. `next()` runs the rest once (later calls
 * return the same promise); with no listeners left, `fallback` gives the default result.
 */
export function runWaterfall<Event, Result>(
  listeners: readonly WaterfallListener<Event, Result>[],
  event: Event,
  fallback: () => Result,
): Promise<Result> {
  const run = async (index: number): Promise<Result> => {
    const listener = listeners[index]
    if (!listener) return fallback()
    let downstream: Promise<Result> | undefined
    const next = () => {
      downstream ??= run(index + 1)
      return downstream
    }
    return listener(event, next)
  }
  return run(0)
}

/** Runs serial listeners one after another; a throw is reported and the rest still run. */
export async function runSerial<Event>(
  listeners: readonly SerialListener<Event>[],
  event: Event,
  onError: (error: unknown) => void,
): Promise<void> {
  for (const listener of listeners) {
    try {
      await listener(event)
    } catch (error) {
      onError(error)
    }
  }
}
