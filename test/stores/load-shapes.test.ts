/**
 * What loading keeps of a log once its session is gone (decision 0170): a read of covered
 * events from the start keeps copies of its first events with every string emptied, frozen, as
 * specimens of their shapes (so V8 keeps the optimised load path), and nothing of the content.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { SessionEvent } from '../../src/core/index.js'
import type { Backend, RecordBatch } from '../../src/stores/backend.js'
import { heldShapeSpecimens } from '../../src/stores/log-loader.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import type { SessionStore, StoreOptions } from '../../src/stores/store.js'
import { appendAll, closedTurn } from './support/events.js'
import { backendOf, FILE_STORE_KINDS, type StoreKind, tempDirectory } from './support/stores.js'

/** Every close writes a checkpoint, however small the log. */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }

const stores: SessionStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

/** A store whose backend hands records on in batches of at most `size`. */
async function storeInBatchesOf(kind: StoreKind, size: number): Promise<SessionStore> {
  const inner = await backendOf(kind, tempDirectory())
  const backend: Backend = {
    ...inner,
    async *records(id, range) {
      for await (const batch of inner.records(id, range))
        for (let start = 0; start < batch.length; start += size)
          yield batch.slice(start, start + size) as RecordBatch
    },
  }
  const store = createSessionStore(backend, EVERY_CLOSE)
  stores.push(store)
  return store
}

/** A closed session of `turns` turns (12 events each) and its events, checkpointed at close. */
async function written(store: SessionStore, turns: number, prompt: string) {
  const session = await store.create()
  for (let turn = 1; turn <= turns; turn++) appendAll(session, closedTurn(turn, prompt))
  const events = [...session.residentEvents]
  await session.close()
  return { id: session.header.id, events }
}

/** `value` with every string emptied, keys in their order. */
function emptied(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, item) => (typeof item === 'string' ? '' : item)))
}

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value)
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) strings(item, out)
  return out
}

function isDeeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen)
}

async function loadFromCheckpoint(store: SessionStore, id: string): Promise<void> {
  const session = await store.open(id)
  expect(session.residentFrom).toBeGreaterThan(0)
  await session.loadProjection()
  await session.close()
}

describe.each(FILE_STORE_KINDS)('shape specimens of a log loaded in the %s store', (kind) => {
  it('keeps emptied, frozen copies of the first 64 events, gathered across batches', async () => {
    const store = await storeInBatchesOf(kind, 7)
    const { id, events } = await written(store, 8, 'a secret prompt')
    await loadFromCheckpoint(store, id)
    const specimens = heldShapeSpecimens()
    expect(specimens).toEqual(events.slice(0, 64).map(emptied))
    expect(strings(specimens).every((text) => text === '')).toBe(true)
    expect(specimens.every(isDeeplyFrozen)).toBe(true)
  })

  it('replaces the specimens of an earlier log with those of the next one read', async () => {
    const store = await storeInBatchesOf(kind, 1000)
    const first = await written(store, 8, 'first')
    const second = await written(store, 2, 'second')
    await loadFromCheckpoint(store, first.id)
    await loadFromCheckpoint(store, second.id)
    const specimens = heldShapeSpecimens() as SessionEvent[]
    expect(specimens).toEqual(second.events.map(emptied))
    expect(specimens).toHaveLength(24)
  })
})

describe.each(FILE_STORE_KINDS)(
  'shape specimens of a log checked in full in the %s store',
  (kind) => {
    it('keeps emptied copies of the first events of a log opened without a checkpoint', async () => {
      const store = createSessionStore(await backendOf(kind, tempDirectory()), {
        checkpointPolicy: {
          minCharacters: Infinity,
          everyCharacters: Infinity,
          everyEvents: Infinity,
        },
      })
      stores.push(store)
      const { id, events } = await written(store, 3, 'checked in full')
      const session = await store.open(id)
      expect(session.residentFrom).toBe(0)
      await session.close()
      expect(heldShapeSpecimens()).toEqual(events.map(emptied))
    })
  },
)
