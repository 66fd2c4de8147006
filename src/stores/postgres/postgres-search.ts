/**
 * PostgreSQL full-text search, indexed lazily (decision 0068), as on SQLite: appends write
 * `events` only; each session's `search_indexed_through` says through which seq its messages
 * are in `message_text` (whose generated `tsvector` and GIN index serve the query). `search`
 * first brings every session whose log is ahead of its mark up to date, a chunk of rows per
 * statement, then queries: the results are those of an index written with every append
 * (docs/spec.md §9.1).
 */
import type pg from 'pg'
import type { BlobStore } from '../blob-store.js'
import { searchableTextOfLine } from '../search-text.js'
import type { SearchHit } from '../store.js'

/** Events read and indexed per statement. */
const CHUNK_ROWS = 500

/**
 * Indexes one chunk: $1 session, $2/$3 the seqs and texts of its messages, $4 the last seq
 * read, $5 the mark the rows were read after. Only while the mark is still $5 (another host
 * may have indexed meanwhile; the row lock makes it wait for that one and then see its mark):
 * the mark moves to $4 and the texts go in, replacing rows past the old mark that a version 3
 * host wrote with its appends.
 */
const INDEX_STATEMENT = `WITH mark AS (
   UPDATE sessions SET search_indexed_through = $4 WHERE id = $1 AND search_indexed_through = $5 RETURNING 1
 ), gone AS (
   DELETE FROM message_text WHERE session_id = $1 AND seq > $5 AND seq <= $4 AND NOT (seq = ANY($2::integer[]))
   AND EXISTS (SELECT 1 FROM mark)
 ), txt AS (
   INSERT INTO message_text (session_id, seq, text)
   SELECT $1, s, x FROM unnest($2::integer[], $3::text[]) AS t(s, x) WHERE EXISTS (SELECT 1 FROM mark)
   ON CONFLICT (session_id, seq) DO UPDATE SET text = EXCLUDED.text
 )
 SELECT EXISTS (SELECT 1 FROM mark) AS advanced`

export type PostgresSearchOptions = {
  readonly blobs: BlobStore
  /** Runs one statement, turning failures into store errors (the backend's `query`). */
  readonly query: <R extends pg.QueryResultRow>(
    what: string,
    text: string,
    values?: unknown[],
  ) => Promise<pg.QueryResult<R>>
  readonly describe: (id: string) => string
}

/** Indexes what appends left unindexed, then finds messages with every word. */
export function createPostgresSearch(
  options: PostgresSearchOptions,
): (words: readonly string[], limit: number) => Promise<SearchHit[]> {
  const { query, describe } = options

  /** Indexes session `id` after `mark`, chunk by chunk, until it reaches its log's end. */
  async function catchUpSession(id: string, mark: number): Promise<void> {
    for (;;) {
      const rows = (
        await query<{ seq: number; line: string }>(
          `cannot index ${describe(id)} for search`,
          'SELECT seq, line FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
          [id, mark, CHUNK_ROWS],
        )
      ).rows
      if (rows.length === 0) return
      const seqs: number[] = []
      const texts: string[] = []
      for (const row of rows) {
        const where = `${describe(id)} seq ${row.seq}`
        const text = await searchableTextOfLine(row.line, options.blobs, where)
        if (text === undefined) continue
        seqs.push(row.seq)
        // PostgreSQL text cannot hold NUL; search loses nothing by dropping it.
        texts.push(text.replaceAll('\0', ' '))
      }
      const through = rows[rows.length - 1]!.seq
      const result = await query<{ advanced: boolean }>(
        `cannot index ${describe(id)} for search`,
        INDEX_STATEMENT,
        [id, seqs, texts, through, mark],
      )
      if (!result.rows[0]?.advanced) {
        // Another host moved the mark (or deleted the session): go on from where it stands.
        const now = (
          await query<{ mark: number }>(
            `cannot index ${describe(id)} for search`,
            'SELECT search_indexed_through AS mark FROM sessions WHERE id = $1',
            [id],
          )
        ).rows[0]
        if (!now || now.mark <= mark) return
        mark = now.mark
        continue
      }
      if (rows.length < CHUNK_ROWS) return
      mark = through
    }
  }

  return async (words, limit) => {
    const behind = await query<{ id: string; mark: number }>(
      'cannot index sessions for search',
      'SELECT id, search_indexed_through AS mark FROM sessions WHERE search_indexed_through < event_count - 1',
    )
    for (const { id, mark } of behind.rows) await catchUpSession(id, mark)
    return (
      await query<SearchHit>(
        'cannot search sessions',
        `SELECT session_id AS "sessionId", seq,
                ts_headline('simple', text, q, 'StartSel="",StopSel="",MaxWords=12,MinWords=4') AS snippet
         FROM message_text, plainto_tsquery('simple', $1) AS q
         WHERE words @@ q ORDER BY ts_rank(words, q) DESC, session_id, seq LIMIT $2`,
        [words.join(' '), limit],
      )
    ).rows
  }
}
