/**
 * Appends batches to a JSONL log: one `write` of the whole batch on an `O_APPEND` handle, then
 * one `fdatasync`. Metadata for `list` is refreshed (without a sync) at a `turn/end`, at most
 * once a second otherwise, and on close, so a durability point costs one sync, not two.
 */
import { open } from 'node:fs/promises'
import type { BatchWriter, WriterStart } from '../backend.js'
import type { StoreCounters } from '../store.js'
import { writeMeta } from './meta-file.js'

const META_INTERVAL_MS = 1000

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
  const handle = await open(logPath, 'a')
  let eventCount = start.eventCount
  let updatedAt = start.updatedAt
  let metaWrittenAt = 0
  let isMetaStale = true

  async function refreshMeta(): Promise<void> {
    await writeMeta(metaPath, { header: start.header, eventCount, updatedAt })
    metaWrittenAt = Date.now()
    isMetaStale = false
  }
  await refreshMeta()

  return {
    async write(events, lines) {
      const buffer = Buffer.from(`${lines.join('\n')}\n`, 'utf8')
      let offset = 0
      while (offset < buffer.length) {
        const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset)
        offset += bytesWritten
      }
      await handle.datasync()
      if (counters) {
        counters.syncs++
        counters.bytesWritten += buffer.length
      }
      const last = events.at(-1)
      if (last) {
        eventCount = last.seq + 1
        updatedAt = last.time
        isMetaStale = true
      }
      // At a turn's end a listing should be exact; otherwise once a second is enough.
      const endsTurn = events.some((event) => event.type === 'turn/end')
      if (endsTurn || Date.now() - metaWrittenAt >= META_INTERVAL_MS)
        await refreshMeta().catch(() => {
          // The batch is durable; stale metadata only makes `list` lag. Retried next time.
        })
    },
    async close() {
      try {
        if (isMetaStale) await refreshMeta()
      } finally {
        await handle.close()
      }
    },
  }
}
