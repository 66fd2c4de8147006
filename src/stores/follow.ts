/**
 * Following a session without its lease (docs/spec.md §9.1, decision 0063): the log is read
 * and checked once, then every new record is decoded, checked against the same invariant
 * checker and yielded in order. A backend that can tell of writes (`watch`) wakes the
 * follower at once; the others are polled. Either way a wake-up only triggers a read from the
 * next seq, so a lost or duplicated notice can neither skip nor repeat an event.
 */
import { deepFreeze, type SessionEvent } from '../core/index.js'
import type { Backend } from './backend.js'
import { decodeLine, resolveBlobs } from './codec.js'
import { createEventCheck, locate, repairHint } from './event-check.js'
import { loadEvents } from './log-loader.js'

export type FollowLogOptions = {
  readonly fromSeq: number
  /** Aborted by the caller or by the store closing. */
  readonly signal: AbortSignal
  /** Longest wait between two reads (a backend that watches still reads this often). */
  readonly pollMs: number
}

export async function* followLog(
  backend: Backend,
  id: string,
  options: FollowLogOptions,
): AsyncGenerator<SessionEvent> {
  const { signal } = options
  const hint = repairHint(id)
  let dirty = false
  let wake: (() => void) | undefined
  // Watch before the first read, so a write between that read and the wait is not missed.
  const unwatch = await backend.watch?.(id, () => {
    dirty = true
    wake?.()
  })
  try {
    const loaded = await loadEvents(backend, id)
    const check = createEventCheck(loaded.checker)
    let next = loaded.events.length
    for (const event of loaded.events.slice(options.fromSeq)) {
      if (signal.aborted) return
      yield event
    }
    for (;;) {
      if (!dirty) await pause(options.pollMs, signal, (resume) => (wake = resume))
      wake = undefined
      if (signal.aborted) return
      dirty = false
      const batch: SessionEvent[] = []
      reading: for await (const records of backend.records(id, { fromSeq: next })) {
        for (const record of records) {
          // A line being written right now: read it whole next time.
          if (record.kind === 'torn') break reading
          try {
            const line = decodeLine(record.text)
            if (line.blobs)
              await resolveBlobs(line, backend.blobs, backend.locate(id, record.where), hint)
            batch.push(deepFreeze(check.accept(line)))
          } catch (error) {
            throw locate(error, backend.locate(id, record.where), hint)
          }
        }
      }
      next += batch.length
      for (const event of batch) {
        if (signal.aborted) return
        if (event.seq >= options.fromSeq) yield event
      }
    }
  } finally {
    await unwatch?.()
  }
}

function pause(
  ms: number,
  signal: AbortSignal,
  onWake: (resume: () => void) => void,
): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
    onWake(done)
  })
}
