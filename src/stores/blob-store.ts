/**
 * Content-addressed files for payloads too large for one log line or row (B13): a file per
 * distinct content, named by its SHA-256, written once and never changed. Logs refer to blobs
 * by hash, so a fork or an import into the same store shares them for free. `sweep` removes
 * the blobs no log refers to any more (after `rudder sessions delete`); a `put` that finds its
 * blob already there touches it, and the sweep spares what was touched lately, so a writer
 * reusing a blob is never left pointing at a removed file (docs/decisions/0134).
 */
import { createHash, randomUUID } from 'node:crypto'
import { mkdir, open, readdir, rename, stat, unlink, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { LogCorruptError, StoreError } from '../core/index.js'
import { syncDirectory } from './fs-sync.js'
import type { StoreCounters } from './store.js'
import { decodeUtf8 } from './utf8-slices.js'

/** Where a blob lives and how large it is. */
export type BlobAddress = { readonly sha256: string; readonly bytes: number }

/** A directory of content-addressed blobs. */
export interface BlobStore {
  /** Writes `content` (UTF-8) durably unless a blob with the same hash exists. */
  put(content: string): Promise<BlobAddress>
  /**
   * Reads a blob back as a string. Throws `LogCorruptError` at `location` if it is missing or
   * the wrong size, and the reason of `signal` if it aborts first. A large blob is decoded a
   * slice per event-loop turn (`decodeUtf8`).
   */
  get(address: BlobAddress, location: string, signal?: AbortSignal): Promise<string>
  /**
   * Reads a blob's bytes, undecoded, with the errors of `get` (missing, wrong size), so that
   * a loader can leave the text to be made on first use (src/stores/lazy-text.ts).
   */
  read(address: BlobAddress, location: string): Promise<Buffer>
  /**
   * Removes every blob whose hash is not in `referenced` and that no `put` touched in the last
   * `graceMs`. Returns how many were removed.
   */
  sweep(referenced: ReadonlySet<string>, graceMs: number): Promise<number>
}

/** Opens (creating lazily) the blob directory `root`. */
export function createBlobStore(root: string, counters: StoreCounters | undefined): BlobStore {
  const pathOf = (sha256: string) => join(root, sha256.slice(0, 2), sha256)
  const reading = createLimit(READS_IN_FLIGHT)

  async function exists(path: string, bytes: number): Promise<boolean> {
    try {
      return (await stat(path)).size === bytes
    } catch {
      // Missing (or unreadable, which the write below will report): write it.
      return false
    }
  }

  async function read(address: BlobAddress, location: string): Promise<Buffer> {
    const path = pathOf(address.sha256)
    try {
      return await reading(() => readExactly(path, address.bytes))
    } catch (error) {
      if (error instanceof WrongSize)
        throw new LogCorruptError(
          location,
          `the large payload ${path} has ${error.size} bytes but the event expects ${address.bytes}; restore the file, or run \`rudder sessions repair\` to salvage the events before it`,
        )
      throw new LogCorruptError(
        location,
        `the event refers to the large payload ${path}, which cannot be read (${String(error)}); restore the file, or run \`rudder sessions repair\` to salvage the events before it`,
        { cause: error },
      )
    }
  }

  return {
    async put(content) {
      const buffer = Buffer.from(content, 'utf8')
      const sha256 = createHash('sha256').update(buffer).digest('hex')
      const address = { sha256, bytes: buffer.length }
      const path = pathOf(sha256)
      if (await exists(path, buffer.length)) {
        // Marks the blob as in use for a concurrent sweep; gone meanwhile: write it again.
        const now = new Date()
        const isTouched = await utimes(path, now, now).then(
          () => true,
          () => false,
        )
        if (isTouched) return address
      }
      const directory = join(root, sha256.slice(0, 2))
      const temporary = `${path}.${process.pid}-${randomUUID()}.tmp`
      try {
        await mkdir(directory, { recursive: true })
        const handle = await open(temporary, 'wx')
        try {
          await handle.writeFile(buffer)
          await handle.datasync()
          if (counters) counters.syncs++
        } finally {
          await handle.close()
        }
        // The rename publishes the blob only once its bytes are durable, so a reader never
        // sees a partial blob under its final name.
        await rename(temporary, path)
        await syncDirectory(directory, counters)
        if (counters) counters.bytesWritten += buffer.length
      } catch (error) {
        await unlink(temporary).catch(() => {
          // Already renamed or never created: nothing to clean up.
        })
        throw new StoreError(
          `could not write a large payload (${buffer.length} bytes) to ${path}: ${String(error)}; check that the directory is writable and the disk has space`,
          { cause: error },
        )
      }
      return address
    },

    async sweep(referenced, graceMs) {
      let removed = 0
      let prefixes: string[]
      try {
        prefixes = await readdir(root)
      } catch {
        // No blob directory: nothing was ever stored.
        return 0
      }
      for (const prefix of prefixes) {
        let names: string[]
        try {
          names = await readdir(join(root, prefix))
        } catch {
          continue
        }
        for (const name of names) {
          if (!/^[0-9a-f]{64}$/.test(name) || referenced.has(name)) continue
          const path = join(root, prefix, name)
          // Moved aside first: a put touching it now either sees it gone (and writes it again)
          // or touched it before the move, which the age check below sees.
          const aside = `${path}.${process.pid}-${randomUUID()}.sweep`
          try {
            await rename(path, aside)
          } catch {
            continue
          }
          const { mtimeMs } = await stat(aside)
          if (Date.now() - mtimeMs < graceMs) {
            await rename(aside, path)
            continue
          }
          await unlink(aside)
          removed++
        }
      }
      return removed
    },

    get: async (address, location, signal) => decodeUtf8(await read(address, location), { signal }),
    read,
  }
}

/**
 * Blob reads in flight at once, per store. A loader starts the reads of a batch's blobs
 * together (log-loader.ts), and an event may refer to thousands: each read holds a file
 * descriptor until it is done, and more than the thread pool's four run no faster.
 */
const READS_IN_FLIGHT = 8

/** Runs the tasks given to it at most `most` at a time, the others in the order given. */
function createLimit(most: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: (() => void)[] = []
  return async (task) => {
    // A slot freed by a finished task is handed to the first waiting one, `running` unchanged.
    if (running < most) running++
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else running--
    }
  }
}

/** A blob whose file is not the size its reference gives. */
class WrongSize extends Error {
  constructor(readonly size: number) {
    super(`${size} bytes`)
  }
}

/**
 * The bytes of `path`, which must be `bytes` long (else `WrongSize`). The size is known from
 * the reference, so one buffer of that size is filled, by one read as a rule, instead of by
 * `readFile`'s reads of 512 KiB, each a trip through the thread pool. A blob is never changed
 * in place (a put renames a new file over it), so the size `fstat` gives is that of what the
 * handle reads; a read that ends short all the same is reported with the size it found.
 */
async function readExactly(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r')
  try {
    const { size } = await handle.stat()
    if (size !== bytes) throw new WrongSize(size)
    const buffer = Buffer.allocUnsafe(bytes)
    let filled = 0
    while (filled < bytes) {
      const { bytesRead } = await handle.read(buffer, filled, bytes - filled, filled)
      if (bytesRead === 0) throw new WrongSize(filled)
      filled += bytesRead
    }
    return buffer
  } finally {
    await handle.close()
  }
}
