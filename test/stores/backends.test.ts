/**
 * The backend contract below the store: record ranges and locations, the same for every
 * format (the store relies on them for fork cuts and error messages).
 */
import { describe, expect, it } from 'vitest'
import type { Backend } from '../../src/stores/backend.js'
import { createJsonlBackend } from '../../src/stores/jsonl/jsonl-backend.js'
import { createMemoryBackend } from '../../src/stores/memory/memory-backend.js'
import { createPostgresBackend } from '../../src/stores/postgres/postgres-backend.js'
import { createSqliteBackend } from '../../src/stores/sqlite/sqlite-backend.js'
import { parseStoreUrl } from '../../src/stores/store-url.js'
import { user } from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import { STORE_KINDS, type StoreKind, storeOf, tempDirectory, urlOf } from './support/stores.js'

async function backendOf(kind: StoreKind, directory: string): Promise<Backend> {
  switch (kind) {
    case 'memory':
      return createMemoryBackend()
    case 'jsonl':
      return createJsonlBackend(`${directory}/jsonl`, undefined)
    case 'sqlite':
      return createSqliteBackend(`${directory}/sessions.db`, undefined)
    case 'postgres': {
      const location = parseStoreUrl(urlOf('postgres', directory), {})
      if (location.kind !== 'postgres') throw new Error('not a PostgreSQL URL')
      return createPostgresBackend(location)
    }
  }
}

describe.each(STORE_KINDS)('the %s backend', (kind) => {
  it('reads a range of records, each locatable', async () => {
    const directory = tempDirectory()
    // Memory sessions live in their store object, so that kind is written through its backend.
    const backend = await backendOf(kind, directory)
    let id: string
    if (kind === 'memory') {
      const header = { id: 's1', formatVersion: 1, createdAt: 1 }
      const lease = await backend.create(header)
      const writer = await backend.openWriter('s1', { header, eventCount: 0, updatedAt: 1 })
      const lines = [0, 1, 2, 3].map((seq) => `{"seq":${seq}}`)
      await writer.write(
        lines.map((_, seq) => ({ seq, time: seq, type: 'x', data: null, ignorable: true })),
        lines,
      )
      await lease.release()
      id = 's1'
    } else {
      const store = await storeOf(kind, directory)
      const session = await store.create()
      appendAll(session, [user('a', 'c'), user('b', 'c'), user('c', 'c'), user('d', 'c')])
      await session.close()
      id = session.header.id
    }
    const records = []
    for await (const batch of backend.records(id, { fromSeq: 1, throughSeq: 2 }))
      records.push(...batch)
    expect(records.map((record) => record.kind)).toEqual(['line', 'line'])
    const wheres = records.map((record) => (record.kind === 'line' ? record.where : -1))
    expect(JSON.parse((records[0] as { text: string }).text).seq).toBe(1)
    expect(backend.locate(id, wheres[1]!)).toMatch(kind === 'jsonl' ? /events\.jsonl:4$/ : /seq 2$/)
    await backend.close()
  })
})
