/**
 * The PostgreSQL schema (docs/spec.md §9.2, decision 0060), versioned in `schema_version` and
 * migrated forward by rudder. Events are the same text lines as JSONL and SQLite (codec.ts), one
 * row per event keyed `(session_id, seq)` (no foreign key; a trigger deletes a session's events
 * with it, decision 0164); `sessions` holds headers and listing metadata;
 * `message_text` with a generated `tsvector` serves search, filled by search itself up to each
 * session's `search_indexed_through` (postgres-search.ts); `blobs` holds large payloads;
 * `leases` holds one writer per session with a heartbeat (decision 0061).
 */
import type pg from 'pg'
import { RudderError } from '../../core/index.js'

/**
 * Migration `i` takes a database from version `i` to `i + 1`. Append only: a released
 * migration is never edited, since databases in the field have run it.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE sessions (
    id text PRIMARY KEY,
    header text NOT NULL,
    cwd text,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    event_count integer NOT NULL
  );
  CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);
  CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, id DESC);
  CREATE TABLE events (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    line text NOT NULL,
    PRIMARY KEY (session_id, seq)
  );
  CREATE TABLE message_text (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    text text NOT NULL,
    words tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
    PRIMARY KEY (session_id, seq)
  );
  CREATE INDEX message_text_words ON message_text USING gin (words);
  CREATE TABLE blobs (
    sha256 text PRIMARY KEY,
    bytes integer NOT NULL,
    content bytea NOT NULL
  );
  CREATE TABLE leases (
    session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    host text NOT NULL,
    pid integer NOT NULL,
    token text NOT NULL,
    heartbeat_at timestamptz NOT NULL
  );
  `,
  // 1 → 2: when a blob was last written or reused, so a sweep spares what a writer may be
  // about to refer to (docs/decisions/0134).
  `
  ALTER TABLE blobs ADD COLUMN touched_at timestamptz NOT NULL DEFAULT now();
  `,
  // 2 → 3: projection checkpoints beside the logs (decision 0148).
  `
  CREATE TABLE checkpoints (
    session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    body text NOT NULL
  );
  `,
  // 3 → 4: search indexes lazily (decision 0068). Through this seq a session's messages are in
  // `message_text`; version 3 wrote them with every batch, so every event counted is indexed.
  // A host still running version 3 may index its own appends; search replaces rows past the
  // mark, so nothing is found twice.
  `
  ALTER TABLE sessions ADD COLUMN search_indexed_through integer NOT NULL DEFAULT -1;
  UPDATE sessions SET search_indexed_through = event_count - 1;
  `,
  // 4 → 5: events keep no foreign key (decision 0164). Its check ran once per inserted row, a
  // quarter to a third of the server's CPU for an append; a batch is inserted only under the session's
  // lease row (which references the session), or with its session in one transaction (fork).
  // Deleting a session deletes its events here, from any rudder: first the lease row is locked,
  // so a batch in flight under it commits first and is deleted too.
  `
  ALTER TABLE events DROP CONSTRAINT IF EXISTS events_session_id_fkey;
  CREATE OR REPLACE FUNCTION delete_session_events() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
  BEGIN
    PERFORM 1 FROM leases WHERE session_id = OLD.id FOR UPDATE;
    DELETE FROM events WHERE session_id = OLD.id;
    RETURN OLD;
  END
  $$;
  DROP TRIGGER IF EXISTS sessions_delete_events ON sessions;
  CREATE TRIGGER sessions_delete_events BEFORE DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION delete_session_events();
  `,
]

/** The schema version this build writes and reads. */
export const PG_SCHEMA_VERSION = MIGRATIONS.length

/**
 * Creates the schema or migrates it forward, once per database even with many hosts starting
 * at once (a transaction-scoped advisory lock serializes them). Throws `FORMAT_TOO_NEW` for a
 * database a newer rudder migrated.
 */
export async function prepareSchema(
  client: pg.ClientBase,
  schema: string,
  where: string,
): Promise<void> {
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rudder schema ${schema}`])
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_version (version integer NOT NULL)`,
    )
    const rows = (
      await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_version`)
    ).rows
    let version = rows[0]?.version ?? 0
    if (version > PG_SCHEMA_VERSION)
      throw new RudderError(
        'FORMAT_TOO_NEW',
        `${where} was migrated by a newer rudder (schema ${version}; this rudder reads ${PG_SCHEMA_VERSION}); upgrade rudder to use it`,
      )
    if (rows.length === 0) await client.query(`INSERT INTO ${schema}.schema_version VALUES (0)`)
    for (; version < PG_SCHEMA_VERSION; version++) {
      await client.query(`SET LOCAL search_path TO ${schema}`)
      await client.query(MIGRATIONS[version]!)
      await client.query(`UPDATE ${schema}.schema_version SET version = $1`, [version + 1])
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      // The connection is gone; the original failure is the one to report.
    })
    throw error
  }
}
