/**
 * The SQLite schema (docs/spec.md §9.2), versioned with `PRAGMA user_version`. Events are stored as
 * the same lines as JSONL (codec.ts), one row per event keyed `(session_id, seq)`; `sessions`
 * holds headers and listing metadata; `message_text` + FTS5 `message_fts` serve search, filled
 * by search itself up to each session's `search_indexed_through` (sqlite-search.ts).
 */
import type Database from 'better-sqlite3'
import { RudderError } from '../../core/index.js'

/** The schema version this build writes and reads. */
export const SCHEMA_VERSION = 3

const SCHEMA = `
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  header TEXT NOT NULL,
  cwd TEXT,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  event_count INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, id DESC);
CREATE TABLE events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  line TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) STRICT;
CREATE TABLE leases (
  session_id TEXT PRIMARY KEY,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  token TEXT NOT NULL,
  acquired_at REAL NOT NULL
) STRICT;
CREATE TABLE message_text (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL
) STRICT;
CREATE INDEX message_text_by_session ON message_text (session_id, seq);
CREATE VIRTUAL TABLE message_fts USING fts5 (text, content = 'message_text', content_rowid = 'id');
`

/**
 * Migration `i` takes a database from version `i + 1` to `i + 2` (version 1 is `SCHEMA`).
 * Append only: a released migration is never edited, since databases in the field have run it.
 */
const MIGRATIONS: readonly string[] = [
  // 1 → 2: projection checkpoints beside the logs (decision 0148).
  `
CREATE TABLE checkpoints (
  session_id TEXT PRIMARY KEY,
  body TEXT NOT NULL
) STRICT;
`,
  // 2 → 3: search indexes lazily (decision 0068). Through this seq a session's messages are
  // in `message_text` and `message_fts`; version 2 indexed every batch as it committed, so
  // every event counted is indexed. A version 2 rudder refuses the file from now on; one that
  // had it open already may still index its own appends, which search drops and redoes (rows
  // past the mark are never trusted), so nothing is found twice.
  `
ALTER TABLE sessions ADD COLUMN search_indexed_through INTEGER NOT NULL DEFAULT -1;
UPDATE sessions SET search_indexed_through = event_count - 1;
`,
]

/**
 * Sets the connection up (WAL, full sync at commit, a busy timeout for short write locks
 * held by other processes) and creates or checks the schema. Throws `FORMAT_TOO_NEW` for a
 * database of a newer rudder.
 */
export function prepareDatabase(db: Database.Database, path: string): void {
  db.pragma('journal_mode = WAL')
  // FULL: a commit is durable when it returns (decision 0013). Appends commit unsynced and
  // sync the WAL off the main thread instead, just as durably (wal-sync.ts, decision 0146).
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 10000')
  const version = db.pragma('user_version', { simple: true }) as number
  if (version === SCHEMA_VERSION) return
  if (version > SCHEMA_VERSION)
    throw new RudderError(
      'FORMAT_TOO_NEW',
      `${path} was written by a newer rudder (database schema ${version}; this rudder reads ${SCHEMA_VERSION}); upgrade rudder to use it`,
    )
  // Two processes may create or migrate the schema at once: the immediate transaction
  // serializes them and the second sees the version the first set.
  db.transaction(() => {
    let current = db.pragma('user_version', { simple: true }) as number
    if (current === 0) {
      db.exec(SCHEMA)
      current = 1
    }
    for (; current < SCHEMA_VERSION; current++) db.exec(MIGRATIONS[current - 1]!)
    db.pragma(`user_version = ${SCHEMA_VERSION}`)
  }).immediate()
}
