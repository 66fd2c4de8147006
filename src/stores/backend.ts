/**
 * What a storage format provides to the one store implementation in `session-store.ts`:
 * durable bytes, leases and metadata. Backends store events as opaque lines (see codec.ts) and
 * never interpret them; checking, repair and fork rules live above, once for every format.
 */
import type { SessionEvent, SessionHeader } from '../core/index.js'
import type { BlobStore } from './blob-store.js'
import type { Lease } from './lease.js'
import type { ListOptions, SearchHit, SessionListing } from './store.js'

/** One stored event as read back, or the torn end of a JSONL file. */
export type StoredRecord =
  | {
      readonly kind: 'line'
      readonly text: string
      /** The line number (JSONL) or seq (SQLite, memory); `Backend.locate` makes it a location. */
      readonly where: number
      /** Where the record ends, in the backend's own terms (a byte offset, a seq). */
      readonly position: number
    }
  | {
      /** A last line with no newline: cut short by a crash, or being written right now. */
      readonly kind: 'torn'
      readonly location: string
      readonly bytes: number
      /** Where the torn bytes start: the length to truncate the file to. */
      readonly position: number
    }

/**
 * What a checkpoint's checksum covers in a backend (docs/log-format.md, decision 0162): `bytes`,
 * the stored bytes of the records, each line with its `\n` (JSONL: the file from the first
 * event's line on, summed a chunk at a time as it is read); `text`, the records' texts
 * concatenated without line ends (a database row holds no line end).
 */
export type ChecksumForm = 'bytes' | 'text'

/** A batch `records` yields. */
export type RecordBatch = StoredRecord[]

/**
 * The bytes a batch's line records were read from, which a backend whose checksum form is
 * `bytes` hands over (`withStoredBytes`) so that the checksum of a batch is one CRC call, not
 * one per record: `bytes[0]` is at position `start`, where the batch's first record begins,
 * and each line record lies in it with its `\n`. Valid only until the next batch is asked for
 * (the reader reuses its buffer).
 */
export type StoredBytes = { readonly bytes: Buffer; readonly start: number }

// Beside the batch, not a property on it: a property added to arrays hangs off a weak map
// transition, and each full collection that frees every such array dropped the optimised code
// of the loader that read it, compiled again at the next load (decision 0162).
const storedBytes = new WeakMap<readonly StoredRecord[], StoredBytes>()

/** Notes the bytes `batch` was read from (see `StoredBytes`); returns `batch`. */
export function withStoredBytes(batch: RecordBatch, bytes: StoredBytes): RecordBatch {
  storedBytes.set(batch, bytes)
  return batch
}

/** The bytes `batch` was read from, if its backend handed them over. */
export function storedBytesOf(batch: readonly StoredRecord[]): StoredBytes | undefined {
  return storedBytes.get(batch)
}

/**
 * Complete records read by a byte copy (`Backend.copyInspected`), in order: record `i` is
 * `bytes[starts[i], ends[i])` (UTF-8, without its newline) and ends at `positions[i]` in the
 * backend's terms (`StoredRecord.position`). Valid only during the call it is passed to.
 */
export type CopiedLines = {
  readonly bytes: Buffer
  readonly starts: readonly number[]
  readonly ends: readonly number[]
  readonly positions: readonly number[]
  /** Every byte of the records is ASCII. */
  readonly isAscii: boolean
  /** A buffer the inspector may overwrite during the call, when the backend has one spare. */
  readonly scratch?: Buffer | undefined
}

/** What a fork's copy may be given beside the cut (`copyPrefix`, `copyInspected`). */
export type ForkCopyOptions = {
  /** The source's header as `readHeader` just gave it, if the caller has it (not read again). */
  readonly sourceHeader?: string
  /**
   * Called once the records are copied (and inspected): the child's projection checkpoint, or
   * undefined for none, stored as `writeCheckpoint` would, with the copy (decision 0019).
   * `childPosition` turns a position in the source into the same record's in the child. A
   * failure to store it is no error: the result's `isCheckpointed` says whether it was.
   */
  readonly checkpoint?: (childPosition: (position: number) => number) => string | undefined
}

/**
 * Complete records read by a copy as text (a database backend's `copyInspected`), in order:
 * record `texts[i]` ends at `positions[i]`. Valid only during the call it is passed to.
 */
export type CopiedTexts = {
  readonly texts: readonly string[]
  readonly positions: readonly number[]
}

/** The header as stored, still to be parsed and checked. */
export type StoredHeader = { readonly text: string; readonly location: string }

/** Metadata a writer keeps for `list`. */
export type WriterStart = {
  readonly header: SessionHeader
  /** Events already in the log. */
  readonly eventCount: number
  /** Time of the last event, or the creation time. */
  readonly updatedAt: number
  /** Cut the log to this position first (a torn JSONL tail). */
  readonly truncateAt?: number
  /** Where each of the existing events from `positionsFrom` on ends, if known (from loading the log). */
  readonly positions?: readonly number[]
  /** The seq of `positions[0]` (default 0). */
  readonly positionsFrom?: number
  /**
   * The metadata for `list` holds exactly this start already (the session was just created
   * with it, a fork's child say): a writer need not write it again at open.
   */
  readonly isListed?: boolean
}

/** Appends batches of events to one session's log. */
export interface BatchWriter {
  /**
   * Appends and makes durable, in order. `lines[i]` is the stored form of `events[i]`. With
   * `checksum` (a running checksum in the backend's `checksumForm`), a writer may return it
   * continued over the batch: JSONL over the bytes it encoded to write them, so they are not
   * encoded again; PostgreSQL while the server commits. Otherwise the caller sums `lines`.
   */
  write(
    events: readonly SessionEvent[],
    lines: readonly string[],
    checksum?: number,
  ): Promise<number | undefined>
  /** Where the durable record of `seq` ends, if known (what `copyPrefix` takes). */
  positionOf(seq: number): number | undefined
  /** Finishes metadata and releases resources (not the lease). */
  close(): Promise<void>
}

export interface Backend {
  /** The normalized store URL. */
  readonly url: string
  /** Where large payloads go, or undefined to keep them inline (memory). */
  readonly blobs: BlobStore | undefined
  /** What a checkpoint's checksum covers here (default `text`). */
  readonly checksumForm?: ChecksumForm
  /** Human-readable place of a session's log, for messages. */
  describe(id: string): string
  /** Where a record is (file and line, or database and seq), from its `where`. */
  locate(id: string, where: number): string
  exists(id: string): Promise<boolean>
  /** Every session id, for scans. */
  ids(): Promise<string[]>
  /** Creates an empty session durably and takes its lease. Throws `INVALID_INPUT` if the id exists. */
  create(header: SessionHeader): Promise<Lease>
  /** Takes the writer lease. Throws `SESSION_NOT_FOUND` or `SessionBusyError`. */
  acquire(id: string): Promise<Lease>
  /** The stored header. Throws `SESSION_NOT_FOUND`. */
  readHeader(id: string): Promise<StoredHeader>
  /**
   * The stored events in order, in batches, without a lease: from `fromSeq` (default 0) through
   * `throughSeq` (default the end). Yields to the event loop between batches. SQLite and memory
   * seek to `fromSeq`; JSONL reads past the lines before it.
   */
  records(
    id: string,
    options?: {
      readonly fromSeq?: number
      readonly throughSeq?: number
      /**
       * Where the record of `fromSeq` starts, if the caller knows (a checkpoint's `start`): a
       * file backend reads from there. A wrong one yields records that are not `fromSeq`'s.
       */
      readonly fromPosition?: number
    },
  ): AsyncIterable<RecordBatch>
  /** Opens the log for appending; the caller holds the lease. */
  openWriter(id: string, start: WriterStart): Promise<BatchWriter>
  /**
   * Creates session `header.id` holding a byte-exact copy of the source's events
   * `[0..throughSeq]` (`position` is where event `throughSeq` ends), and takes its lease.
   * `isCheckpointed`: `options.checkpoint` was stored (as in `copyInspected`); a backend may
   * ignore it.
   */
  copyPrefix(
    sourceId: string,
    header: SessionHeader,
    throughSeq: number,
    position: number | undefined,
    options?: ForkCopyOptions,
  ): Promise<{ readonly lease: Lease; readonly isCheckpointed: boolean }>
  /**
   * `copyPrefix` for a cut whose position is not known (B11, decision 0069): creates session
   * `header.id` holding a byte-exact copy of the source's events `[0..throughSeq]` (through
   * the last complete record when `throughSeq` is undefined) and takes its lease, handing the
   * records copied to `inspect` in order, a batch at a time, before the child's header is
   * durable (JSONL reads them back from the child while its body syncs, decision 0192). When `inspect` returns false or the log ends before
   * `throughSeq`, nothing is left behind and this returns undefined. Throws what
   * `copyPrefix` throws. Optional: without it the store scans `records` and then copies.
   */
  copyInspected?(
    sourceId: string,
    header: SessionHeader,
    options: ForkCopyOptions & {
      readonly throughSeq: number | undefined
      readonly inspect: (records: CopiedLines | CopiedTexts) => boolean
    },
  ): Promise<
    | { readonly lease: Lease; readonly eventCount: number; readonly isCheckpointed: boolean }
    | undefined
  >
  list(options: Required<Pick<ListOptions, 'limit'>> & ListOptions): Promise<SessionListing[]>
  /** Removes a session's log, metadata and index entries; the caller holds its lease. */
  remove(id: string): Promise<void>
  /**
   * Calls `onChange` (soon) after events of session `id` are written by any process, until the
   * returned function is called. Without it, followers poll (decision 0063).
   */
  watch?(id: string, onChange: () => void): Promise<() => Promise<void>>
  /**
   * The session's projection checkpoint as stored (checkpoint.ts), or undefined if it has
   * none. Untrusted: the caller checks it against the log. Throws `StoreError` only for I/O.
   */
  readCheckpoint?(id: string): Promise<string | undefined>
  /**
   * Replaces the session's checkpoint, atomically (a reader sees the old one or the new one);
   * the caller holds the lease. Need not be durable: a lost checkpoint is rebuilt.
   */
  writeCheckpoint?(id: string, text: string): Promise<void>
  /** Indexed full-text search, if the backend has one (else the store scans). */
  search?(words: readonly string[], limit: number): Promise<SearchHit[]>
  close(): Promise<void>
}
