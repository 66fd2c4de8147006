/**
 * The one `SessionStore` implementation, over any backend: create, open with crash repair,
 * read without a lease, fork, list, search, export/import and salvage. The rules of docs/spec.md §9
 * live here once; backends only move bytes.
 */
import { randomUUID } from 'node:crypto'
import {
  applyCrashRepair,
  crashRepairOf,
  createLogChecker,
  createProjector,
  FORMAT_VERSION,
  forkCut,
  type LogChecker,
  openLiveSession,
  type ProjectionState,
  type Projector,
  RudderError,
  restoreProjector,
  SessionBusyError,
  type SessionEvent,
  type SessionHeader,
} from '../core/index.js'
import type { Backend, BatchWriter } from './backend.js'
import {
  type Checkpoint,
  checksumOf,
  DEFAULT_CHECKPOINT_POLICY,
  encodeCheckpoint,
  parseCheckpoint,
} from './checkpoint.js'
import { encodeEvents, envelopeLine } from './codec.js'
import { checkForWrite, invariantViolation } from './event-check.js'
import { followLog } from './follow.js'
import { readJsonl } from './jsonl-import.js'
import type { Lease } from './lease.js'
import { DEFAULT_LIST_LIMIT } from './listing.js'
import { loadEvents, loadHeader } from './log-loader.js'
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

/** Builds a store over `backend`. The store owns the backend and closes it. */
export function createSessionStore(backend: Backend, options: StoreOptions = {}): SessionStore {
  const now = options.now ?? Date.now
  const windowMs = options.flushWindowMs ?? 200
  const checkInvariants = options.checkInvariants ?? true
  const counters = options.counters
  /** Sessions open for writing from this store, by id, with their writers (for fork). */
  const live = new Map<string, { session: StoredSession; writer: BatchWriter }>()
  let closing: Promise<void> | undefined
  /** Aborted when the store closes: followers end. */
  const closed = new AbortController()
  const followPollMs = options.followPollMs ?? 250
  const policy = { ...DEFAULT_CHECKPOINT_POLICY, ...options.checkpointPolicy }

  function ensureOpen(): void {
    if (closing)
      throw new RudderError(
        'DISPOSED',
        `the store ${backend.url} is closed; open it again with openStore()`,
      )
  }

  /** Writes `events` durably; returns their stored lines. */
  async function writeDurably(
    writer: BatchWriter,
    events: readonly SessionEvent[],
  ): Promise<readonly string[]> {
    if (events.length === 0) return []
    const lines = await encodeEvents(events, backend.blobs)
    await writer.write(events, lines)
    if (counters) counters.batches++
    return lines
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
    events: SessionEvent[]
    lease: Lease
    truncateAt?: number
    /** Where each of `events` ends in the backend, when the loader knows. */
    positions?: readonly number[]
    repairs?: Repair[]
    /** An invariant checker already advanced over `events` (else one is built). */
    checker?: LogChecker
    /** Events not yet in the log, written first (salvage copies its prefix this way). */
    unwritten?: boolean
    /**
     * `checksumOf` the stored lines of `events` and their characters, when known: without them
     * the session writes no checkpoint (a fork copied bytes it did not read).
     */
    stored?: { readonly checksum: number; readonly characters: number }
    /** The loader took the events through `throughSeq` on the word of a checkpoint. */
    restored?: {
      readonly projection: ProjectionState
      readonly throughSeq: number
      readonly characters: number
    }
  }): Promise<StoredSession> {
    const { header, events, lease } = input
    /** What the next checkpoint needs to know of the durable log, while it is known. */
    const durable = input.unwritten
      ? { checksum: 0, characters: 0, throughSeq: -1 }
      : input.stored && { ...input.stored, throughSeq: events.length - 1 }
    /** What the last checkpoint written (or found valid) covers. */
    let checkpointed = input.restored
      ? { throughSeq: input.restored.throughSeq, characters: input.restored.characters }
      : { throughSeq: -1, characters: 0 }
    let checkpointWrite: Promise<void> = Promise.resolve()
    let self: StoredSession | undefined
    let writer: BatchWriter | undefined
    try {
      const last = events.at(-1)
      writer = await backend.openWriter(header.id, {
        header,
        eventCount: input.unwritten ? 0 : events.length,
        updatedAt: last?.time ?? header.createdAt,
        ...(input.truncateAt === undefined ? {} : { truncateAt: input.truncateAt }),
        ...(input.positions === undefined ? {} : { positions: input.positions }),
      })
      if (input.unwritten) noteDurable(events, await writeDurably(writer, events))
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
    // The projector is the store's, so a checkpoint can take its state (decision 0148).
    const current = () => self?.events ?? events
    let projector: Projector | undefined =
      input.restored && restoreProjector(current, input.restored.projection)
    if (input.restored && !projector) {
      // A checkpoint whose projection does not fit the log it matched was not written by this
      // build's rules: trust none of it, re-check what it covered.
      if (checker) checker = checkerOver(events)
      checkpointed = { throughSeq: -1, characters: 0 }
    }
    const projected = projector ? input.restored!.throughSeq + 1 : 0
    projector ??= createProjector(current)

    /** Takes note of a batch made durable; then writes a checkpoint if one is due. */
    function noteDurable(batch: readonly SessionEvent[], lines: readonly string[]): void {
      if (!durable || batch.length === 0) return
      for (const line of lines) {
        durable.checksum = checksumOf(line, durable.checksum)
        durable.characters += line.length
      }
      durable.throughSeq = batch.at(-1)!.seq
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
     * Starts writing a checkpoint of the durable log, if the checker and projector stand
     * exactly at its end (no append is waiting for the next batch). Off the append path: the
     * write runs behind, and a failed one costs only a full check at the next open.
     */
    function writeCheckpoint(): void {
      if (!durable || !checker || !self || !backend.writeCheckpoint) return
      const throughSeq = durable.throughSeq
      if (throughSeq <= checkpointed.throughSeq || self.events.length !== throughSeq + 1) return
      const position = opened.positionOf(throughSeq)
      if (position === undefined) return
      const text = encodeCheckpoint({
        throughSeq,
        position,
        checksum: durable.checksum,
        checker: checker.snapshot(),
        projection: projector!.snapshot(),
      })
      checkpointed = { throughSeq, characters: durable.characters }
      const write = backend.writeCheckpoint.bind(backend, header.id, text)
      checkpointWrite = checkpointWrite.then(write).catch(() => {
        // A checkpoint is a cache: without it the next open checks the log in full.
      })
    }

    const sink = createWriteBehindSink({
      writeBatch: async (batch) => noteDurable(batch, await writeDurably(opened, batch)),
      ...(checkInvariants
        ? {
            check: (event: SessionEvent) => {
              checkForWrite(event)
              // One `record` per append (not `check` then `record`): it is the costly part of
              // an append. A refused event has been taken in, so the checker is rebuilt from
              // the log as it stands; refusals are bugs, so that path may be slow.
              const problems = checker!.record(event)
              if (problems.length > 0) {
                checker = checkerOver(self?.events ?? events)
                throw invariantViolation(event, problems)
              }
            },
          }
        : {}),
      windowMs,
      describe: () => `session ${header.id} (${backend.describe(header.id)})`,
      async release() {
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
    const session = openLiveSession({
      header,
      events,
      sink,
      now,
      projection: { projector, projected },
    }) as StoredSession
    self = session
    const repairs: Repair[] = input.repairs ?? []
    Object.assign(session, { repairs })
    live.set(header.id, { session, writer: opened })
    try {
      const plan = crashRepairOf(session.events)
      if (plan) {
        const fromSeq = session.events.length
        applyCrashRepair(session, plan)
        repairs.push({
          kind: 'turn-closed',
          turn: plan.turn,
          fromSeq,
          toSeq: session.events.length - 1,
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
   * Forks a session this store has open: its events are in memory and already checked, so
   * only the kept bytes are copied (B11). Events appended after the flush below are not
   * durable yet and take no part in the cut.
   */
  async function forkLive(
    open: { session: StoredSession; writer: BatchWriter },
    source: SessionHeader,
    atSeq: number | undefined,
  ): Promise<StoredSession> {
    const durable = open.session.events.length
    await open.session.flush()
    const events = open.session.events.slice(0, durable)
    const cut = forkCut(source.id, events, atSeq)
    const position = cut < 0 ? undefined : open.writer.positionOf(cut)
    if (cut >= 0 && position === undefined) {
      // The writer does not know where the cut is on disk (a session opened as a fork): read.
      const loaded = await loadEvents(backend, source.id, { throughSeq: cut, trusted: true })
      const header = childHeader(source, cut)
      const lease = await backend.copyPrefix(source.id, header, cut, loaded.positions[cut])
      return startSession({
        header,
        events: loaded.events,
        lease,
        checker: loaded.checker,
        stored: loaded,
      })
    }
    const header = childHeader(source, cut)
    const kept = events.slice(0, cut + 1)
    // The child's checker is built while the copy's reads, writes and syncs run in the thread
    // pool, so the fork costs about the copy, not the copy plus a walk of the kept events.
    const [copied, checked] = await Promise.allSettled([
      backend.copyPrefix(source.id, header, cut, position),
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
      return startSession({ header, events: [], lease, stored: { checksum: 0, characters: 0 } })
    },

    async open(id) {
      ensureOpen()
      checkSessionId(id)
      const lease = await backend.acquire(id)
      let header: SessionHeader
      let loaded: Awaited<ReturnType<typeof loadEvents>>
      try {
        header = await loadHeader(backend, id)
        loaded = await loadEvents(backend, id, { checkpoint: await readCheckpoint(id) })
      } catch (error) {
        await lease.release()
        throw error
      }
      const repairs: Repair[] = []
      if (loaded.tornTail)
        repairs.push({
          kind: 'torn-tail',
          location: loaded.tornTail.location,
          bytes: loaded.tornTail.bytes,
        })
      return startSession({
        header,
        events: loaded.events,
        lease,
        repairs,
        checker: loaded.checker,
        positions: loaded.positions,
        stored: loaded,
        ...(loaded.restored ? { restored: loaded.restored } : {}),
        ...(loaded.tornTail ? { truncateAt: loaded.tornTail.position } : {}),
      })
    },

    async read(id) {
      ensureOpen()
      checkSessionId(id)
      const header = await loadHeader(backend, id)
      const loaded = await loadEvents(backend, id, { checkpoint: await readCheckpoint(id) })
      return {
        header,
        events: loaded.events,
        ...(loaded.tornTail
          ? { tornTail: { location: loaded.tornTail.location, bytes: loaded.tornTail.bytes } }
          : {}),
        ...(loaded.openTurn === undefined ? {} : { openTurn: loaded.openTurn }),
      }
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
      const source = await loadHeader(backend, id)
      const open = live.get(id)
      if (open) return forkLive(open, source, atSeq)
      const loaded = await loadEvents(backend, id, {
        trusted: true,
        ...(atSeq === undefined ? {} : { throughSeq: atSeq }),
      })
      const cut = forkCut(id, loaded.events, atSeq)
      const header = childHeader(source, cut)
      const lease = await backend.copyPrefix(id, header, cut, loaded.positions[cut])
      // Read through an explicit cut exactly, the loader's checker stands at the cut.
      return startSession({
        header,
        events: loaded.events.slice(0, cut + 1),
        lease,
        ...(atSeq === undefined ? {} : { checker: loaded.checker }),
        // The copy is the bytes read: what the loader summed is the child's log exactly.
        ...(loaded.events.length === cut + 1 ? { stored: loaded } : {}),
      })
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
