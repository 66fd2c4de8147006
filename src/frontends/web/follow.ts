/**
 * Following a session this host does not write: the events another process (or host) appends
 * to the store, in order, without gaps or duplicates.
 *
 * This is the one place the web host reads a log it does not hold. Today it polls
 * `store.read(id)`; when every store has `store.follow(id, { fromSeq })` (docs/spec.md §9.1)
 * this function becomes a thin wrapper over it.
 */
import type { SessionEvent, SessionStore } from '../../index.js'

export type FollowOptions = {
  /** How long to wait between two reads when nothing new arrived (default 250 ms). */
  readonly intervalMs?: number
}

/**
 * Yields batches of the events with seq ≥ `fromSeq` as they reach the store, until `signal`
 * aborts (then it returns quietly). A failed read throws (the caller decides whether to
 * follow again from the seq it reached).
 */
export async function* followSession(
  store: SessionStore,
  id: string,
  fromSeq: number,
  signal: AbortSignal,
  options: FollowOptions = {},
): AsyncGenerator<readonly SessionEvent[]> {
  const intervalMs = options.intervalMs ?? 250
  let next = fromSeq
  while (!signal.aborted) {
    const { events } = await store.read(id)
    if (signal.aborted) return
    if (events.length > next) {
      const batch = events.slice(next)
      next = events.length
      yield batch
      continue
    }
    await pause(intervalMs, signal)
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
