/**
 * `jsonl:<dir>`: one directory per session under `<dir>/sessions/`, holding `events.jsonl`
 * (the header line, then one event per line), `meta.json` (for `list`) and the writer lease
 * files. Large payloads live in `<dir>/blobs/`. See docs/log-format.md.
 */
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { LogCorruptError, type SessionHeader } from '../../core/index.js'
import type { Backend, StoredRecord } from '../backend.js'
import { createBlobStore } from '../blob-store.js'
import { sessionExists, sessionNotFound, storeFailure } from '../errors.js'
import { syncDirectory } from '../fs-sync.js'
import type { Lease } from '../lease.js'
import { listingOf, page } from '../listing.js'
import { checkSessionId } from '../session-id.js'
import type { SessionListing, StoreCounters } from '../store.js'
import { openJsonlWriter } from './jsonl-writer.js'
import { acquireLeaseFile } from './lease-file.js'
import { type Line, readFirstLine, readLines } from './line-reader.js'
import { readMeta, writeMeta } from './meta-file.js'

const LOG = 'events.jsonl'
const META = 'meta.json'
const CHECKPOINT = 'checkpoint.json'

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

  /** Creates the directory and lease, then the log holding `header` and `body`, durably. */
  async function createWith(
    header: SessionHeader,
    body: (log: Awaited<ReturnType<typeof open>>) => Promise<number>,
    eventCount: number,
    updatedAt: number,
  ): Promise<Lease> {
    const directory = directoryOf(header.id)
    try {
      await mkdir(directory)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw sessionExists(header.id, url)
      throw storeFailure(`cannot create the session directory ${directory}`, error)
    }
    const lease = await acquireLeaseFile(directory, header.id)
    try {
      const log = await open(logOf(header.id), 'wx')
      try {
        const headerLine = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8')
        await log.write(headerLine)
        const copied = await body(log)
        await log.datasync()
        if (counters) {
          counters.syncs++
          counters.bytesWritten += headerLine.length + copied
        }
      } finally {
        await log.close()
      }
      await writeMeta(metaOf(header.id), { header, eventCount, updatedAt })
      await syncDirectory(directory, counters)
      await syncDirectory(sessionsDirectory, counters)
      return lease
    } catch (error) {
      await lease.release()
      throw storeFailure(`cannot create session ${header.id} in ${directory}`, error)
    }
  }

  return {
    url,
    blobs: createBlobStore(join(root, 'blobs'), counters),
    describe: (id) => logOf(id),
    locate: (id, line) => `${logOf(id)}:${line}`,
    exists,
    ids,
    create: (header) => createWith(header, async () => 0, 0, header.createdAt),
    async acquire(id) {
      await mustExist(id)
      return acquireLeaseFile(directoryOf(id), id)
    },
    async readHeader(id) {
      await mustExist(id)
      const location = `${logOf(id)}:1`
      const text = await readFirstLine(logOf(id)).catch((error: unknown) => {
        throw storeFailure(`cannot read ${logOf(id)}`, error)
      })
      if (text === undefined)
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
        const first = records[0]
        const last = records.at(-1)
        if (first && first.kind === 'line' && first.where < firstLine)
          records = records.filter((record) => record.kind === 'line' && record.where >= firstLine)
        if (last && last.kind === 'line' && last.where >= throughLine) {
          yield records.filter((record) => record.kind === 'line' && record.where <= throughLine)
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
        if (records.length > 0) yield records
      }
    },
    async openWriter(id, start) {
      return openJsonlWriter({ logPath: logOf(id), metaPath: metaOf(id), start, counters })
    },
    async copyPrefix(sourceId, header, throughSeq, position) {
      const sourcePath = logOf(sourceId)
      const headerText = await readFirstLine(sourcePath)
      const from = Buffer.byteLength(headerText ?? '', 'utf8') + 1
      const to = throughSeq < 0 || position === undefined ? from : position
      return createWith(
        header,
        (log) => copyRange(sourcePath, from, to, log),
        throughSeq + 1,
        header.createdAt,
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
    async writeCheckpoint(id, text) {
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
    },
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
 * Copies bytes `[from, to)` of `sourcePath` to the end of `target`; returns the count. The
 * next chunk is read while the current one is written (two buffers), so the copy costs about
 * the larger of the reads and the writes, not their sum (B11).
 */
async function copyRange(
  sourcePath: string,
  from: number,
  to: number,
  target: Awaited<ReturnType<typeof open>>,
): Promise<number> {
  const source = await open(sourcePath, 'r')
  const size = Math.min(4 * 1024 * 1024, Math.max(to - from, 1))
  let buffers = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)] as const
  const readAt = (buffer: Buffer, offset: number) =>
    source.read(buffer, 0, Math.min(buffer.length, to - offset), offset)
  let offset = from
  let reading = offset < to ? readAt(buffers[0], offset) : undefined
  try {
    while (reading) {
      const { bytesRead } = await reading
      if (bytesRead === 0) break
      offset += bytesRead
      const current = buffers[0]
      buffers = [buffers[1], buffers[0]]
      reading = offset < to ? readAt(buffers[0], offset) : undefined
      let written = 0
      while (written < bytesRead) {
        const result = await target.write(current, written, bytesRead - written)
        written += result.bytesWritten
      }
    }
    return offset - from
  } finally {
    // A write failed with a read in flight: let it settle before closing its handle.
    await reading?.catch(() => {})
    await source.close()
  }
}
