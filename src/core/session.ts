/**
 * The live session: an append-only log held in memory, with its projection kept up to date
 * and observers notified in seq order. Stores give it durability through a `SessionSink`.
 */
import { RudderError } from './errors.js'
import {
  type CoreEvent,
  EVENT_TYPES,
  type EventMap,
  type EventType,
  type ExtensionEvent,
  FORMAT_VERSION,
  isEventOf,
  type SessionEvent,
  type SessionHeader,
} from './events.js'
import { createLogChecker, type LogChecker } from './invariants.js'
import { deepFreeze, toFrozenJson } from './json.js'
import { EMPTY_LOG_STATE, foldEvent, type LogState } from './log-fold.js'
import { emptyObjectArray } from './object-array.js'
import { freezeOwnedJson } from './owned-json.js'
import {
  createProjector,
  extendProjectionState,
  freezeProjected,
  type Message,
  type ProjectionState,
  type Projector,
} from './projection.js'
import type { JsonValue } from './values.js'

/** Events per batch of `readEvents` from memory. */
const READ_BATCH = 1024

/** Events projected between two turns of the event loop while loading (a few ms of work). */
const PROJECT_STRETCH = 8_192

/**
 * The per-event loops of loading a projection, outside the session's closures: a function
 * made per session is optimised again for each one, which cost more than the loop itself when
 * a long log is loaded (bench B2). The first event of `batch` whose seq is not `next` on, if
 * any.
 */
function outOfOrder(batch: readonly SessionEvent[], next: number): SessionEvent | undefined {
  for (let index = 0; index < batch.length; index++) {
    const event = batch[index]!
    if (event.seq !== next + index) return event
  }
  return undefined
}

/**
 * Projects `events[from..to)` (see `outOfOrder`); those before index `thawed` may not be frozen
 * yet (read by a load), so what their projection keeps is frozen first.
 */
function applyEach(
  projector: Projector,
  events: readonly SessionEvent[],
  from: number,
  to: number,
  thawed: number,
): void {
  for (let index = from; index < to; index++) {
    const event = events[index]!
    if (index < thawed) freezeProjected(event)
    projector.apply(event)
  }
}

/**
 * Takes in the events a session opens with (see `outOfOrder`): checked, held and, when the
 * projection is loaded at open, projected (what the projection keeps frozen first). They are not
 * frozen here: a store read them, so nobody else holds them, and they are frozen when they
 * leave the session (`thawedTo`). Inside `openLiveSession` this loop made that whole function
 * hot, so it was optimised again at every open (decision 0182).
 */
function takeInEach(
  events: readonly SessionEvent[],
  checker: LogChecker | undefined,
  resident: SessionEvent[],
  projector: Projector | undefined,
): void {
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!
    checker?.record(event)
    resident.push(event)
    if (projector) {
      freezeProjected(event)
      projector.apply(event)
    }
  }
}

/**
 * The earliest seq a projection loaded at `from` must start at (see `outOfOrder`): `from`, or
 * where a compaction after the checkpoint's `throughSeq` among `events` keeps from, if earlier.
 * Inside `load`, this loop over every resident event made that closure hot, and a closure made
 * per session loses its optimised code once its session is collected: 8–34 ms of compiling at
 * most loads of a 20 MB log without a checkpoint (bench B2, decision 0183).
 */
function keptFrom(events: readonly SessionEvent[], throughSeq: number, from: number): number {
  let kept = from
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!
    if (event.seq > throughSeq && isEventOf(event, 'compaction'))
      kept = Math.min(kept, event.data.firstKeptSeq)
  }
  return kept
}

/** Freezes each of `events` (see `thawedTo` in `openLiveSession`) and returns them. */
function freezeEach<T extends readonly SessionEvent[]>(events: T): T {
  for (let index = 0; index < events.length; index++) deepFreeze(events[index])
  return events
}

/** Called after an event is committed to the session, in seq order, once per event. */
export type SessionListener = (event: SessionEvent) => void
/** Told when a session listener throws; the log is unaffected. */
export type ListenerErrorListener = (error: unknown, event: SessionEvent) => void

/** A live session: the same API whether it lives in memory or in a store. */
export interface Session {
  readonly header: SessionHeader
  /** The seq the next append takes: the number of events in the log. */
  readonly nextSeq: number
  /**
   * The first seq held in memory. A session created in memory holds all of its log (0); one
   * opened from a store holds the events after its checkpoint, and more once its projection is
   * loaded (docs/spec.md §9.2). Earlier events are read with `readEvents`.
   */
  readonly residentFrom: number
  /** The events held in memory, `residentFrom` through the last, frozen, in seq order. */
  readonly residentEvents: readonly SessionEvent[]
  /** The event at `seq` if it is held in memory, else undefined. */
  eventAt(seq: number): SessionEvent | undefined
  /**
   * The log from `fromSeq` (default 0) through `throughSeq` (default the last seq when called),
   * in batches, in seq order: from the store for what is not held in memory, checked as any
   * load is, yielding to the event loop between batches. Rejects with `LogCorruptError` if the
   * stored part no longer matches what the session was opened over.
   */
  readEvents(options?: ReadEventsOptions): AsyncIterable<readonly SessionEvent[]>
  /** The fold of the log's turn/step/call structure after its last event (log-fold.ts). */
  state(): LogState
  /**
   * Appends an event and returns it, frozen, with the next seq and the current time. Throws
   * `INVALID_EVENT_DATA` (naming the type and field) if `data` is not plain JSON, and
   * `INVARIANT_VIOLATION` when invariant checking is on and the event breaks one. Listeners
   * are notified after the append; an append made from a listener takes the next seq at once.
   */
  append<T extends EventType>(type: T, data: EventMap[T]): CoreEvent<T>
  /** Appends a plugin's own event type; it must be `ignorable` so older readers can skip it. */
  append(type: string, data: JsonValue, options: { ignorable: true }): ExtensionEvent
  /** Whether `messages()`, `transcriptCharacters()` and `requestHeader()` can be read now. */
  readonly isProjectionLoaded: boolean
  /**
   * Reads what the projection needs from the store (the events of the transcript since the
   * last compaction, and the latest `request/header`), once; at once when it is loaded. The
   * agent awaits it before a turn or a compaction, so resuming a session reads none of its
   * history. Rejects like `readEvents`.
   */
  loadProjection(signal?: AbortSignal): Promise<void>
  /**
   * The projection of the whole log (docs/spec.md §4), kept incrementally. O(1): a read-only
   * view that later appends do not change and that throws on any write (decision 0140).
   * Throws `WRONG_STATE` before `loadProjection`.
   */
  messages(): readonly Message[]
  /**
   * The characters of `messages()` by the rule of `estimateTokens` (four make a token), kept
   * incrementally: `estimateTokens(session.messages(), system)` equals
   * `Math.ceil((session.transcriptCharacters() + system.length) / 4)` without the walk.
   * Throws `WRONG_STATE` before `loadProjection`.
   */
  transcriptCharacters(): number
  /**
   * The data of the latest `request/header`: the system prompt, tools and parameters a request
   * is made with beside `messages()`. Throws `WRONG_STATE` before `loadProjection`.
   */
  requestHeader(): EventMap['request/header'] | undefined
  /**
   * Lets go of the events and projection held in memory when the session is idle (decision
   * 0166): everything appended is made durable and a checkpoint written, then the session
   * holds what a fresh open from that checkpoint holds (`residentFrom` becomes `nextSeq`,
   * `isProjectionLoaded` false); `readEvents` and `loadProjection` read the rest back from the
   * store, as after a resume. Resolves true if it let go of anything, false if it did nothing:
   * a session created in memory or in a memory store (nothing to read back from), one opened
   * without invariant checking, one whose log was found changed, or one in use when the
   * checkpoint is written (an append, a projection load, an agent's run). The agent calls it
   * after it has been idle for `releaseHistoryAfterMs`. Rejects if the flush fails.
   */
  releaseHistory(): Promise<boolean>
  /** Notified of every event appended after subscribing. Returns an unsubscribe function. */
  subscribe(listener: SessionListener): () => void
  /** Notified when a listener throws. Without any, errors go to `console.error`. */
  subscribeListenerErrors(listener: ListenerErrorListener): () => void
  /** Resolves once every event appended so far is durable (at once for memory). Rejects on a failed write. */
  flush(): Promise<void>
  /** Flushes and releases the session (a store's writer lease). Appends after it throw. */
  close(): Promise<void>
}

/**
 * The key of a live session's append that takes its data over (decision 0077): the data is
 * checked and frozen in place instead of copied. Internal to rudder: callers use `appendOwned`.
 */
const APPEND_OWNED: unique symbol = Symbol('rudder.appendOwned')

type OwnedAppend = <T extends EventType>(type: T, data: EventMap[T]) => CoreEvent<T>

/**
 * `cannot append "<type>"`, the start of an append's error, made once per core type rather
 * than at every append (it is read only when the data is refused; bench B5+). Keyed by the core
 * types only, so one lookup also says whether a type is core (decision 0174).
 */
const CORE_APPEND_WHATS: ReadonlyMap<string, string> = new Map(
  EVENT_TYPES.map((type) => [type, `cannot append "${type}"`]),
)

/**
 * What `flush()` returns with nothing to write (a session without a store): one settled promise
 * for all, frozen, rather than a new one at each of a step's durability points (bench B5+).
 */
const FLUSHED: Promise<void> = Object.freeze(Promise.resolve()) as Promise<void>

/**
 * The key of a live session's hold (decision 0166): while one is held, `releaseHistory` does
 * nothing. Internal to rudder: the agent holds its session while a run may read `messages()`.
 */
const HOLD: unique symbol = Symbol('rudder.holdSession')

/**
 * Keeps `session` from releasing its history (`Session.releaseHistory`) until the returned
 * function is called (once; later calls do nothing). A session not made by `openLiveSession`
 * has nothing to hold.
 */
export function holdSession(session: Session): () => void {
  const hold = (session as { [HOLD]?: () => () => void })[HOLD]
  return hold ? hold() : () => {}
}

/**
 * Appends a core event whose data the caller built for this append and gives up, as
 * `session.append` does but without copying the data: every unfrozen object and array in it
 * is frozen in place (`freezeOwnedJson`), so nobody may keep a reference to one, and any
 * frozen one must be plain JSON the log already holds. For the agent's own events; data that
 * came from a caller, a hook, a tool or a provider goes through `session.append`, or is
 * copied with `toFrozenJson` before it is put in. A session not made by `openLiveSession`
 * gets a plain `append`. Throws as `append` does.
 */
export function appendOwned<T extends EventType>(
  session: Session,
  type: T,
  data: EventMap[T],
): CoreEvent<T> {
  const owned = (session as { [APPEND_OWNED]?: OwnedAppend })[APPEND_OWNED]
  return owned ? owned(type, data) : session.append(type, data)
}

export type ReadEventsOptions = {
  readonly fromSeq?: number
  readonly throughSeq?: number
  readonly signal?: AbortSignal
}

/**
 * The stored part of a session's log that it does not hold in memory (events before
 * `residentFrom`), given by the store that opened it.
 */
export interface SessionHistory {
  /**
   * Events `fromSeq..throughSeq`, all before the resident ones, checked, in batches; not
   * necessarily frozen (the session freezes what it hands out, decision 0175). The session may
   * keep the batches.
   */
  read(fromSeq: number, throughSeq: number, signal?: AbortSignal): AsyncIterable<SessionEvent[]>
  /**
   * The error to throw when what was read does not fit the state the session was opened with
   * (the log was changed behind its checkpoint); the store discards that checkpoint.
   */
  mismatch(reason: string): Error
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
  /** Events already in the log (loaded and validated by a store), from `fromSeq`; frozen in place. */
  readonly events: readonly SessionEvent[]
  /** The seq of `events[0]`: a store leaves the events before it in `history` (default 0). */
  readonly fromSeq?: number
  /** Reads the events before `fromSeq`; required when `fromSeq` > 0. */
  readonly history?: SessionHistory
  /** The fold of the events before `fromSeq` (default: the empty log). */
  readonly state?: LogState
  /**
   * The fold of the events before `folded.nextSeq`, when the store already folded them (the
   * checker of a full load): `state()` then folds only the events after it, instead of a
   * second pass over a long log at open.
   */
  readonly folded?: { readonly fold: LogState; readonly nextSeq: number }
  readonly sink?: SessionSink
  /** Check appends against the invariants; only for a session whose whole log is given. */
  readonly checkInvariants?: boolean
  readonly now?: () => number
  /**
   * The projection of the events before `projection.throughSeq + 1`, as a checkpoint kept it
   * (a store restored it): restored from the log when `loadProjection` is called, then the
   * later events are applied. Without it, `events` are projected at once (`fromSeq` must be 0).
   */
  readonly projection?: { readonly state: ProjectionState; readonly throughSeq: number }
  /**
   * What `releaseHistory` does (a store's: flush, checkpoint, then `LiveSession.release`);
   * without it the session never releases.
   */
  readonly releaseHistory?: () => Promise<boolean>
}

/** A live session as a store holds it: the session and what a checkpoint takes from it. */
export interface LiveSession extends Session {
  /** The projection's state after the last event, loaded or not (for a checkpoint). */
  projectionState(): ProjectionState
  /**
   * Lets go of the resident events and the projection, if the session is quiet (no hold, no
   * projection load, no notification running, no invariant checker of its own) and its last
   * seq is `throughSeq`: it then holds what an open from a checkpoint through `throughSeq`
   * holds, and reads earlier events through `history`. Returns whether it did. Synchronous, so
   * no append can come between the check and the release.
   */
  release(history: SessionHistory, throughSeq: number): boolean
}

/** Opens a live session over existing events (used by stores). */
export function openLiveSession(options: OpenLiveSessionOptions): LiveSession {
  const now = options.now ?? Date.now
  const header = deepFreeze({ ...options.header })
  let history = options.history
  let residentFrom = options.fromSeq ?? 0
  if (residentFrom > 0 && !history)
    throw new RudderError('WRONG_STATE', 'openLiveSession: events before fromSeq need a history')
  if (residentFrom > 0 && !options.projection)
    throw new RudderError('WRONG_STATE', 'openLiveSession: a partial log needs its projection')
  if (residentFrom > 0 && options.checkInvariants)
    throw new RudderError('WRONG_STATE', 'openLiveSession: invariant checking needs the whole log')
  const foldedThrough = options.folded?.nextSeq
  if (
    foldedThrough !== undefined &&
    (foldedThrough < residentFrom || foldedThrough > residentFrom + options.events.length)
  )
    throw new RudderError('WRONG_STATE', 'openLiveSession: `folded` must end within the events')
  let resident = emptyObjectArray<SessionEvent>()
  const eventAt = (seq: number): SessionEvent | undefined => resident[seq - residentFrom]
  /**
   * Resident events before this seq may not be frozen yet: those the session opened with and
   * those a projection load read from the history, all read by the store. They are frozen when
   * they first leave the session (`frozenEventAt`, `residentEvents`, `readEvents`; what their
   * projection keeps, when projected), not as they are read: most of a loaded log is never
   * handed out, and freezing every object of it was a tenth of a load (bench B2, decisions 0175
   * and 0182). Every other resident event (an append) is frozen. The thawed events are always
   * the first resident ones.
   */
  let thawedTo = 0
  /** `eventAt` for an event that leaves the session: frozen first. */
  const frozenEventAt = (seq: number): SessionEvent | undefined => {
    const event = resident[seq - residentFrom]
    return seq < thawedTo && event !== undefined ? deepFreeze(event) : event
  }
  /** Freezes every resident event not frozen yet. */
  const freezeResident = (): void => {
    for (let index = 0; index < thawedTo - residentFrom; index++) deepFreeze(resident[index])
    thawedTo = 0
  }
  // Undefined while the projection waits in `deferred` for `loadProjection`.
  let projector: Projector | undefined = options.projection
    ? undefined
    : createProjector(frozenEventAt)
  let deferred = options.projection
  let loading: Promise<void> | undefined
  let checker: LogChecker | undefined = options.checkInvariants
    ? createLogChecker({ allowOpenTurn: true })
    : undefined
  /** The checker over the events taken in, after one it advanced over was not (a refusal). */
  const rebuildChecker = (): LogChecker => {
    const rebuilt = createLogChecker({ allowOpenTurn: true })
    for (const event of resident) rebuilt.record(event)
    return rebuilt
  }
  // The structure is folded on demand, over the resident events not yet folded.
  let folded = options.folded?.fold ?? options.state ?? EMPTY_LOG_STATE
  let foldedTo = options.folded?.nextSeq ?? residentFrom
  const sink = options.sink
  const listeners = new Set<{ listener: SessionListener; fromSeq: number }>()
  // A copy taken when the set changes, so notifying an event copies nothing.
  let listenerList: readonly { listener: SessionListener; fromSeq: number }[] = []
  const errorListeners = new Set<ListenerErrorListener>()
  let delivered = 0
  let isDelivering = false
  let isClosed = false
  /** Holds taken by `holdSession` and not yet given back. */
  let holds = 0

  takeInEach(options.events, checker, resident, projector)
  thawedTo = residentFrom + resident.length
  const nextSeq = () => residentFrom + resident.length
  delivered = nextSeq()

  function notLoaded(what: string): RudderError {
    return new RudderError(
      'WRONG_STATE',
      `session ${header.id}: ${what} is read after \`await session.loadProjection()\` (the agent does it before each turn); the session was opened without reading its history`,
    )
  }

  function mismatch(reason: string): Error {
    return (
      history?.mismatch(reason) ??
      new RudderError('LOG_CORRUPT', `session ${header.id}: ${reason}; open it again`)
    )
  }

  function loadedProjector(what: string): Projector {
    if (!projector) throw notLoaded(what)
    return projector
  }

  async function load(signal: AbortSignal | undefined): Promise<void> {
    const { state, throughSeq } = deferred!
    // Projected afresh from where the checkpoint says, or from where a compaction after it
    // keeps, whichever is earlier; the latest header is read alone when it is earlier still.
    // Every resident event is projected too: starting early is harmless (each compaction
    // starts the transcript over).
    const from = Math.min(keptFrom(resident, throughSeq, state.from), residentFrom)
    let header: CoreEvent<'request/header'> | undefined
    const headerSeq = state.headerSeq
    if (headerSeq !== undefined && headerSeq < from) {
      for await (const batch of history!.read(headerSeq, headerSeq, signal))
        for (const event of batch) if (isEventOf(event, 'request/header')) header = event
      if (header?.seq !== headerSeq) throw mismatch(`seq ${headerSeq} is not a request/header`)
      deepFreeze(header)
    }
    if (from < residentFrom) {
      // The batches as read, joined once at the end: pushing each event onto one array cost a
      // call per event and the array's growing (bench B2).
      const read: (readonly SessionEvent[])[] = []
      let expected = from
      for await (const batch of history!.read(from, residentFrom - 1, signal)) {
        const misfit = outOfOrder(batch, expected)
        if (misfit) throw mismatch(`seq ${misfit.seq} read out of order`)
        read.push(batch)
        expected += batch.length
      }
      if (expected !== residentFrom) throw mismatch(`the log ends at seq ${expected - 1}`)
      // Appends made while reading are already resident: the read part goes before them.
      resident = emptyObjectArray<SessionEvent>().concat(...read, resident)
      // The events read are thawed, and so may be those the session opened with.
      thawedTo = Math.max(thawedTo, residentFrom)
      residentFrom = from
    }
    const projected = createProjector(frozenEventAt, header)
    // A long transcript is projected in stretches, so that loading it does not hold the event
    // loop for long; appends made meanwhile are projected by this same loop.
    for (let seq = residentFrom; seq < nextSeq(); ) {
      const end = Math.min(nextSeq(), seq + PROJECT_STRETCH)
      applyEach(
        projected,
        resident,
        seq - residentFrom,
        end - residentFrom,
        thawedTo - residentFrom,
      )
      const isFull = end - seq === PROJECT_STRETCH
      seq = end
      if (isFull) {
        await new Promise<void>((resolve) => setImmediate(resolve))
        signal?.throwIfAborted()
      }
    }
    if (headerSeq !== undefined && projected.requestHeader() === undefined)
      throw mismatch(`no request/header was read at seq ${headerSeq}`)
    projector = projected
    deferred = undefined
  }

  async function* readEvents(
    options: ReadEventsOptions = {},
  ): AsyncGenerator<readonly SessionEvent[]> {
    const throughSeq = Math.min(options.throughSeq ?? nextSeq() - 1, nextSeq() - 1)
    // Each stretch is read from where the events are when it starts: a projection loaded
    // meanwhile moves `residentFrom` down, a release moves it up, and the stored part read
    // before either keeps its range, so no seq is read twice or skipped.
    for (let seq = Math.max(0, options.fromSeq ?? 0); seq <= throughSeq; ) {
      options.signal?.throwIfAborted()
      if (seq < residentFrom) {
        const last = Math.min(throughSeq, residentFrom - 1)
        // A history need not freeze what it reads (decision 0175).
        for await (const batch of history!.read(seq, last, options.signal)) yield freezeEach(batch)
        seq = last + 1
        continue
      }
      const start = seq - residentFrom
      const batch = resident.slice(start, start + Math.min(READ_BATCH, throughSeq - seq + 1))
      if (batch.length === 0)
        throw new RudderError('INTERNAL', `session ${header.id}: seq ${seq} is not held`)
      const isThawed = seq < thawedTo
      seq += batch.length
      yield isThawed ? freezeEach(batch) : batch
    }
  }

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
      while (delivered < nextSeq()) {
        const event = eventAt(delivered++)!
        for (const entry of listenerList) {
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
    return take(type, data, extension, false)
  }

  function take(
    type: string,
    data: unknown,
    extension: { ignorable: true } | undefined,
    isOwned: boolean,
  ): SessionEvent {
    if (isClosed)
      throw new RudderError('DISPOSED', `session ${header.id} is closed; open it again to append`)
    const coreWhat = CORE_APPEND_WHATS.get(type)
    const isCore = coreWhat !== undefined
    if (!isCore && extension?.ignorable !== true) {
      throw new RudderError(
        'UNKNOWN_EVENT_TYPE',
        `cannot append "${type}": it is not a core event type; a plugin's own events must be appended with { ignorable: true } so that readers that do not know them can skip them`,
      )
    }
    const what = coreWhat ?? `cannot append "${type}"`
    const frozenData = isOwned ? freezeOwnedJson(data, what) : toFrozenJson(data, what)
    if (type === 'compaction') checkCompaction(frozenData)
    // One object: the core event is frozen as it is made, not copied from a base.
    const event = Object.freeze(
      isCore
        ? { seq: nextSeq(), time: now(), type, data: frozenData }
        : { seq: nextSeq(), time: now(), type, data: frozenData, ignorable: true },
    ) as SessionEvent
    if (checker) {
      // One `record` (check and take in) rather than `check` then `record`: checking is most
      // of a memory session's append. A refused event was taken in, so the checker is rebuilt
      // from the events held; refusals are bugs, so that path may be slow.
      const problems = checker.record(event)
      if (problems.length > 0) {
        checker = rebuildChecker()
        throw new RudderError(
          'INVARIANT_VIOLATION',
          `cannot append "${type}": ${problems.map((p) => `${p.message} [${p.rule}]`).join('; ')}`,
        )
      }
    }
    try {
      sink?.write(event)
    } catch (error) {
      if (checker) checker = rebuildChecker()
      throw error
    }
    resident.push(event)
    projector?.apply(event)
    deliver()
    return event
  }

  // A compaction re-projects the kept events: they must be in memory, which loading the
  // projection guarantees for any cut a checker accepts (it keeps from the last compaction on).
  function checkCompaction(data: JsonValue): void {
    if (!projector) throw notLoaded('a compaction')
    const firstKept = (data as { firstKeptSeq?: unknown }).firstKeptSeq
    if (typeof firstKept === 'number' && firstKept < residentFrom)
      throw new RudderError(
        'WRONG_STATE',
        `cannot append "compaction": its firstKeptSeq ${firstKept} is before the events this session holds (from seq ${residentFrom}); keep from the last compaction on`,
      )
  }

  const live: LiveSession = {
    header,
    get nextSeq() {
      return nextSeq()
    },
    get residentFrom() {
      return residentFrom
    },
    get residentEvents() {
      freezeResident()
      return resident
    },
    eventAt: frozenEventAt,
    readEvents,
    state() {
      // The fold keeps parts of events (tool calls) that `state()` hands out.
      for (; foldedTo < nextSeq(); foldedTo++) folded = foldEvent(folded, frozenEventAt(foldedTo)!)
      return folded
    },
    append: append as Session['append'],
    get isProjectionLoaded() {
      return projector !== undefined
    },
    loadProjection(signal) {
      if (projector) return Promise.resolve()
      loading ??= load(signal).finally(() => {
        loading = undefined
      })
      return loading
    },
    messages: () => loadedProjector('messages()').messages(),
    transcriptCharacters: () => loadedProjector('transcriptCharacters()').characters(),
    requestHeader: () => loadedProjector('requestHeader()').requestHeader(),
    releaseHistory: () => options.releaseHistory?.() ?? Promise.resolve(false),
    projectionState() {
      if (projector) return projector.snapshot()
      return extendProjectionState(deferred!.state, resident, deferred!.throughSeq)
    },
    release(next, throughSeq) {
      const isQuiet =
        !isClosed && holds === 0 && !loading && !checker && !isDelivering && delivered === nextSeq()
      if (!isQuiet || nextSeq() !== throughSeq + 1) return false
      if (resident.length === 0 && !projector) return false
      const state = live.projectionState()
      live.state()
      deferred = { state, throughSeq }
      projector = undefined
      resident = emptyObjectArray<SessionEvent>()
      thawedTo = 0
      residentFrom = throughSeq + 1
      history = next
      return true
    },
    subscribe(listener) {
      const entry = { listener, fromSeq: nextSeq() }
      listeners.add(entry)
      listenerList = [...listeners]
      return () => {
        listeners.delete(entry)
        listenerList = [...listeners]
      }
    },
    subscribeListenerErrors(listener) {
      errorListeners.add(listener)
      return () => {
        errorListeners.delete(listener)
      }
    },
    flush: () => sink?.flush() ?? FLUSHED,
    async close() {
      if (isClosed) return
      isClosed = true
      await sink?.close()
    },
  }
  // Not enumerable: a copy of the session object (a spread) falls back to the copying append.
  Object.defineProperty(live, APPEND_OWNED, {
    value: ((type: EventType, data: unknown) => take(type, data, undefined, true)) as OwnedAppend,
  })
  Object.defineProperty(live, HOLD, {
    value: () => {
      holds++
      let isHeld = true
      return () => {
        if (isHeld) holds--
        isHeld = false
      }
    },
  })
  return live
}
