/**
 * The store interface of docs/spec.md §9.1 and the types it hands out. One implementation
 * (`session-store.ts`) runs over four backends: memory, JSONL, SQLite and PostgreSQL.
 */

import type { Session, SessionEvent, SessionHeader } from '../core/index.js'
import type { CheckpointPolicy } from './checkpoint.js'

/** What happened to a log when it was opened. */
export type Repair =
  /** A JSONL line cut short by a crash was removed (it was never made durable). */
  | { readonly kind: 'torn-tail'; readonly location: string; readonly bytes: number }
  /**
   * The log ended inside a turn (a crash): missing tool results, `step/end` and
   * `turn/end {interrupted}` were appended as seqs `fromSeq..toSeq`.
   */
  | {
      readonly kind: 'turn-closed'
      readonly turn: number
      readonly fromSeq: number
      readonly toSeq: number
      readonly results: readonly {
        readonly callId: string
        readonly code: 'interrupted' | 'outcome-unknown'
      }[]
    }

/** A live session from a store: the `Session` API plus what opening it repaired. */
export interface StoredSession extends Session {
  /** Repairs made when the session was opened (empty when the log was clean). */
  readonly repairs: readonly Repair[]
}

/** A session read without the writer lease: a validated copy of its durable events. */
export type SessionSnapshot = {
  readonly header: SessionHeader
  readonly events: readonly SessionEvent[]
  /** A partial last line that was left out (a crash, or a writer mid-write right now). */
  readonly tornTail?: { readonly location: string; readonly bytes: number }
  /** The turn the log ends inside, if any (a running writer, or a crash not yet repaired). */
  readonly openTurn?: number
}

/** Where a session read without the lease ends, without its events (`stat`). */
export type SessionStat = {
  readonly header: SessionHeader
  /** The seq after its last durable event (a partial last line left out). */
  readonly nextSeq: number
  /** The turn the log ends inside, if any. */
  readonly openTurn?: number
}

/** One row of `list`: the header plus metadata kept beside it. */
export type SessionListing = SessionHeader & {
  /** Events in the log as of the last metadata update (≤ 1 s behind a JSONL writer). */
  readonly eventCount: number
  /** Time of the last event written (epoch ms), or the creation time. Lists sort on it. */
  readonly updatedAt: number
  /** Pass the last row's cursor as `list({ cursor })` to get the next page. */
  readonly cursor: string
}

export type ListOptions = {
  /** Only sessions created with exactly this `cwd`. */
  readonly cwd?: string
  /** At most this many rows (default 50). */
  readonly limit?: number
  /** The `cursor` of the last row of the previous page. */
  readonly cursor?: string
}

/** A message whose text contains every word searched for. */
export type SearchHit = {
  readonly sessionId: string
  readonly seq: number
  /** An excerpt of the message text around the match. */
  readonly snippet: string
}

/** The outcome of `repair`: the new session holding the salvaged prefix. */
export type SalvageResult = {
  readonly session: StoredSession
  readonly sourceId: string
  /** Events copied from the source (its valid prefix). */
  readonly keptEvents: number
  /** What stopped the copy, or undefined when the whole log was valid. */
  readonly problem?: { readonly location: string; readonly message: string }
}

/** Text or bytes of a JSONL export, in any chunking (a file stream, an array of lines…). */
export type JsonlSource = AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>

/** Counters a caller may pass to watch the I/O a store does (benchmarks, tests). */
export type StoreCounters = {
  /** fsync / fdatasync calls, and SQLite commits (each is a sync with `synchronous=FULL`). */
  syncs: number
  /** Bytes handed to the operating system for log lines, rows and blobs. */
  bytesWritten: number
  /** Batches written (one per durability point with something to write). */
  batches: number
}

export type StoreOptions = {
  /** Environment for `RUDDER_HOME` and `HOME` (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Longest time an appended event waits before a background flush (default 200 ms). */
  readonly flushWindowMs?: number
  /** The clock for event times and `createdAt` (epoch ms). */
  readonly now?: () => number
  /**
   * Check every append against the invariants of docs/spec.md §3.3 and the event schemas, so a store
   * never writes a log it would refuse to open (default true).
   */
  readonly checkInvariants?: boolean
  readonly counters?: StoreCounters
  /** How often a follower of a JSONL or SQLite session looks for new events (default 250 ms). */
  readonly followPollMs?: number
  /** PostgreSQL: a writer lease whose heartbeat is older than this is taken over (default 15 s). */
  readonly leaseTtlMs?: number
  /** PostgreSQL: the name this process goes by in leases (default the host name). */
  readonly hostName?: string
  /** When sessions write their projection checkpoint (tests and benchmarks; decision 0148). */
  readonly checkpointPolicy?: Partial<CheckpointPolicy>
}

export type FollowOptions = {
  /** The first seq to yield (default 0). */
  readonly fromSeq?: number
  /** Ends the follow: the iteration then returns quietly. */
  readonly signal?: AbortSignal
}

export type CreateOptions = { readonly cwd?: string; readonly title?: string }

/** A place sessions live (docs/spec.md §9). Every method of a closed store rejects with `DISPOSED`. */
export interface SessionStore {
  /** The URL the store was opened with, normalized (`sqlite:/abs/path`, `jsonl:/abs/dir`, `memory:`). */
  readonly url: string
  /** Creates a session, durably, and holds its writer lease. */
  create(options?: CreateOptions): Promise<StoredSession>
  /**
   * Takes the writer lease, loads and validates the log, cuts a torn JSONL tail and closes a
   * turn left open by a crash (docs/spec.md §9.3), appending the repair so it is visible and durable.
   * Throws `SESSION_NOT_FOUND`, `SessionBusyError` (another live process or session holds the
   * lease), `LogCorruptError` (damage before the tail: file, line or seq, and the hint
   * `rudder sessions repair <id>`), `FORMAT_TOO_NEW`, or `UNKNOWN_EVENT_TYPE`.
   */
  open(id: string): Promise<StoredSession>
  /**
   * Reads a session without the lease (never blocks, never writes): its durable events as of
   * now, validated. A partial last line is left out and reported; an open turn is left open.
   */
  read(id: string): Promise<SessionSnapshot>
  /**
   * A session's header and where its log ends, read without the lease and without holding its
   * events: from the checkpoint beside the log when it fits (its record in place, as `open`
   * takes it), the events after it checked as `read` checks them (decision 0165). Throws as
   * `read` does.
   */
  stat(id: string): Promise<SessionStat>
  /**
   * Copies events `[0..atSeq]` into a new session whose header names the source as `parent`,
   * and opens it. The default `atSeq` is the last event not inside an open turn (−1, copying
   * nothing, if there is none). An explicit `atSeq` inside an open turn throws `OPEN_TURN`;
   * outside `0..last seq` throws `INVALID_INPUT`. The events are copied as stored bytes or
   * rows; a closed source's kept lines are read to build the child without the per-event
   * schema walk (types and invariants still checked: `LogCorruptError`; decision 0067).
   */
  fork(id: string, options?: { readonly atSeq?: number }): Promise<StoredSession>
  /** Lists sessions from metadata only (no log is read), newest write first. */
  list(options?: ListOptions): Promise<SessionListing[]>
  /**
   * Finds messages (user, steering and assistant text, first 64 KiB of each) containing every
   * whitespace-separated word of `text`, case-insensitively. SQLite uses FTS5 (whole words,
   * ranked); JSONL and memory scan every log (substring match, slower, newest session first).
   */
  search(text: string, options?: { readonly limit?: number }): Promise<SearchHit[]>
  /**
   * The session as JSONL text: the header line, then one line per event, each ending in
   * `\n`, with large payloads inlined (an export is self-contained). Reads without the lease.
   */
  exportJsonl(id: string): AsyncIterable<string>
  /**
   * Writes an exported session into this store under its own id and header, validated like
   * an opened log (an open turn is kept as is; opening repairs it). Throws `INVALID_INPUT` if
   * the id exists here. Export → import → export gives identical text.
   */
  importJsonl(source: JsonlSource): Promise<SessionHeader>
  /**
   * Salvages a damaged session: copies the longest valid prefix of its log into a NEW session
   * (parent: the source) and opens it, which closes a turn the cut left open. The source is
   * only read, never changed. Use it on a log `open` refuses with `LogCorruptError`.
   */
  repair(id: string): Promise<SalvageResult>
  /**
   * Deletes a session: its log, metadata and search entries (not its blobs, which other
   * sessions may share: see `collectBlobs`). Takes the writer lease first, so a session being
   * written (here or by another process) throws `SessionBusyError` and is left as it was.
   * Throws `SESSION_NOT_FOUND`.
   */
  delete(id: string): Promise<void>
  /**
   * Removes the large-payload files no session refers to any more (after deletes); blobs
   * written or reused in the last `graceMs` (default an hour) are kept. Returns how many went.
   */
  collectBlobs(options?: { readonly graceMs?: number }): Promise<number>
  /**
   * Follows a session without the lease: yields every event with seq ≥ `fromSeq`
   * as any process (or host) makes it durable, in order, with no gap and no duplicate, until
   * `signal` aborts or the store closes (then it returns). Events are validated as `read` does.
   * PostgreSQL is told of commits (LISTEN/NOTIFY); memory sees its own appends; JSONL and
   * SQLite poll every `followPollMs`. Throws `SESSION_NOT_FOUND` or `LogCorruptError`.
   */
  follow(id: string, options?: FollowOptions): AsyncIterable<SessionEvent>
  /**
   * Closes every session still open from this store (flushing it), then the store. Call it
   * before the process exits: the flush window's timer does not keep the process alive.
   */
  close(): Promise<void>
}
