/**
 * The event vocabulary of the session log (docs/spec.md §3): one map from event type to its data,
 * one envelope, and the reasons a turn ends.
 */
import type {
  AssistantBlock,
  ContentBlock,
  JsonObject,
  JsonValue,
  MessageSource,
  SessionId,
  ToolSpec,
  Usage,
} from './values.js'

/** The log format this build writes. Readers refuse logs with a newer one. */
export const FORMAT_VERSION = 1

/** Why a turn ended. `interrupted` is written only by crash repair. */
export type TurnEndReason =
  | { readonly kind: 'completed' }
  | { readonly kind: 'max-tokens' }
  | { readonly kind: 'step-limit' }
  | { readonly kind: 'canceled'; readonly cause: string }
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  | { readonly kind: 'interrupted' }
  | { readonly kind: 'stop-limit' }

/** How a model response ended, as the provider reported it. */
export type StopReason = 'stop' | 'tool-calls' | 'max-tokens'
/** How a logged assistant message ended: a provider stop, or cut short by cancel or error. */
export type AssistantStopReason = StopReason | 'canceled' | 'error'

export type CompactionReason = 'manual' | 'auto' | 'overflow'

/** The data of each core event type. */
export type EventMap = {
  'user/message': {
    readonly id: string
    readonly content: readonly ContentBlock[]
    readonly source: MessageSource
    readonly meta?: JsonValue
  }
  'steering/message': {
    readonly id: string
    readonly content: readonly ContentBlock[]
    readonly source: MessageSource
    readonly meta?: JsonValue
    readonly turn: number
  }
  'turn/start': { readonly turn: number; readonly trigger: 'prompt' | 'continue' }
  'turn/end': { readonly turn: number; readonly reason: TurnEndReason }
  'step/start': { readonly turn: number; readonly step: number }
  'request/header': {
    readonly provider: string
    readonly model: string
    readonly system: string
    readonly tools: readonly ToolSpec[]
    readonly params: JsonObject
  }
  'assistant/message': {
    readonly id: string
    readonly content: readonly AssistantBlock[]
    readonly provider: string
    readonly model: string
    readonly stopReason: AssistantStopReason
    readonly usage: Usage
    readonly interrupted?: true
  }
  'tool/call': { readonly callId: string; readonly name: string; readonly args: JsonValue }
  'tool/result': {
    readonly callId: string
    readonly name: string
    readonly content: readonly ContentBlock[]
    readonly isError: boolean
    readonly error?: { readonly code: string; readonly message: string }
    readonly meta?: JsonValue
  }
  'step/end': { readonly turn: number; readonly step: number }
  compaction: {
    readonly id: string
    readonly summary: readonly ContentBlock[]
    readonly firstKeptSeq: number
    readonly reason: CompactionReason
    readonly tokensBefore: number
    readonly tokensAfter?: number
    /** The summarizing model call, so the summary is reproducible from the log. */
    readonly request?: {
      readonly model: string
      readonly system: string
      readonly messageCount: number
    }
  }
}

/** The core event types, in the order of docs/spec.md §3.2. */
export const EVENT_TYPES = [
  'user/message',
  'steering/message',
  'turn/start',
  'turn/end',
  'step/start',
  'request/header',
  'assistant/message',
  'tool/call',
  'tool/result',
  'step/end',
  'compaction',
] as const satisfies readonly (keyof EventMap)[]

export type EventType = keyof EventMap

/** The envelope of one core event. */
export type CoreEvent<T extends EventType = EventType> = {
  [K in T]: {
    readonly seq: number
    readonly time: number
    readonly type: K
    readonly data: EventMap[K]
    readonly ignorable?: true
  }
}[T]

/**
 * An event of a type this build does not know (a plugin's). Only events marked `ignorable`
 * may be kept: readers skip them and they never reach the model.
 */
export type ExtensionEvent = {
  readonly seq: number
  readonly time: number
  readonly type: string
  readonly data: JsonValue
  readonly ignorable: true
}

/** One event of the log. Narrow with `isCoreEvent` before switching on `type`. */
export type SessionEvent = CoreEvent | ExtensionEvent

/** Session metadata kept by the store. Not an event: it never reaches the model. */
export type SessionHeader = {
  readonly id: SessionId
  readonly formatVersion: number
  readonly createdAt: number
  readonly cwd?: string
  readonly parent?: { readonly sessionId: SessionId; readonly seq: number }
  readonly title?: string
}

const CORE_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES)

/** Whether `type` is one of the core event types of docs/spec.md §3.2. */
export function isEventType(type: string): type is EventType {
  return CORE_TYPES.has(type)
}

/** Whether an event is a core event (and can be switched on by `type`). */
export function isCoreEvent(event: SessionEvent): event is CoreEvent {
  return CORE_TYPES.has(event.type)
}

/**
 * Whether `event` is the core event `type`, narrowing its `data` to `EventMap[type]`
 * (`SessionEvent` alone cannot narrow on `type`: an extension event's type is any string).
 */
export function isEventOf<T extends EventType>(
  event: SessionEvent | undefined,
  type: T,
): event is CoreEvent<T> {
  return event?.type === type
}
