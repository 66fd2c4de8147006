/**
 * The live session: an append-only log held in memory, with its projection kept up to date
 * and observers notified in seq order. Stores give it durability through a `SessionSink`.
 */
import { RudderError } from './errors.js'
import {
  type CoreEvent,
  type EventMap,
  type EventType,
  type ExtensionEvent,
  FORMAT_VERSION,
  isEventType,
  type SessionEvent,
  type SessionHeader,
} from './events.js'
import { createLogChecker, type LogChecker } from './invariants.js'
import { deepFreeze, toFrozenJson } from './json.js'
import { createProjector, type Message, type Projector } from './projection.js'
import type { JsonValue } from './values.js'

/** Called after an event is committed to the session, in seq order, once per event. */
export type SessionListener = (event: SessionEvent) => void
/** Told when a session listener throws; the log is unaffected. */
export type ListenerErrorListener = (error: unknown, event: SessionEvent) => void

/** A live session: the same API whether it lives in memory or in a store. */
export interface Session {
  readonly header: SessionHeader
  /** Every event so far, frozen, indexed by seq. */
  readonly events: readonly SessionEvent[]
  /**
   * Appends an event and returns it, frozen, with the next seq and the current time. Throws
   * `INVALID_EVENT_DATA` (naming the type and field) if `data` is not plain JSON, and
   * `INVARIANT_VIOLATION` when invariant checking is on and the event breaks one. Listeners
   * are notified after the append; an append made from a listener takes the next seq at once.
   */
  append<T extends EventType>(type: T, data: EventMap[T]): CoreEvent<T>
  /** Appends a plugin's own event type; it must be `ignorable` so older readers can skip it. */
  append(type: string, data: JsonValue, options: { ignorable: true }): ExtensionEvent
  /**
   * The projection of the whole log (docs/spec.md §4), kept incrementally. O(1): a read-only
   * view that later appends do not change and that throws on any write (decision 0140).
   */
  messages(): readonly Message[]
  /**
   * The characters of `messages()` by the rule of `estimateTokens` (four make a token), kept
   * incrementally: `estimateTokens(session.messages(), system)` equals
   * `Math.ceil((session.transcriptCharacters() + system.length) / 4)` without the walk.
   */
  transcriptCharacters(): number
  /** Notified of every event appended after subscribing. Returns an unsubscribe function. */
  subscribe(listener: SessionListener): () => void
  /** Notified when a listener throws. Without any, errors go to `console.error`. */
  subscribeListenerErrors(listener: ListenerErrorListener): () => void
  /** Resolves once every event appended so far is durable (at once for memory). Rejects on a failed write. */
  flush(): Promise<void>
  /** Flushes and releases the session (a store's writer lease). Appends after it throw. */
  close(): Promise<void>
}

/** Where a durable session sends its events. Implemented by stores. */
export interface SessionSink {
  /** Takes a committed event; may buffer it. Throws if an earlier write failed (then nothing is appended). */
  write(event: SessionEvent): void
  /** Makes everything written so far durable. */
  flush(): Promise<void>
  /** Flushes and releases resources. */
  close(): Promise<void>
}

export type CreateSessionOptions = {
  /** Session id; a random UUID by default. */
  readonly id?: string
  readonly cwd?: string
  readonly title?: string
  readonly parent?: SessionHeader['parent']
  /** Check every append against the invariants of docs/spec.md §3.3 and refuse violations. */
  readonly checkInvariants?: boolean
  /** The clock for event times (epoch ms). */
  readonly now?: () => number
}

/** Creates an in-memory live session. */
export function createSession(options: CreateSessionOptions = {}): Session {
  const now = options.now ?? Date.now
  const header: SessionHeader = {
    id: options.id ?? globalThis.crypto.randomUUID(),
    formatVersion: FORMAT_VERSION,
    createdAt: now(),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.parent === undefined ? {} : { parent: options.parent }),
    ...(options.title === undefined ? {} : { title: options.title }),
  }
  return openLiveSession({ header, events: [], ...pick(options) })
}

function pick(options: CreateSessionOptions): { checkInvariants?: boolean; now?: () => number } {
  return {
    ...(options.checkInvariants === undefined ? {} : { checkInvariants: options.checkInvariants }),
    ...(options.now === undefined ? {} : { now: options.now }),
  }
}

export type OpenLiveSessionOptions = {
  readonly header: SessionHeader
  /** Events already in the log (loaded and validated by a store); frozen in place. */
  readonly events: readonly SessionEvent[]
  readonly sink?: SessionSink
  readonly checkInvariants?: boolean
  readonly now?: () => number
  /**
   * A projector that already holds the projection of the first `projected` events (a store
   * restored it from a checkpoint); the session applies only the events after them. Its log
   * getter must give these events while the session opens and `session.events` after.
   */
  readonly projection?: { readonly projector: Projector; readonly projected: number }
}

/** Opens a live session over existing events (used by stores). */
export function openLiveSession(options: OpenLiveSessionOptions): Session {
  const now = options.now ?? Date.now
  const header = deepFreeze({ ...options.header })
  const events: SessionEvent[] = []
  const projector = options.projection?.projector ?? createProjector(() => events)
  const projected = options.projection?.projected ?? 0
  const checker: LogChecker | undefined = options.checkInvariants
    ? createLogChecker({ allowOpenTurn: true })
    : undefined
  const sink = options.sink
  const listeners = new Set<{ listener: SessionListener; fromSeq: number }>()
  const errorListeners = new Set<ListenerErrorListener>()
  let delivered = 0
  let isDelivering = false
  let isClosed = false

  for (const event of options.events) {
    deepFreeze(event)
    checker?.record(event)
    events.push(event)
    if (event.seq >= projected) projector.apply(event)
  }
  delivered = events.length

  function reportListenerError(error: unknown, event: SessionEvent): void {
    if (errorListeners.size === 0) {
      console.error(`rudder: a session listener threw on seq ${event.seq} (${event.type}):`, error)
      return
    }
    for (const listener of errorListeners) {
      try {
        listener(error, event)
      } catch (nested) {
        // An error reporter that throws has nowhere left to report to but the console.
        console.error('rudder: a listener-error listener threw:', nested)
      }
    }
  }

  // Notifications run in seq order, each once; appends from listeners queue behind the
  // current notification because `delivered` only moves forward here.
  function deliver(): void {
    if (isDelivering) return
    isDelivering = true
    try {
      while (delivered < events.length) {
        const event = events[delivered++]!
        for (const entry of [...listeners]) {
          if (!listeners.has(entry) || event.seq < entry.fromSeq) continue
          try {
            entry.listener(event)
          } catch (error) {
            reportListenerError(error, event)
          }
        }
      }
    } finally {
      isDelivering = false
    }
  }

  function append(type: string, data: unknown, extension?: { ignorable: true }): SessionEvent {
    if (isClosed)
      throw new RudderError('DISPOSED', `session ${header.id} is closed; open it again to append`)
    const isCore = isEventType(type)
    if (!isCore && extension?.ignorable !== true) {
      throw new RudderError(
        'UNKNOWN_EVENT_TYPE',
        `cannot append "${type}": it is not a core event type; a plugin's own events must be appended with { ignorable: true } so that readers that do not know them can skip them`,
      )
    }
    const frozenData = toFrozenJson(data, `cannot append "${type}"`)
    const base = { seq: events.length, time: now(), type, data: frozenData }
    const event = Object.freeze(isCore ? base : { ...base, ignorable: true }) as SessionEvent
    if (checker) {
      const problems = checker.check(event)
      if (problems.length > 0) {
        throw new RudderError(
          'INVARIANT_VIOLATION',
          `cannot append "${type}": ${problems.map((p) => `${p.message} [${p.rule}]`).join('; ')}`,
        )
      }
    }
    sink?.write(event)
    checker?.record(event)
    events.push(event)
    projector.apply(event)
    deliver()
    return event
  }

  return {
    header,
    events,
    append: append as Session['append'],
    messages: () => projector.messages(),
    transcriptCharacters: () => projector.characters(),
    subscribe(listener) {
      const entry = { listener, fromSeq: events.length }
      listeners.add(entry)
      return () => {
        listeners.delete(entry)
      }
    },
    subscribeListenerErrors(listener) {
      errorListeners.add(listener)
      return () => {
        errorListeners.delete(listener)
      }
    },
    flush: () => sink?.flush() ?? Promise.resolve(),
    async close() {
      if (isClosed) return
      isClosed = true
      await sink?.close()
    },
  }
}
