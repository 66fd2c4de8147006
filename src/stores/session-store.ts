/**
 * The one `SessionStore` implementation, over any backend: create, open with crash repair,
 * read without a lease, fork, list, search, export/import and salvage. The rules of docs/spec.md §9
 * live here once; backends only move bytes.
 */
import { randomUUID } from 'node:crypto'
import {
  applyCrashRepair,
  boundariesBefore,
  crashRepairOfState,
  createLogChecker,
  deepFreeze,
  FORMAT_VERSION,
  forkCut,
  type LiveSession,
  type LogChecker,
  type LogCheckerState,
  LogCorruptError,
  openLiveSession,
  RudderError,
  SessionBusyError,
  type SessionEvent,
  type SessionHeader,
  type SessionHistory,
} from '../core/index.js'
import type { Backend, BatchWriter, ForkCopyOptions } from './backend.js'
import {
  type Checkpoint,
  checksumOfLines,
  DEFAULT_CHECKPOINT_POLICY,
  encodeCheckpoint,
  parseCheckpoint,
} from './checkpoint.js'
import {
  type CheckpointRange,
  closeRangeIfDue,
  emptyRangeSums,
  type RangeSums,
  rangesThrough,
  reopenRanges,
  shiftRanges,
} from './checkpoint-ranges.js'
import { encodeEvents, envelopeLine } from './codec.js'
import { checkForWrite, invariantViolation, parseHeader, repairHint } from './event-check.js'
import { followLog, logEnd } from './follow.js'
import { readJsonl } from './jsonl-import.js'
import { createKeptScanner, type KeptScanResult, scanKept, sumKept } from './kept-scan.js'
import type { Lease } from './lease.js'
import { DEFAULT_LIST_LIMIT } from './listing.js'
import {
  type Covered,
  type LoadedTail,
  loadEvents,
  loadHeader,
  loadTail,
  readCovered,
} from './log-loader.js'
import { scanSearch } from './scan-search.js'
import { queryWords } from './search-text.js'
import { checkSessionId } from './session-id.js'
import type {
  CreateOptions,
  JsonlSource,
  Repair,
  SalvageResult,
  SessionStore,
  StoredSession,
  StoreOptions,
} from './store.js'
import { createWriteBehindSink } from './write-behind.js'

/**
 * A session loaded in full with more events than this projects them when asked
 * (`loadProjection`), as one opened from its checkpoint does; a shorter one is ready at open.
 */
const PROJECT_ON_DEMAND = 16_384

/** `checkpoint` as an optional property (exactOptionalPropertyTypes). */
function optionalCheckpoint(
  checkpoint: ForkCopyOptions['checkpoint'],
): Pick<ForkCopyOptions, 'checkpoint'> {
  return checkpoint === undefined ? {} : { checkpoint }
}

/** A fork's source: its header, and the header's stored text (`Backend.readHeader`). */
type SourceHeader = SessionHeader & { readonly text: string }

/** A batch written durably: its lines, and the checksum through it if the writer summed it. */
type Written = { readonly lines: readonly string[]; readonly checksum: number | undefined }
const NOTHING_WRITTEN: Written = { lines: [], checksum: undefined }

/** A session open for writing from this store. */
type LiveEntry = {
  readonly session: StoredSession & LiveSession
  readonly writer: BatchWriter
  /** The state at the session's last event, if every event is durable and checked. */
  basis(): Covered | undefined
  /** The invariant checker's boundaries through the last event (`LogCheckerState`). */
  boundaries(): Uint8Array | undefined
}

/** Builds a store over `backend`. The store owns the backend and closes it. */
export function createSessionStore(backend: Backend, options: StoreOptions = {}): SessionStore {
  const now = options.now ?? Date.now
  const windowMs = options.flushWindowMs ?? 200
  const checkInvariants = options.checkInvariants ?? true
  const counters = options.counters
  /** Sessions open for writing from this store, by id, with their writers (for fork). */
  const live = new Map<string, LiveEntry>()
  let closing: Promise<void> | undefined
  /** Aborted when the store closes: followers end. */
  const closed = new AbortController()
  const followPollMs = options.followPollMs ?? 250
  const policy = { ...DEFAULT_CHECKPOINT_POLICY, ...options.checkpointPolicy }
  /** How this backend's checkpoints sum its records (decision 0162). */
  const checksumForm = backend.checksumForm ?? 'text'

  function ensureOpen(): void {
    if (closing)
      throw new RudderError(
        'DISPOSED',
        `the store ${backend.url} is closed; open it again with openStore()`,
      )
  }

  /**
   * Writes a batch durably. Returns its lines and, when the writer summed the bytes it wrote
   * (given `checksum`, the running checksum before the batch, in the `bytes` form), the
   * checksum after them.
   */
  async function writeDurably(
    writer: BatchWriter,
    events: readonly SessionEvent[],
    checksum?: number,
  ): Promise<Written> {
    if (events.length === 0) return NOTHING_WRITTEN
    const lines = await encodeEvents(events, backend.blobs)
    const summed = await writer.write(events, lines, checksum)
    if (counters) counters.batches++
    return { lines, checksum: summed }
  }

  /**
   * The session's checkpoint as stored, parsed, or undefined. A checkpoint that cannot be read
   * is no error: the log is the truth, and is then checked in full.
   */
  async function readCheckpoint(id: string): Promise<Checkpoint | undefined> {
    if (!backend.readCheckpoint) return undefined
    try {
      return parseCheckpoint(await backend.readCheckpoint(id))
    } catch {
      // An I/O failure on the checkpoint alone: open as without one.
      return undefined
    }
  }

  /**
   * Turns a loaded log whose lease we hold into a live session, then closes a turn a crash
   * left open. On failure the lease is released and nothing stays open.
   */
  async function startSession(input: {
    header: SessionHeader
    /** The events held in memory: the whole log, or the tail after `resumed`'s checkpoint. */
    events: SessionEvent[]
    lease: Lease
    truncateAt?: number
    /** Where each of `events` ends in the backend, when the loader knows. */
    positions?: readonly number[]
    repairs?: Repair[]
    /** An invariant checker already advanced over the log (else one is built over `events`). */
    checker?: LogChecker
    /** Events not yet in the log, written first (salvage copies its prefix this way). */
    unwritten?: boolean
    /**
     * The range sums of the stored lines of the log and their characters, when known: without
     * them the session writes no checkpoint (a fork copied bytes it did not read).
     */
    stored?: { readonly sums: RangeSums; readonly characters: number }
    /**
     * Where the record of `seq` ends in the terms of the positions in `stored` and `resumed`,
     * when they are another log's (a fork's source): the child's are these moved by as much
     * as the writer says that record's end moved (a JSONL child's header has another length).
     */
    sourcePosition?: { readonly seq: number; readonly position: number }
    /**
     * The session was opened from this checkpoint, or a fork from its source's state at the
     * cut (decision 0161): `events` follow its seq, and the covered events stay in the log
     * until the session reads them.
     */
    resumed?: Covered
    /** What the checkpoint stored beside the log covers, if there is one. */
    checkpointed?: { readonly throughSeq: number; readonly characters: number }
    /** The backend just created the session with the metadata the writer would write. */
    isListed?: boolean
  }): Promise<StoredSession> {
    const { header, events, lease } = input
    let resumed = input.resumed
    const fromSeq = resumed ? resumed.throughSeq + 1 : 0
    /** What the next checkpoint needs to know of the durable log, while it is known. */
    const durable = input.unwritten
      ? { sums: emptyRangeSums(policy.rangeCharacters), characters: 0, throughSeq: -1 }
      : input.stored && { ...input.stored, throughSeq: fromSeq + events.length - 1 }
    /** What the last checkpoint written (or found valid) covers. */
    let checkpointed = input.checkpointed ?? { throughSeq: -1, characters: 0 }
    /** Off once the log was found changed behind the checkpoint: the next open checks it all. */
    let isCheckpointing = true
    /** The session is closing: no checkpoint may start behind the writer's close. */
    let isClosing = false
    let checkpointWrite: Promise<void> = Promise.resolve()
    let self: (StoredSession & LiveSession) | undefined
    let writer: BatchWriter | undefined
    try {
      const last = events.at(-1)
      writer = await backend.openWriter(header.id, {
        header,
        eventCount: input.unwritten ? 0 : fromSeq + events.length,
        updatedAt: last?.time ?? header.createdAt,
        ...(input.truncateAt === undefined ? {} : { truncateAt: input.truncateAt }),
        ...(input.positions === undefined
          ? {}
          : { positions: input.positions, positionsFrom: resumed ? resumed.throughSeq : 0 }),
        ...(input.isListed ? { isListed: true } : {}),
      })
      if (input.unwritten) noteDurable(events, await writeDurably(writer, events, sumOnWrite()))
      const source = input.sourcePosition
      const shift = source
        ? (writer.positionOf(source.seq) ?? source.position) - source.position
        : 0
      if (shift !== 0) {
        if (durable)
          durable.sums = { ...durable.sums, ranges: [...shiftRanges(durable.sums.ranges, shift)] }
        if (resumed?.ranges) resumed = { ...resumed, ranges: shiftRanges(resumed.ranges, shift) }
      }
    } catch (error) {
      await writer?.close().catch(() => {
        // The original failure is the one to report.
      })
      await lease.release()
      throw error
    }
    const opened = writer
    // The store checks appends itself, with the checker that validated the loaded log, so a
    // log is walked by one checker, not two (the live session's own checking stays off).
    let checker = checkInvariants ? (input.checker ?? checkerOver(events)) : undefined
    /** The checker's state before the first resident event, and that event's seq. */
    let base = { checker: resumed?.checker, fromSeq }
    /** Rebuilds the checker over the log as it stands (after a refused append). */
    const rebuildChecker = (): LogChecker => {
      const rebuilt = createLogChecker({ allowOpenTurn: true }, base.checker)
      for (let seq = base.fromSeq; seq < (self?.nextSeq ?? base.fromSeq); seq++) {
        const event = self?.eventAt(seq)
        if (event) rebuilt.record(event)
      }
      return rebuilt
    }

    /** The running checksum a writer may continue over what it writes (the backend's form). */
    function sumOnWrite(): number | undefined {
      return durable?.sums.crc
    }

    /** Takes note of a batch made durable; then writes a checkpoint if one is due. */
    function noteDurable(batch: readonly SessionEvent[], written: Written): void {
      if (!durable || batch.length === 0) return
      const { lines } = written
      const { sums } = durable
      sums.crc = written.checksum ?? checksumOfLines(checksumForm, lines, sums.crc)
      for (const line of lines) durable.characters += line.length
      durable.throughSeq = batch.at(-1)!.seq
      // A range ends where a batch does, once it holds enough (checkpoint-ranges.ts).
      const seq = durable.throughSeq
      closeRangeIfDue(sums, seq, writer?.positionOf(seq), durable.characters)
      if (self && isCheckpointDue()) writeCheckpoint()
    }

    function isCheckpointDue(): boolean {
      return (
        durable !== undefined &&
        (durable.characters - checkpointed.characters >= policy.everyCharacters ||
          durable.throughSeq - checkpointed.throughSeq >= policy.everyEvents)
      )
    }

    /**
     * Starts writing a checkpoint of the durable log, if the checker and projection stand
     * exactly at its end (no append is waiting for the next batch). Off the append path: the
     * write runs behind, and a failed one costs only a full check at the next open.
     */
    function writeCheckpoint(): void {
      if (!durable || !checker || !self || !backend.writeCheckpoint || !isCheckpointing) return
      const throughSeq = durable.throughSeq
      if (throughSeq <= checkpointed.throughSeq || self.nextSeq !== throughSeq + 1) return
      const position = opened.positionOf(throughSeq)
      const projection = self.projectionState()
      if (position === undefined || !projection) return
      const start = throughSeq > 0 ? opened.positionOf(throughSeq - 1) : undefined
      const text = encodeCheckpoint({
        throughSeq,
        position,
        ...(start === undefined ? {} : { start }),
        ranges: rangesThrough(durable.sums, throughSeq, position, durable.characters),
        characters: durable.characters,
        checker: checker.snapshot(),
        projection,
      })
      checkpointed = { throughSeq, characters: durable.characters }
      const write = backend.writeCheckpoint.bind(backend, header.id, text)
      checkpointWrite = checkpointWrite.then(write).catch(() => {
        // A checkpoint is a cache: without it the next open checks the log in full.
      })
    }

    /** The log was found changed behind `resumed`: no checkpoint is trusted or written again. */
    function discardCheckpoint(reason: string, location: string): Error {
      isCheckpointing = false
      const discard = backend.writeCheckpoint?.bind(backend, header.id, '')
      if (discard)
        checkpointWrite = checkpointWrite.then(discard).catch(() => {
          // A checkpoint that cannot be replaced still fails its check at the next open.
        })
      return new LogCorruptError(
        location,
        `the log of session ${header.id} changed after it was opened (${reason}); its checkpoint is discarded, so close the session and open it again to check the whole log (if that fails too, ${repairHint(header.id)})`,
      )
    }

    const sink = createWriteBehindSink({
      writeBatch: async (batch) =>
        noteDurable(batch, await writeDurably(opened, batch, sumOnWrite())),
      ...(checkInvariants
        ? {
            check: (event: SessionEvent) => {
              checkForWrite(event)
              // One `record` per append (not `check` then `record`): it is the costly part of
              // an append. A refused event has been taken in, so the checker is rebuilt from
              // the log as it stands; refusals are bugs, so that path may be slow.
              const problems = checker!.record(event)
              if (problems.length > 0) {
                checker = rebuildChecker()
                throw invariantViolation(event, problems)
              }
            },
          }
        : {}),
      windowMs,
      describe: () => `session ${header.id} (${backend.describe(header.id)})`,
      async release() {
        isClosing = true
        try {
          if (durable && durable.characters >= policy.minCharacters) writeCheckpoint()
          await checkpointWrite
          await opened.close()
        } finally {
          await lease.release()
          if (self && live.get(header.id)?.session === self) live.delete(header.id)
        }
      },
    })
    /** A history reading the log the store wrote, checked against what `covered` says of it. */
    const historyOver = (covered: Covered): SessionHistory => ({
      read: (first, last, signal) =>
        readCovered(
          backend,
          header.id,
          { fromSeq: first, throughSeq: last, ...(signal ? { signal } : {}) },
          covered,
          discardCheckpoint,
        ),
      mismatch: (reason) => discardCheckpoint(reason, backend.describe(header.id)),
    })

    /**
     * `Session.releaseHistory` (decision 0166): once every event is durable and a checkpoint of
     * them is stored, the session lets go of what it holds and reads it back through a history
     * that checks the log against that checkpoint. Gives up (false) when an append, a load or a
     * hold comes in meanwhile; the checkpoint written stands either way.
     */
    async function releaseHistory(): Promise<boolean> {
      // The memory backend keeps every record in memory already.
      if (!self || !checker || !durable || backend.url === 'memory:') return false
      // Counted, not read: `residentEvents` would freeze every event it holds (decision 0182).
      if (self.nextSeq === self.residentFrom && !self.isProjectionLoaded) return false
      const throughSeq = self.nextSeq - 1
      await self.flush()
      if (
        isClosing ||
        !isCheckpointing ||
        durable.throughSeq !== throughSeq ||
        self.nextSeq !== throughSeq + 1
      )
        return false
      const snapshot = checker.snapshot()
      const position = opened.positionOf(throughSeq)
      if (position === undefined) return false
      const covered: Covered = {
        throughSeq,
        ranges: rangesThrough(durable.sums, throughSeq, position, durable.characters),
        characters: durable.characters,
        checker: snapshot,
        projection: self.projectionState(),
      }
      writeCheckpoint()
      await checkpointWrite
      if (checkpointed.throughSeq !== throughSeq || !isCheckpointing) return false
      if (!self.release(historyOver(covered), throughSeq)) return false
      base = { checker: snapshot, fromSeq: throughSeq + 1 }
      return true
    }

    const known = checker?.snapshot()
    const session = openLiveSession({
      header,
      events,
      sink,
      now,
      releaseHistory,
      // The checker folded every event already: crash repair at open reads its fold.
      ...(known ? { folded: { fold: known.fold, nextSeq: known.nextSeq } } : {}),
      ...(resumed
        ? {
            fromSeq,
            state: resumed.checker.fold,
            projection: { state: resumed.projection, throughSeq: resumed.throughSeq },
            history: historyOver(resumed),
          }
        : events.length > PROJECT_ON_DEMAND
          ? // Loaded in full but long: projected by `loadProjection`, in stretches that leave
            // the event loop free, instead of here in one.
            { projection: { state: { from: 0 }, throughSeq: -1 } }
          : {}),
    }) as StoredSession & LiveSession
    self = session
    const repairs: Repair[] = input.repairs ?? []
    Object.assign(session, { repairs })
    live.set(header.id, {
      session,
      writer: opened,
      basis() {
        const throughSeq = session.nextSeq - 1
        const projection = session.projectionState()
        if (!checker || !projection || throughSeq < 0) return undefined
        const position = opened.positionOf(throughSeq)
        return {
          throughSeq,
          ...(durable && durable.throughSeq === throughSeq && position !== undefined
            ? {
                ranges: rangesThrough(durable.sums, throughSeq, position, durable.characters),
                characters: durable.characters,
              }
            : { characters: 0 }),
          checker: checker.snapshot(),
          projection,
        }
      },
      boundaries: () => checker?.snapshot().boundaries,
    })
    try {
      const plan = crashRepairOfState(session.state())
      if (plan) {
        const firstSeq = session.nextSeq
        applyCrashRepair(session, plan)
        repairs.push({
          kind: 'turn-closed',
          turn: plan.turn,
          fromSeq: firstSeq,
          toSeq: session.nextSeq - 1,
          results: plan.results,
        })
      }
      await session.flush()
      // A log opened without a valid checkpoint gets one now if checking it was long.
      if (isCheckpointDue()) writeCheckpoint()
    } catch (error) {
      await session.close().catch(() => {
        // The original failure is the one to report.
      })
      throw error
    }
    return session
  }

  function childHeader(source: SessionHeader, cut: number): SessionHeader {
    return {
      id: randomUUID(),
      formatVersion: FORMAT_VERSION,
      createdAt: now(),
      ...(source.cwd === undefined ? {} : { cwd: source.cwd }),
      ...(source.title === undefined ? {} : { title: source.title }),
      parent: { sessionId: source.id, seq: cut },
    }
  }

  /**
   * Forks a session this store has open (docs/spec.md §9.4). At its end, the child starts from
   * the source's state there (checker, fold, projection) and only the bytes are copied (B11);
   * the child reads its history on demand like a resumed session. Elsewhere, the kept events
   * are checked again: from memory when the source holds them, else read from the log.
   * Events appended after the flush below are not durable yet and take no part in the cut.
   */
  async function forkLive(
    open: LiveEntry,
    source: SourceHeader,
    atSeq: number | undefined,
  ): Promise<StoredSession> {
    const { session } = open
    const end = session.nextSeq - 1
    const fold = session.state()
    await session.flush()
    const basis = end < 0 ? undefined : open.basis()
    if (atSeq !== undefined && atSeq > end)
      throw new RudderError(
        'INVALID_INPUT',
        `cannot fork session ${source.id} at seq ${atSeq}: its last durable seq is ${end}`,
      )
    const cut = atSeq ?? (fold.openTurn ? fold.openTurn.seq - 1 : end)
    const position = cut < 0 ? undefined : open.writer.positionOf(cut)
    if (basis && cut === basis.throughSeq && !fold.openTurn && position !== undefined) {
      const header = childHeader(source, cut)
      // Where the backend can, the bytes are read once as they are copied and checked against
      // what the source wrote (its ranges and where the cut ends): a log changed behind the
      // open source is refused, not copied (decision 0069).
      const start = cut > 0 ? open.writer.positionOf(cut - 1) : undefined
      const copied = backend.copyInspected
        ? await copyChecked(source, header, cut, { position, start, basis })
        : await backend.copyPrefix(source.id, header, cut, position, {
            sourceHeader: source.text,
            ...optionalCheckpoint(forkCheckpoint(basis, position, start)),
          })
      return startSession({
        header,
        events: [],
        lease: copied.lease,
        checker: createLogChecker({ allowOpenTurn: true }, basis.checker),
        resumed: basis,
        ...(basis.ranges === undefined
          ? {}
          : {
              stored: {
                sums: reopenRanges(basis.ranges, policy.rangeCharacters),
                characters: basis.characters,
              },
            }),
        sourcePosition: { seq: cut, position },
        isListed: true,
        ...(copied.isCheckpointed
          ? { checkpointed: { throughSeq: cut, characters: basis.characters } }
          : {}),
      })
    }
    if (session.residentFrom > 0 || (cut >= 0 && position === undefined))
      return forkStored(source, atSeq ?? cut, open.boundaries(), undefined, basis?.ranges)
    const events = session.residentEvents.slice(0, end + 1)
    forkCut(source.id, events, cut)
    const header = childHeader(source, cut)
    const kept = events.slice(0, cut + 1)
    // The child's checker is built while the copy's reads, writes and syncs run in the thread
    // pool, so the fork costs about the copy, not the copy plus a walk of the kept events.
    const [copied, checked] = await Promise.allSettled([
      backend
        .copyPrefix(source.id, header, cut, position, { sourceHeader: source.text })
        .then((copied) => copied.lease),
      checkInvariants ? checkerOverInSlices(kept) : Promise.resolve(undefined),
    ])
    if (copied.status === 'rejected') throw copied.reason
    if (checked.status === 'rejected') {
      await copied.value.release()
      throw checked.reason
    }
    const checker = checked.value
    return startSession({
      header,
      events: kept,
      lease: copied.value,
      ...(checker ? { checker } : {}),
    })
  }

  /**
   * Forks a source whose kept events are not in memory (closed here, or opened from its
   * checkpoint). When the invariant checker's boundaries through the cut are known (`known`:
   * the open source's checker; else its checkpoint's), the kept records are only scanned for
   * what the child needs (`scanKept`) and the child reads them on demand; otherwise they are
   * read and checked (decision 0067).
   */
  async function forkStored(
    source: SourceHeader,
    atSeq: number | undefined,
    known?: Uint8Array,
    /** The source's checkpoint, when the caller started reading it. */
    checkpoint?: Promise<Checkpoint | undefined>,
    /** The ranges an open source summed of what it wrote, beside `known`. */
    knownRanges?: readonly CheckpointRange[],
  ): Promise<StoredSession> {
    const id = source.id
    const sourceCheckpoint = known ? undefined : await (checkpoint ?? readCheckpoint(id))
    const boundaries = known ?? sourceCheckpoint?.checker.boundaries
    /** What the source summed of its records: the scan checks the kept ones against it. */
    const expected = known ? knownRanges : sourceCheckpoint?.ranges
    const isScanEnough = !checkInvariants || boundaries !== undefined
    // One pass: the kept bytes are copied and scanned as they are read (decision 0069).
    const isOnePass = isScanEnough && backend.copyInspected !== undefined && atSeq !== undefined
    if (isOnePass) {
      const header = childHeader(source, atSeq)
      const copied = await copyScanned(source, header, atSeq, boundaries, expected)
      if (copied) {
        const { scan, lease, isCheckpointed } = copied
        if (scan.openTurnSeq === undefined)
          return startScanned(header, scan, lease, boundaries, isCheckpointed)
        await discardChild(header.id, lease)
        throw openTurnAt(id, atSeq, scan)
      }
    }
    // After a refused one-pass copy, a scan would refuse the same records: read and check.
    let scan =
      isScanEnough && !isOnePass
        ? await scanKept(backend, id, atSeq, policy.rangeCharacters, expected)
        : undefined
    if (scan && atSeq === undefined && scan.openTurnSeq !== undefined)
      scan = await scanKept(backend, id, scan.openTurnSeq - 1, policy.rangeCharacters, expected)
    const end = scan?.lastSeq ?? -1
    if (scan && end >= 0) {
      if (scan.openTurnSeq !== undefined) throw openTurnAt(id, end, scan)
      const header = childHeader(source, end)
      const covered = scannedCovered(scan, boundaries)
      const { lease, isCheckpointed } = await backend.copyPrefix(id, header, end, scan.position, {
        sourceHeader: source.text,
        ...optionalCheckpoint(forkCheckpoint(covered, scan.position, scan.start)),
      })
      return startScanned(header, scan, lease, boundaries, isCheckpointed)
    }
    const loaded = await loadEvents(backend, id, {
      trusted: true,
      rangeCharacters: policy.rangeCharacters,
      ...(atSeq === undefined ? {} : { throughSeq: atSeq }),
    })
    const cut = forkCut(id, loaded.events, atSeq)
    const header = childHeader(source, cut)
    const { lease } = await backend.copyPrefix(id, header, cut, loaded.positions[cut], {
      sourceHeader: source.text,
    })
    // Read through an explicit cut exactly, the loader's checker stands at the cut.
    return startSession({
      header,
      events: loaded.events.slice(0, cut + 1),
      lease,
      ...(atSeq === undefined ? {} : { checker: loaded.checker }),
      // The copy is the bytes read: what the loader summed is the child's log exactly.
      ...(loaded.events.length === cut + 1
        ? { stored: loaded, sourcePosition: { seq: cut, position: loaded.positions[cut]! } }
        : {}),
    })
  }

  /**
   * Copies the kept records `[0..cut]` with `backend.copyInspected`, scanning them on the way
   * (`createKeptScanner`), and has the child's checkpoint stored while the copy is synced
   * (decision 0019). Undefined, with nothing left behind, when a record is not in the form
   * this store writes or the log ends before the cut: the caller then reads and checks.
   */
  async function copyScanned(
    source: SourceHeader,
    header: SessionHeader,
    cut: number,
    boundaries: Uint8Array | undefined,
    /** The source checkpoint's ranges (`createKeptScanner`). */
    expected: readonly CheckpointRange[] | undefined,
  ): Promise<
    | { readonly scan: KeptScanResult; readonly lease: Lease; readonly isCheckpointed: boolean }
    | undefined
  > {
    const scanner = createKeptScanner(checksumForm, policy.rangeCharacters, expected)
    const copied = await backend.copyInspected!(source.id, header, {
      throughSeq: cut,
      inspect: (records) => scanner.add(records),
      sourceHeader: source.text,
      checkpoint: (childPosition) => {
        const scan = scanner.result(cut)
        // Not for a cut the caller refuses (inside a turn).
        if (!scan || scan.openTurnSeq !== undefined) return undefined
        const covered = scannedCovered(scan, boundaries)
        return forkCheckpoint(covered, scan.position, scan.start)?.(childPosition)
      },
    })
    if (!copied) return undefined
    const scan = scanner.result(cut)
    if (scan) return { scan, lease: copied.lease, isCheckpointed: copied.isCheckpointed }
    await discardChild(header.id, copied.lease)
    return undefined
  }

  /**
   * Copies the kept records `[0..cut]` of a source open here, whose ranges of them (if known)
   * and where the cut ends it knows, summing the bytes range by range as they are copied
   * (`sumKept`). Bytes that
   * differ (the log was changed behind the open source) are refused with `LogCorruptError`,
   * and the child is removed (decision 0069). The child's checkpoint, the source's state at
   * the cut, is stored while the copy is synced (decision 0019).
   */
  async function copyChecked(
    source: SourceHeader,
    header: SessionHeader,
    cut: number,
    expected: {
      readonly position: number
      /** Where the record of the cut starts, if known. */
      readonly start: number | undefined
      readonly basis: Covered
    },
  ): Promise<{ readonly lease: Lease; readonly isCheckpointed: boolean }> {
    const sourceId = source.id
    const { basis } = expected
    const sum = sumKept(checksumForm, basis.ranges ?? [])
    const copied = await backend.copyInspected!(sourceId, header, {
      throughSeq: cut,
      inspect: (records) => sum.add(records),
      sourceHeader: source.text,
      checkpoint: (childPosition) => {
        const found = sum.result()
        // Only over the bytes the source wrote (else the fork is refused below).
        if (!found.isMatching || found.position !== expected.position) return undefined
        return forkCheckpoint(basis, expected.position, expected.start)?.(childPosition)
      },
    })
    const found = sum.result()
    const reason = !copied
      ? `it ends at seq ${found.lastSeq}`
      : found.position !== expected.position
        ? `the record of seq ${cut} ends at ${found.position}, not at ${expected.position}`
        : basis.ranges !== undefined && !found.isMatching
          ? `the records through seq ${cut} are not the ones written`
          : undefined
    if (copied && reason === undefined)
      return { lease: copied.lease, isCheckpointed: copied.isCheckpointed }
    if (copied) await discardChild(header.id, copied.lease)
    throw new LogCorruptError(
      backend.describe(sourceId),
      `cannot fork session ${sourceId} at seq ${cut}: its log changed after it was opened (${reason}); nothing was copied. Close the session and open it again to check the whole log (if that fails too, ${repairHint(sourceId)})`,
    )
  }

  /** Removes a child made by a fork that is refused after its copy. */
  async function discardChild(id: string, lease: Lease): Promise<void> {
    try {
      await backend.remove(id)
    } finally {
      await lease.release()
    }
  }

  /**
   * The child's checkpoint at the cut, as the child would write it at close (decision 0019):
   * from what the store knows there (`covered`, with where the cut's record ends and starts in
   * the source), when there is a checker, its ranges, and enough characters to be worth one.
   */
  function forkCheckpoint(
    covered: Covered & { readonly throughSeq: number },
    position: number,
    start: number | undefined,
  ): ForkCopyOptions['checkpoint'] {
    const { ranges } = covered
    if (!checkInvariants || !backend.writeCheckpoint || ranges === undefined) return undefined
    if (covered.characters < policy.minCharacters) return undefined
    return (childPosition) =>
      encodeCheckpoint({
        throughSeq: covered.throughSeq,
        position: childPosition(position),
        ...(start === undefined ? {} : { start: childPosition(start) }),
        // The bytes are copied whole: the source's ranges, where the child has them.
        ranges: ranges.map((range) => ({ ...range, position: childPosition(range.position) })),
        characters: covered.characters,
        checker: covered.checker,
        projection: covered.projection,
      })
  }

  /**
   * What a child knows of the kept records it did not read, from their scan: the checker's
   * state at the cut (`boundaries`: the source's, through at least the cut) and the projection.
   */
  function scannedCovered(
    scan: KeptScanResult,
    boundaries: Uint8Array | undefined,
  ): Covered & { readonly throughSeq: number } {
    const end = scan.lastSeq
    const checker: LogCheckerState = {
      nextSeq: end + 1,
      fold: { lastTurn: scan.lastTurn, openTurn: undefined, step: undefined },
      boundaries: boundariesBefore(boundaries, end + 1),
    }
    return {
      throughSeq: end,
      ranges: rangesThrough(scan.sums, end, scan.position, scan.characters),
      characters: scan.characters,
      checker,
      projection: scan.projection,
    }
  }

  /**
   * Starts a child whose kept records were scanned, not read (it reads them on demand).
   * `isCheckpointed`: its checkpoint through the cut is stored already (`copyScanned`).
   */
  function startScanned(
    header: SessionHeader,
    scan: KeptScanResult,
    lease: Lease,
    boundaries: Uint8Array | undefined,
    isCheckpointed: boolean,
  ): Promise<StoredSession> {
    const resumed = scannedCovered(scan, boundaries)
    return startSession({
      header,
      events: [],
      lease,
      ...(checkInvariants
        ? { checker: createLogChecker({ allowOpenTurn: true }, resumed.checker) }
        : {}),
      resumed,
      stored: scan,
      sourcePosition: { seq: scan.lastSeq, position: scan.position },
      // Created listed with no event after the cut: the metadata stands as written.
      isListed: true,
      ...(isCheckpointed
        ? { checkpointed: { throughSeq: scan.lastSeq, characters: scan.characters } }
        : {}),
    })
  }

  function openTurnAt(id: string, cut: number, scan: KeptScanResult): RudderError {
    return new RudderError(
      'OPEN_TURN',
      `cannot fork session ${id} at seq ${cut}: it is inside turn ${scan.lastTurn} (open from seq ${scan.openTurnSeq}); fork at seq ${scan.openTurnSeq! - 1} (before the turn) or at the seq of a later turn/end`,
    )
  }

  /** `checkerOver`, yielding to the event loop between slices so I/O in flight moves on. */
  async function checkerOverInSlices(events: readonly SessionEvent[]): Promise<LogChecker> {
    const checker = createLogChecker({ allowOpenTurn: true })
    for (let index = 0; index < events.length; index++) {
      checker.record(events[index]!)
      if (index % 2048 === 2047) await new Promise<void>((resolve) => setImmediate(resolve))
    }
    return checker
  }

  function checkerOver(events: readonly SessionEvent[]): LogChecker {
    const checker = createLogChecker({ allowOpenTurn: true })
    for (const event of events) checker.record(event)
    return checker
  }

  const store: SessionStore = {
    url: backend.url,

    async create(createOptions: CreateOptions = {}) {
      ensureOpen()
      const header: SessionHeader = {
        id: randomUUID(),
        formatVersion: FORMAT_VERSION,
        createdAt: now(),
        ...(createOptions.cwd === undefined ? {} : { cwd: createOptions.cwd }),
        ...(createOptions.title === undefined ? {} : { title: createOptions.title }),
      }
      const lease = await backend.create(header)
      return startSession({
        header,
        events: [],
        lease,
        stored: { sums: emptyRangeSums(policy.rangeCharacters), characters: 0 },
        isListed: true,
      })
    },

    async open(id) {
      ensureOpen()
      checkSessionId(id)
      const lease = await backend.acquire(id)
      let header: SessionHeader
      let loaded: Awaited<ReturnType<typeof loadEvents>> | undefined
      let tail: LoadedTail | undefined
      let checkpoint: Checkpoint | undefined
      try {
        header = await loadHeader(backend, id)
        checkpoint = await readCheckpoint(id)
        // Ready from the checkpoint and the events after it; else the log is read in full.
        tail = checkpoint && (await loadTail(backend, id, checkpoint, policy.rangeCharacters))
        if (!tail)
          loaded = await loadEvents(backend, id, { rangeCharacters: policy.rangeCharacters })
      } catch (error) {
        await lease.release()
        throw error
      }
      const from = tail ?? loaded!
      const repairs: Repair[] = []
      if (from.tornTail)
        repairs.push({
          kind: 'torn-tail',
          location: from.tornTail.location,
          bytes: from.tornTail.bytes,
        })
      return startSession({
        header,
        events: from.events,
        lease,
        repairs,
        checker: from.checker,
        positions: from.positions,
        stored: from,
        ...(tail
          ? {
              resumed: checkpoint!,
              checkpointed: {
                throughSeq: checkpoint!.throughSeq,
                characters: checkpoint!.characters,
              },
            }
          : {}),
        ...(from.tornTail ? { truncateAt: from.tornTail.position } : {}),
      })
    },

    async read(id) {
      ensureOpen()
      checkSessionId(id)
      const header = await loadHeader(backend, id)
      const loaded = await loadEvents(backend, id, { checkpoint: await readCheckpoint(id) })
      // Handed out: frozen now (the loader leaves that to whoever hands them out).
      for (const event of loaded.events) deepFreeze(event)
      return {
        header,
        events: loaded.events,
        ...(loaded.tornTail
          ? { tornTail: { location: loaded.tornTail.location, bytes: loaded.tornTail.bytes } }
          : {}),
        ...(loaded.openTurn === undefined ? {} : { openTurn: loaded.openTurn }),
      }
    },

    async stat(id) {
      ensureOpen()
      checkSessionId(id)
      const header = await loadHeader(backend, id)
      return { header, ...(await logEnd(backend, id)) }
    },

    async fork(id, forkOptions = {}) {
      ensureOpen()
      checkSessionId(id)
      const atSeq = forkOptions.atSeq
      if (atSeq !== undefined && (!Number.isInteger(atSeq) || atSeq < 0))
        throw new RudderError(
          'INVALID_INPUT',
          `fork atSeq must be a seq (an integer ≥ 0), got ${JSON.stringify(atSeq)}`,
        )
      // A source closed here stands on its checkpoint's checker (`forkStored`): read beside the
      // header, not after it (B11). `readCheckpoint` settles to undefined on any failure.
      const checkpoint = live.has(id) ? undefined : readCheckpoint(id)
      // The stored text too: a file backend finds where the events start from it.
      const stored = await backend.readHeader(id)
      const source = { ...parseHeader(stored.text, stored.location, id), text: stored.text }
      const open = live.get(id)
      return open ? forkLive(open, source, atSeq) : forkStored(source, atSeq, undefined, checkpoint)
    },

    async list(listOptions = {}) {
      ensureOpen()
      const limit = listOptions.limit ?? DEFAULT_LIST_LIMIT
      if (!Number.isInteger(limit) || limit < 1)
        throw new RudderError(
          'INVALID_INPUT',
          `list limit must be a positive integer, got ${JSON.stringify(limit)}`,
        )
      return backend.list({ ...listOptions, limit })
    },

    async search(text, searchOptions = {}) {
      ensureOpen()
      const limit = searchOptions.limit ?? 20
      if (!Number.isInteger(limit) || limit < 1)
        throw new RudderError(
          'INVALID_INPUT',
          `search limit must be a positive integer, got ${JSON.stringify(limit)}`,
        )
      const words = queryWords(text)
      if (words.length === 0) return []
      return backend.search ? backend.search(words, limit) : scanSearch(backend, words, limit)
    },

    async *exportJsonl(id) {
      ensureOpen()
      checkSessionId(id)
      const header = await loadHeader(backend, id)
      const loaded = await loadEvents(backend, id, { checkpoint: await readCheckpoint(id) })
      yield `${JSON.stringify(header)}\n`
      for (const event of loaded.events) yield `${envelopeLine(event)}\n`
    },

    async importJsonl(source: JsonlSource) {
      ensureOpen()
      const { header, events } = await readJsonl(source, backend.blobs)
      checkSessionId(header.id)
      if (await backend.exists(header.id))
        throw new RudderError(
          'INVALID_INPUT',
          `cannot import session ${header.id}: this store already has a session with that id`,
        )
      const lease = await backend.create(header)
      let writer: BatchWriter | undefined
      try {
        writer = await backend.openWriter(header.id, {
          header,
          eventCount: 0,
          updatedAt: header.createdAt,
        })
        await writeDurably(writer, events)
      } catch (error) {
        // The first failure is the one to report: a close failing after it must not mask it.
        await writer?.close().catch(() => {})
        await lease.release()
        throw error
      }
      try {
        await writer.close()
      } finally {
        await lease.release()
      }
      return header
    },

    async repair(id): Promise<SalvageResult> {
      ensureOpen()
      checkSessionId(id)
      let source: SessionHeader | undefined
      try {
        source = await loadHeader(backend, id)
      } catch (error) {
        // A damaged header still leaves events worth saving; anything else is no salvage case.
        if (!(error instanceof RudderError) || error.code !== 'LOG_CORRUPT') throw error
      }
      const loaded = await loadEvents(backend, id, { salvage: true })
      const kept = loaded.events
      const header: SessionHeader = {
        id: randomUUID(),
        formatVersion: FORMAT_VERSION,
        createdAt: now(),
        ...(source?.cwd === undefined ? {} : { cwd: source.cwd }),
        title: `${source?.title ?? `session ${id}`} (repaired)`,
        ...(kept.length > 0 ? { parent: { sessionId: id, seq: kept.length - 1 } } : {}),
      }
      const lease = await backend.create(header)
      const session = await startSession({ header, events: kept, lease, unwritten: true })
      return {
        session,
        sourceId: id,
        keptEvents: kept.length,
        ...(loaded.problem ? { problem: loaded.problem } : {}),
      }
    },

    async delete(id) {
      ensureOpen()
      checkSessionId(id)
      if (live.has(id)) throw new SessionBusyError(id, process.pid)
      const lease = await backend.acquire(id)
      try {
        await backend.remove(id)
      } finally {
        await lease.release()
      }
    },

    async collectBlobs(options = {}) {
      ensureOpen()
      const blobs = backend.blobs
      if (!blobs) return 0
      const referenced = new Set<string>()
      for (const id of await backend.ids())
        for await (const batch of backend.records(id))
          for (const record of batch)
            if (record.kind === 'line' && record.text.includes('"blobs":'))
              for (const match of record.text.matchAll(/"sha256":"([0-9a-f]{64})"/g))
                referenced.add(match[1]!)
      return blobs.sweep(referenced, options.graceMs ?? 3_600_000)
    },

    async *follow(id, followOptions = {}) {
      ensureOpen()
      checkSessionId(id)
      const fromSeq = followOptions.fromSeq ?? 0
      if (!Number.isInteger(fromSeq) || fromSeq < 0)
        throw new RudderError(
          'INVALID_INPUT',
          `follow fromSeq must be a seq (an integer ≥ 0), got ${JSON.stringify(fromSeq)}`,
        )
      const signal = followOptions.signal
        ? AbortSignal.any([followOptions.signal, closed.signal])
        : closed.signal
      // A backend that is told of writes still reads now and then, in case a notice was lost
      // (a dropped LISTEN connection).
      const pollMs = backend.watch ? Math.max(followPollMs, 5000) : followPollMs
      yield* followLog(backend, id, { fromSeq, signal, pollMs })
    },

    close() {
      closing ??= (async () => {
        closed.abort()
        const errors: unknown[] = []
        for (const { session } of [...live.values()])
          await session.close().catch((error) => errors.push(error))
        await backend.close()
        if (errors.length > 0) throw errors[0]
      })()
      return closing
    },
  }
  return store
}
