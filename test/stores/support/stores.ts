/**
 * Store fixtures for tests: a temp directory per test (removed afterwards) and a URL per kind
 * of store, so one suite can run against memory, JSONL, SQLite and PostgreSQL (a schema per
 * test directory on the test server, dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import type { Backend } from '../../../src/stores/backend.js'
import type { SessionStore, StoreOptions } from '../../../src/stores/index.js'
import { openStore } from '../../../src/stores/index.js'
import { createJsonlBackend } from '../../../src/stores/jsonl/jsonl-backend.js'
import { createMemoryBackend } from '../../../src/stores/memory/memory-backend.js'
import { createPostgresBackend } from '../../../src/stores/postgres/postgres-backend.js'
import { createSqliteBackend } from '../../../src/stores/sqlite/sqlite-backend.js'
import { type PostgresLocation, parseStoreUrl } from '../../../src/stores/store-url.js'
import { dropSchema, freshSchema, postgresUrl } from './postgres.js'

export type StoreKind = 'memory' | 'jsonl' | 'sqlite' | 'postgres'
export const STORE_KINDS: readonly StoreKind[] = ['memory', 'jsonl', 'sqlite', 'postgres']
export const FILE_STORE_KINDS: readonly StoreKind[] = ['jsonl', 'sqlite']

/** A fresh temp directory for the current test, removed after it. Call inside a test. */
export function tempDirectory(): string {
  const path = mkdtempSync(join(tmpdir(), 'rudder-stores-'))
  cleanups.push(() => rmSync(path, { recursive: true, force: true }))
  return path
}

const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  // Stores close before their directories are removed.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Schemas made for temp directories, by directory. */
const schemas = new Map<string, string>()

export function urlOf(kind: StoreKind, directory: string): string {
  switch (kind) {
    case 'memory':
      return 'memory:'
    case 'jsonl':
      return `jsonl:${join(directory, 'jsonl')}`
    case 'sqlite':
      return `sqlite:${join(directory, 'sessions.db')}`
    case 'postgres': {
      let schema = schemas.get(directory)
      if (schema === undefined) {
        schema = freshSchema()
        schemas.set(directory, schema)
        const made = schema
        // Registered before the store's own close, so it runs after it (cleanups run reversed).
        cleanups.push(async () => {
          schemas.delete(directory)
          await dropSchema(made)
        })
      }
      return postgresUrl(schema)
    }
  }
}

/** Opens a store of `kind` in `directory`; it is closed after the test. */
export async function storeOf(
  kind: StoreKind,
  directory: string,
  options: StoreOptions = {},
): Promise<SessionStore> {
  const store = await openStore(urlOf(kind, directory), options)
  cleanups.push(() => store.close())
  return store
}

/**
 * A second handle on the same stored sessions, as another process would open them. A memory
 * store lives only in its own object, so it is its own second handle.
 */
export async function secondHandle(
  kind: StoreKind,
  directory: string,
  first: SessionStore,
  options: StoreOptions = {},
): Promise<SessionStore> {
  return kind === 'memory' ? first : storeOf(kind, directory, options)
}

/** A clock that ticks one millisecond per reading, from a fixed start. */
export function tickingClock(start = 1_700_000_000_000): () => number {
  let now = start
  return () => now++
}

/** The backend of a store of `kind` in `directory`, for a test that reaches it directly. */
export async function backendOf(kind: StoreKind, directory: string): Promise<Backend> {
  switch (kind) {
    case 'memory':
      return createMemoryBackend()
    case 'jsonl':
      return createJsonlBackend(join(directory, 'jsonl'), undefined)
    case 'sqlite':
      return createSqliteBackend(join(directory, 'sessions.db'), undefined)
    case 'postgres':
      return createPostgresBackend(
        parseStoreUrl(urlOf('postgres', directory), process.env) as PostgresLocation,
      )
  }
}
