/**
 * The real PostgreSQL server the store tests use: `RUDDER_TEST_POSTGRES_URL` (default
 * `postgres://postgres@127.0.0.1:5432/test`). Every test gets its own schema, `store_<random>`,
 * dropped afterwards. No server is a failure that says how to start one, never a skip.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { openStore, type SessionStore, type StoreOptions } from '../../../src/stores/index.js'

export const TEST_POSTGRES_URL =
  process.env.RUDDER_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test'

/** A fresh schema name for one test. */
export function freshSchema(): string {
  return `store_${randomBytes(6).toString('hex')}`
}

/** The store URL of `schema` on the test server. */
export function postgresUrl(schema: string, extra = ''): string {
  const url = new URL(TEST_POSTGRES_URL)
  url.searchParams.set('schema', schema)
  return `${url.toString()}${extra}`
}

/** Runs SQL on the test server as the admin would (dropping schemas, killing backends). */
export async function adminQuery(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  try {
    await client.connect()
  } catch (error) {
    throw new Error(
      `the store tests need PostgreSQL at ${TEST_POSTGRES_URL} (${(error as Error).message}); start it (Debian: \`apt-get install postgresql && pg_ctlcluster 15 main start\`, trust auth for 127.0.0.1) or point RUDDER_TEST_POSTGRES_URL at a server`,
    )
  }
  try {
    return await client.query(text, values)
  } finally {
    await client.end()
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
}

/**
 * A fresh schema for one test: its URL (`extra` appended), `open` for stores on it, and `done`,
 * which closes them and drops the schema.
 */
export function placeSchema(extra = '') {
  const schema = freshSchema()
  const url = postgresUrl(schema, extra)
  const stores: SessionStore[] = []
  const open = async (options: StoreOptions = {}) => {
    const store = await openStore(url, options)
    stores.push(store)
    return store
  }
  const done = async () => {
    for (const store of stores) await store.close().catch(() => {})
    await dropSchema(schema)
  }
  return { schema, url, open, done }
}
