/**
 * `meta.json` beside each JSONL log: the header, the event count and the time of the last
 * event, so `list` never reads a log. It is a cache rewritten atomically (temp file + rename)
 * and not synced: after a crash it may lag the log, and opening the session refreshes it.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { rename, unlink, writeFile } from 'node:fs/promises'
import type { SessionHeader } from '../../core/index.js'
import { storeFailure } from '../errors.js'
import { integer, number, strictObject } from '../shape-check.js'
import { HEADER_CHECK } from '../stored-shapes.js'

export type Meta = {
  readonly header: SessionHeader
  readonly eventCount: number
  readonly updatedAt: number
}

// Checked without zod, like everything a store reads (decision 0143): listing loads no schema library.
const checkMeta = strictObject({
  header: HEADER_CHECK,
  eventCount: integer({ minimum: 0 }),
  updatedAt: number,
})

export async function writeMeta(path: string, meta: Meta): Promise<void> {
  await (await stageMeta(path, meta)).commit()
}

/** Metadata written beside its place, not yet in it (`stageMeta`). */
export type StagedMeta = {
  /** Renames it into place. */
  commit(): Promise<void>
  /** Removes it (the session it was for is not made after all). */
  discard(): Promise<void>
}

/**
 * Writes the metadata to a temporary file beside `path`, to be renamed into place later: a
 * new session's is written while its log is synced and only renamed once the header is
 * written, so what follows the header is a rename, not a create, a write and a rename (B11).
 */
export async function stageMeta(path: string, meta: Meta): Promise<StagedMeta> {
  const temporary = `${path}.${process.pid}-${randomUUID()}.tmp`
  const discard = () =>
    unlink(temporary).catch(() => {
      // Never created (the failure was the create) or already renamed.
    })
  try {
    await writeFile(temporary, JSON.stringify(meta))
  } catch (error) {
    await discard()
    throw storeFailure(`cannot write the listing metadata ${path}`, error)
  }
  return {
    async commit() {
      try {
        await rename(temporary, path)
      } catch (error) {
        await discard()
        throw storeFailure(`cannot write the listing metadata ${path}`, error)
      }
    },
    discard,
  }
}

/**
 * The metadata, or undefined if it is missing or not valid (the session is then left out of
 * lists). Synchronous: `list` reads a thousand of these, and one small synchronous read costs
 * a fraction of a round trip through the thread pool.
 */
export function readMeta(path: string): Meta | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'))
    return checkMeta(value) === undefined ? (value as Meta) : undefined
  } catch {
    // Missing (a create cut short by a crash) or damaged: not listable, still openable by id.
    return undefined
  }
}
