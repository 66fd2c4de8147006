/**
 * `jsonl:<dir>`: one directory per session under `<dir>/sessions/`, holding `events.jsonl`
 * (the header line, then one event per line), `meta.json` (for `list`) and the writer lease
 * files. Large payloads live in `<dir>/blobs/`. See docs/log-format.md.
 */

import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises'
import { join } from 'node:path'
import { LogCorruptError, type SessionHeader } from '../../core/index.js'
import {
  type Backend,
  type ForkCopyOptions,
  type RecordBatch,
  type StoredRecord,
  withStoredBytes,
} from '../backend.js'
import { createBlobStore } from '../blob-store.js'
import { sessionExists, sessionNotFound, storeFailure } from '../errors.js'
import { syncDirectory } from '../fs-sync.js'
import type { Lease } from '../lease.js'
import { listingOf, page } from '../listing.js'
import { checkSessionId } from '../session-id.js'
import type { SessionListing, StoreCounters } from '../store.js'
import { openJsonlWriter } from './jsonl-writer.js'
import { acquireLeaseFile, createLeaseFile } from './lease-file.js'
import { type Copied, copyLines, copyRange, createBufferPool } from './line-copy.js'
import { type Line, type LineBatch, readFirstLine, readLines } from './line-reader.js'
import { readMeta, type StagedMeta, stageMeta } from './meta-file.js'

const LOG = 'events.jsonl'
const META = 'meta.json'
const CHECKPOINT = 'checkpoint.json'
/** The first read of a header line (`readHeader`). */
const HEADER_READ = 16 * 1024

export async function createJsonlBackend(
  root: string,
  counters: StoreCounters | undefined,
): Promise<Backend> {
  const url = `jsonl:${root}`
  const sessionsDirectory = join(root, 'sessions')
  try {
    await mkdir(sessionsDirectory, { recursive: true })
  } catch (error) {
    throw storeFailure(`cannot create the JSONL store directory ${sessionsDirectory}`, error)
  }
  const pool = createBufferPool()
  const directoryOf = (id: string) => join(sessionsDirectory, id)
  const logOf = (id: string) => join(sessionsDirectory, id, LOG)
  const metaOf = (id: string) => join(sessionsDirectory, id, META)

  async function exists(id: string): Promise<boolean> {
    try {
      await stat(logOf(id))
      return true
    } catch {
      // No log file: no session (or a create cut short before its log existed).
      return false
    }
  }

  async function ids(): Promise<string[]> {
    const names = await readdir(sessionsDirectory)
    return names.filter((name) => {
      try {
        checkSessionId(name)
        return true
      } catch {
        // Not a session directory (a stray file or a temporary entry).
        return false
      }
    })
  }

  async function mustExist(id: string): Promise<void> {
    if (!(await exists(id))) throw sessionNotFound(id, url)
  }

  /**
   * Creates the directory and lease, then the log holding `header` and what `body` writes
   * after it (from byte `start`), durably. When `body` returns undefined, or `inspect` (run on
   * what it wrote, while that is synced) false, nothing is kept. `checkpoint`, called with
   * `start` once the body is done and inspected, gives the new session's projection checkpoint
   * (decision 0019), written while the copy is synced.
   *
   * 1. The body's bytes are made durable before the header is written: a crash during a fork
   *    leaves a log without a header (zeros where it goes), which opening refuses
   *    (`readHeader`), never a shorter child whose header names a longer cut. Meanwhile the
   *    new directory's entry is synced, the checkpoint written, and the metadata for `list`
   *    written beside its place (`stageMeta`): a crash then leaves the same refused, unlisted
   *    directory.
   * 2. The header, then its sync; meanwhile the metadata is renamed into place (after the
   *    header is written, as before) and the session's directory synced, which commits the
   *    entries of the log, the lease and the metadata. Staged in step 1, the metadata costs
   *    step 2 one rename, not a create, a write, a close and a rename (B11, decision 0186).
   */
  async function createWith(
    header: SessionHeader,
    body: (log: FileHandle, start: number) => Promise<Copied | undefined>,
    updatedAt: number,
    checkpoint?: (start: number) => string | undefined,
    inspect?: (start: number, copied: Copied) => Promise<boolean>,
  ): Promise<{ lease: Lease; eventCount: number; isCheckpointed: boolean } | undefined> {
    const directory = directoryOf(header.id)
    try {
      await mkdir(directory)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw sessionExists(header.id, url)
      throw storeFailure(`cannot create the session directory ${directory}`, error)
    }
    const lease = await createLeaseFile(directory, header.id)
    let copied: Copied | undefined
    let isCheckpointed = false
    try {
      const log = await open(logOf(header.id), 'wx')
      /** The metadata, until it is renamed into place. */
      let staged: StagedMeta | undefined
      /** The session's directory, opened in step 1 to be synced in step 2. */
      let directoryHandle: FileHandle | undefined
      try {
        const headerLine = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8')
        copied = await body(log, headerLine.length)
        let isTaken = true
        if (copied) {
          const { bytes, events } = copied
          const start = headerLine.length
          const inspected = inspect ? inspect(start, copied) : Promise.resolve(true)
          await settleAll([
            bytes > 0 ? log.datasync().then(() => void (counters && counters.syncs++)) : undefined,
            syncDirectory(sessionsDirectory, counters),
            inspected.then((isInspected) => {
              isTaken = isInspected
              const text = isInspected ? checkpoint?.(start) : undefined
              if (text === undefined) return
              return writeCheckpointFile(header.id, text).then(
                () => {
                  isCheckpointed = true
                },
                () => {
                  // A checkpoint is a cache: the session writes one at close instead.
                },
              )
            }),
            stageMeta(metaOf(header.id), { header, eventCount: events, updatedAt }).then((meta) => {
              staged = meta
            }),
            open(directory, 'r').then((handle) => {
              directoryHandle = handle
            }),
          ])
          if (!isTaken) {
            // The inspector refused what was copied: the child goes below, never headed.
            copied = undefined
          } else {
            await log.write(headerLine, 0, headerLine.length, 0)
            const meta = staged!
            const directorySync = directoryHandle!
            await settleAll([
              log.datasync().then(() => {
                if (counters) {
                  counters.syncs++
                  counters.bytesWritten += headerLine.length + bytes
                }
              }),
              (async () => {
                await meta.commit()
                staged = undefined
                await directorySync.sync()
                if (counters) counters.syncs++
              })(),
            ])
          }
        }
      } finally {
        // The directory's handle closes (and a metadata file never renamed goes) beside the log.
        const others = Promise.allSettled([directoryHandle?.close(), staged?.discard()])
        await log.close().finally(() => others)
      }
      if (copied) return { lease, eventCount: copied.events, isCheckpointed }
    } catch (error) {
      // Nothing is left behind, as when the body refuses (below): the failure is reported,
      // not a failure to clean up after it.
      await discardCreated(header.id, lease).catch(() => {})
      throw storeFailure(`cannot create session ${header.id} in ${directory}`, error)
    }
    // The body refused the copy: no session is left behind.
    await discardCreated(header.id, lease)
    return undefined
  }

  /**
   * Removes what `createWith` made of session `id`: the log first (without it the directory is
   * no session, see `exists`), then the lease and the directory.
   */
  async function discardCreated(id: string, lease: Lease): Promise<void> {
    await rm(logOf(id), { force: true })
    await lease.release()
    await rm(directoryOf(id), { recursive: true, force: true })
  }

  /** Writes a checkpoint beside the log and renames it over the old one (no sync). */
  async function writeCheckpointFile(id: string, text: string): Promise<void> {
    // Written beside and renamed over, so a reader sees the old checkpoint or the new one.
    // No fsync: a checkpoint lost or cut short by a crash is ignored and rebuilt.
    const path = join(directoryOf(id), CHECKPOINT)
    const temporary = `${path}.${process.pid}.tmp`
    try {
      await writeFile(temporary, text, 'utf8')
      await rename(temporary, path)
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => {
        // The write failure is the one to report.
      })
      throw storeFailure(`cannot write the checkpoint of ${logOf(id)}`, error)
    }
  }

  /** `createWith`, for a body that always completes. */
  async function createLeased(
    header: SessionHeader,
    body: (log: FileHandle, start: number) => Promise<Copied>,
    updatedAt: number,
  ): Promise<Lease> {
    return (await createWith(header, body, updatedAt))!.lease
  }

  return {
    url,
    checksumForm: 'bytes',
    blobs: createBlobStore(join(root, 'blobs'), counters),
    describe: (id) => logOf(id),
    locate: (id, line) => `${logOf(id)}:${line}`,
    exists,
    ids,
    create: (header) =>
      createLeased(header, async () => ({ bytes: 0, events: 0 }), header.createdAt),
    async acquire(id) {
      await mustExist(id)
      return acquireLeaseFile(directoryOf(id), id)
    },
    async readHeader(id) {
      const location = `${logOf(id)}:1`
      // A header is a few hundred bytes: a small read first (every open and fork reads it),
      // the bounded large one only for a header longer than that. No `exists` first: a log
      // that is not there fails the read's open (one round trip through the pool, not two).
      const read = (maxBytes?: number) =>
        readFirstLine(logOf(id), maxBytes).catch((error: unknown) => {
          const code = (error as NodeJS.ErrnoException).code
          if (code === 'ENOENT' || code === 'ENOTDIR') throw sessionNotFound(id, url)
          throw storeFailure(`cannot read ${logOf(id)}`, error)
        })
      const text = (await read(HEADER_READ)) ?? (await read())
      // No header, or the zeros a fork cut short leaves where its header was to be written.
      if (text === undefined || text.startsWith('\0'))
        throw new LogCorruptError(
          location,
          `the header line is incomplete (the session's creation was cut short); nothing in it can be recovered, so remove the directory ${directoryOf(id)}`,
        )
      return { text, location }
    },
    async *records(id, options = {}) {
      await mustExist(id)
      const path = logOf(id)
      const firstLine = (options.fromSeq ?? 0) + 2
      const throughLine =
        options.throughSeq === undefined ? Number.POSITIVE_INFINITY : options.throughSeq + 2
      const from =
        options.fromPosition === undefined
          ? undefined
          : { offset: options.fromPosition, line: firstLine }
      for await (const batch of readLines(path, { firstLine, ...(from ? { from } : {}) })) {
        let records: StoredRecord[] = batch.lines as Line[]
        const last = records.at(-1)
        // The reader skips the lines before `firstLine`; the last batch may run past the range.
        if (last && last.kind === 'line' && last.where >= throughLine) {
          yield withBytes(
            records.filter((record) => record.kind === 'line' && record.where <= throughLine),
            batch,
          )
          return
        }
        if (batch.torn && batch.torn.number > 1)
          records = [
            ...records,
            {
              kind: 'torn',
              location: `${path}:${batch.torn.number}`,
              bytes: batch.torn.bytes,
              position: batch.torn.start,
            },
          ]
        if (records.length > 0) yield withBytes(records, batch)
      }
    },
    async openWriter(id, start) {
      return openJsonlWriter({ logPath: logOf(id), metaPath: metaOf(id), start, counters })
    },
    async copyPrefix(sourceId, header, throughSeq, position, options = {}) {
      const sourcePath = logOf(sourceId)
      const from = await eventsStart(sourcePath, options.sourceHeader)
      const to = throughSeq < 0 || position === undefined ? from : position
      const created = await createWith(
        header,
        async (log, start) => ({
          bytes: await copyRange({ sourcePath, from, to, target: log, at: start, pool }),
          events: throughSeq + 1,
        }),
        header.createdAt,
        childCheckpoint(options.checkpoint, from),
      )
      return { lease: created!.lease, isCheckpointed: created!.isCheckpointed }
    },
    async copyInspected(sourceId, header, options) {
      const sourcePath = logOf(sourceId)
      const from = await eventsStart(sourcePath, options.sourceHeader)
      // The lines are copied whole, then read back from the child and inspected while its
      // bytes sync: inspected as they were copied, the main thread's scan set the copy's pace
      // on two cores, and the sync's wait went unused (decision 0192).
      return createWith(
        header,
        (log, start) =>
          copyLines({
            sourcePath,
            from,
            lines: options.throughSeq === undefined ? undefined : options.throughSeq + 1,
            target: log,
            at: start,
            inspect: undefined,
            byLine: true,
            pool,
          }),
        header.createdAt,
        childCheckpoint(options.checkpoint, from),
        async (start, copied) =>
          (await copyLines({
            sourcePath: logOf(header.id),
            from: start,
            lines: copied.events,
            size: start + copied.bytes,
            target: undefined,
            at: start,
            inspect: options.inspect,
            positionsFrom: from,
            pool,
          })) !== undefined,
      )
    },
    async readCheckpoint(id) {
      try {
        return await readFile(join(directoryOf(id), CHECKPOINT), 'utf8')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw storeFailure(`cannot read the checkpoint of ${logOf(id)}`, error)
      }
    },
    writeCheckpoint: writeCheckpointFile,
    async list(options) {
      const rows: SessionListing[] = []
      for (const id of await ids()) {
        const meta = readMeta(metaOf(id))
        if (meta) rows.push(listingOf(meta.header, meta.eventCount, meta.updatedAt))
      }
      return page(rows, options)
    },
    async remove(id) {
      // The log goes first: without it the directory is no session (see `exists`), so a crash
      // in the middle leaves no half session behind, only a directory the next remove clears.
      try {
        await rm(logOf(id), { force: true })
        await syncDirectory(directoryOf(id), counters)
        await rm(directoryOf(id), { recursive: true, force: true })
        await syncDirectory(sessionsDirectory, counters)
      } catch (error) {
        throw storeFailure(`cannot delete session ${id} (${directoryOf(id)})`, error)
      }
    },
    async close() {},
  }
}

/**
 * Where the first event line of a log starts: after its header line, as `readHeader` gave it
 * (`headerText`, the caller read it just before), else read again.
 */
async function eventsStart(path: string, headerText: string | undefined): Promise<number> {
  const text = headerText ?? (await readFirstLine(path))
  return Buffer.byteLength(text ?? '', 'utf8') + 1
}

/**
 * `ForkCopyOptions.checkpoint` for `createWith`: the source's events start at `from`, the
 * child's at `start` (after its own header), so a position moves by the difference.
 */
function childCheckpoint(
  checkpoint: ForkCopyOptions['checkpoint'],
  from: number,
): ((start: number) => string | undefined) | undefined {
  return checkpoint && ((start) => checkpoint((position) => position - from + start))
}

/**
 * Awaits every promise (undefined ones are skipped) and throws the first failure, once all
 * have settled: none is left running on a handle the caller is about to close.
 */
async function settleAll(promises: readonly (Promise<unknown> | undefined)[]): Promise<void> {
  const settled = await Promise.allSettled(promises)
  for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason
}

/**
 * `records` with the bytes their lines were read from (`StoredBytes`): the checkpoint's
 * checksum of a JSONL log is over those bytes (decision 0162).
 */
function withBytes(records: StoredRecord[], batch: LineBatch): RecordBatch {
  if (batch.bytes === undefined || batch.start === undefined) return records
  return withStoredBytes(records, { bytes: batch.bytes, start: batch.start })
}
