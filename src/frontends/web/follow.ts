/**
 * Following a session this host does not write: the events another process (or host) appends
 * to the store, in order, without gaps or duplicates. A thin wrapper over `store.follow`
 * (docs/spec.md §9.1, decision 0063): PostgreSQL tells followers of each commit, memory of each
 * write; JSONL and SQLite are polled at the store's `followPollMs`.
 */
import type { SessionEvent, SessionStore } from '../../index.js'

/**
 * Yields the events with seq ≥ `fromSeq` as they reach the store, until `signal` aborts (then
 * it returns quietly). A failed read throws (the caller decides whether to follow again from
 * the seq it reached).
 */
export async function* followSession(
  store: SessionStore,
  id: string,
  fromSeq: number,
  signal: AbortSignal,
): AsyncGenerator<SessionEvent> {
  yield* store.follow(id, { fromSeq, signal })
}
