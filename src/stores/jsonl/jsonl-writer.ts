/**
 * Appends batches to a JSONL log: one `write` of the whole batch on an `O_APPEND | O_DSYNC`
 * handle, which returns once the bytes are durable, as a `write` then an `fdatasync` would, in
 * one trip through the thread pool instead of two (where the platform has no `O_DSYNC`, it is
 * exactly that `write` and `fdatasync`). Metadata for `list` is refreshed (without a sync) at
 * most once a second, trailing the last write, and on close, so a durability point costs one
 * sync and nothing more.
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import type { BatchWriter, WriterStart } from '../backend.js'
import { crc32 } from '../crc32.js'
import type { StoreCounters } from '../store.js'
import { writeMeta } from './meta-file.js'

const META_INTERVAL_MS = 1000

/** Open flags for the log: every write is synced before it returns, when the platform can. */
const SYNCED_APPEND =
  constants.O_DSYNC === undefined
    ? undefined
    : constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC

export async function openJsonlWriter(options: {
  readonly logPath: string
  readonly metaPath: string
  readonly start: WriterStart
  readonly counters: StoreCounters | undefined
}): Promise<BatchWriter> {
  const { logPath, metaPath, start, counters } = options
  if (start.truncateAt !== undefined) {
    // Cut a torn tail before anything is appended after it, durably.
    const handle = await open(logPath, 'r+')
    try {
      await handle.truncate(start.truncateAt)
      await handle.datasync()
      if (counters) counters.syncs++
    } finally {
      await handle.close()
    }
  }
  const handle = await open(logPath, SYNCED_APPEND ?? 'a')
  // Byte offsets where each event's line ends, so a fork can copy a prefix without reading it.
  let offset = (await handle.stat()).size
  // Without positions, the file's end is where its last event ends.
  const firstSeq = start.positions ? (start.positionsFrom ?? 0) : Math.max(0, start.eventCount - 1)
  const positions: number[] = start.positions
    ? [...start.positions]
    : start.eventCount > 0
      ? [offset]
      : []
  let eventCount = start.eventCount
  let updatedAt = start.updatedAt
  let metaWrittenAt = 0
  let isMetaStale = true

  let metaTimer: ReturnType<typeof setTimeout> | undefined
  /** Refreshes metadata at most once a second, trailing, so a durability point costs one sync. */
  function scheduleMeta(): void {
    isMetaStale = true
    if (metaTimer !== undefined) return
    const wait = Math.max(0, META_INTERVAL_MS - (Date.now() - metaWrittenAt))
    metaTimer = setTimeout(() => {
      metaTimer = undefined
      refreshMeta().catch(() => {
        // Stale metadata only makes `list` lag; the next write or close tries again.
        isMetaStale = true
      })
    }, wait)
    // Metadata is a cache: it must not keep the process alive.
    metaTimer.unref()
  }

  // Metadata writes run one after another, each with the values current when it starts, so a
  // slow earlier write can never land after (and undo) a later one.
  let metaChain: Promise<void> = Promise.resolve()
  function refreshMeta(): Promise<void> {
    const run = async () => {
      isMetaStale = false
      await writeMeta(metaPath, { header: start.header, eventCount, updatedAt })
      metaWrittenAt = Date.now()
    }
    const next = metaChain.then(run, run)
    metaChain = next.catch(() => {
      // Reported to this write's caller below; the chain itself must keep going.
    })
    return next
  }
  if (start.isListed) {
    isMetaStale = false
    metaWrittenAt = Date.now()
  } else await refreshMeta()

  return {
    async write(events, lines, checksum) {
      const buffer = Buffer.from(`${lines.join('\n')}\n`, 'utf8')
      // The checkpoint's checksum (`bytes` form) over the very bytes written: encoding the
      // lines again to sum them cost about as much as the CRC itself (decision 0167).
      const summed = checksum === undefined ? undefined : crc32(buffer, checksum)
      let written = 0
      while (written < buffer.length) {
        const { bytesWritten } = await handle.write(buffer, written, buffer.length - written)
        written += bytesWritten
      }
      if (SYNCED_APPEND === undefined) await handle.datasync()
      if (counters) {
        counters.syncs++
        counters.bytesWritten += buffer.length
      }
      // A UTF-16 code unit is at least one UTF-8 byte, and exactly one only for ASCII: when the
      // batch has as many bytes as characters, every line does, and none is measured again.
      let characters = lines.length
      for (const line of lines) characters += line.length
      const isAscii = characters === buffer.length
      for (const line of lines) {
        offset += (isAscii ? line.length : Buffer.byteLength(line, 'utf8')) + 1
        positions.push(offset)
      }
      const last = events.at(-1)
      if (last) {
        eventCount = last.seq + 1
        updatedAt = last.time
        scheduleMeta()
      }
      return summed
    },
    positionOf: (seq) => (seq >= firstSeq ? positions[seq - firstSeq] : undefined),
    async close() {
      if (metaTimer !== undefined) clearTimeout(metaTimer)
      metaTimer = undefined
      try {
        if (isMetaStale) await refreshMeta()
      } finally {
        await handle.close()
      }
    },
  }
}
