/**
 * Search by scanning every log (JSONL and memory; SQLite has FTS5). Slower than an index: it
 * reads each session's events, newest session first, until `limit` hits are found. Damaged
 * lines are skipped here rather than failing the whole search.
 */
import type { SessionEvent } from '../core/index.js'
import type { Backend } from './backend.js'
import { matchesAll, searchableText, snippetOf } from './search-text.js'
import type { SearchHit } from './store.js'

export async function scanSearch(
  backend: Backend,
  words: readonly string[],
  limit: number,
): Promise<SearchHit[]> {
  const hits: SearchHit[] = []
  const sessions = await backend.list({ limit: Number.MAX_SAFE_INTEGER })
  for (const session of sessions) {
    for await (const batch of backend.records(session.id)) {
      for (const record of batch) {
        if (record.kind !== 'line') continue
        let event: SessionEvent
        try {
          event = JSON.parse(record.text) as SessionEvent
        } catch {
          // A damaged line: open() reports it; search just has nothing to find there.
          continue
        }
        const text = searchableText(event)
        if (text === undefined || !matchesAll(text, words)) continue
        hits.push({ sessionId: session.id, seq: event.seq, snippet: snippetOf(text, words) })
        if (hits.length >= limit) return hits
      }
    }
  }
  return hits
}
