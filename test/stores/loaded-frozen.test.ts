/**
 * A session opened from its checkpoint reads its covered events without freezing them and
 * freezes them when they leave it (decision 0175): in every file store, each way out gives
 * deeply frozen values, and a covered record that no longer parses is still refused, then
 * reported at its line by the full check of the next open.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogCorruptError, type SessionEvent } from '../../src/index.js'
import type { StoreOptions } from '../../src/stores/store.js'
import { compaction } from '../support/log-builder.js'
import { appendAll, closedTurn } from './support/events.js'
import { FILE_STORE_KINDS, storeOf, tempDirectory } from './support/stores.js'

/** Every close writes a checkpoint, however small the log. */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }

/** The path of the first object in `value` that is not frozen, or undefined. */
function firstUnfrozen(value: unknown, path = '$'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (!Object.isFrozen(value)) return path
  for (const [key, item] of Object.entries(value)) {
    const found = firstUnfrozen(item, `${path}.${key}`)
    if (found) return found
  }
  return undefined
}

const unfrozenIn = (values: readonly unknown[]) =>
  values.map((value) => firstUnfrozen(value)).filter(Boolean)

async function written(kind: (typeof FILE_STORE_KINDS)[number], directory = tempDirectory()) {
  const store = await storeOf(kind, directory, EVERY_CLOSE)
  const session = await store.create()
  for (let turn = 1; turn <= 3; turn++) appendAll(session, closedTurn(turn, `prompt ${turn}`))
  // A compaction after the checkpoint's events would be read at open; one before it is loaded.
  appendAll(session, [compaction(12)])
  for (let turn = 4; turn <= 5; turn++) appendAll(session, closedTurn(turn, `prompt ${turn}`))
  const events = [...session.residentEvents]
  await session.close()
  return { store, directory, id: session.header.id, events }
}

describe.each(FILE_STORE_KINDS)('a session loaded from its checkpoint in the %s store', (kind) => {
  it('gives out only deeply frozen events and messages, whichever way they leave', async () => {
    const { store, id, events } = await written(kind)
    const session = await store.open(id)
    expect(session.residentFrom).toBe(events.length)
    const before: SessionEvent[] = []
    for await (const batch of session.readEvents()) before.push(...batch)
    expect(before).toEqual(events)
    expect(unfrozenIn(before)).toEqual([])
    await session.loadProjection()
    expect(session.residentFrom).toBeLessThan(events.length)
    expect(unfrozenIn([...session.messages()])).toEqual([])
    expect(firstUnfrozen(session.requestHeader())).toBeUndefined()
    const at = events.map((event) => session.eventAt(event.seq)).filter(Boolean)
    expect(at.length).toBe(events.length - session.residentFrom)
    expect(unfrozenIn(at)).toEqual([])
    const after: SessionEvent[] = []
    for await (const batch of session.readEvents()) after.push(...batch)
    expect(after).toEqual(events)
    expect(unfrozenIn(after)).toEqual([])
    expect(unfrozenIn([...session.residentEvents])).toEqual([])
    await session.close()
  })

  it('freezes its resident events when they are first asked for as a whole', async () => {
    const { store, id, events } = await written(kind)
    const session = await store.open(id)
    await session.loadProjection()
    expect(session.residentEvents).toEqual(events.slice(session.residentFrom))
    expect(unfrozenIn([...session.residentEvents])).toEqual([])
    await session.close()
  })
})

describe('a covered JSONL line that no longer parses', () => {
  it('is refused when read, and reported at its line by the next open', async () => {
    const { store, directory, id } = await written('jsonl')
    const path = join(directory, 'jsonl', 'sessions', id, 'events.jsonl')
    const lines = readFileSync(path, 'utf8').split('\n')
    // Seq 4 is line 6 (the header is line 1); same length, so its position still matches.
    lines[5] = `${lines[5]!.slice(0, -1)}!`
    writeFileSync(path, lines.join('\n'))
    const opened = await store.open(id)
    await expect(opened.loadProjection()).rejects.toBeInstanceOf(LogCorruptError)
    await opened.close()
    const attempt = store.open(id)
    await expect(attempt).rejects.toBeInstanceOf(LogCorruptError)
    await expect(attempt).rejects.toMatchObject({ location: `${path}:6` })
  })
})

/** No checkpoint is ever written: every open reads and checks the whole log. */
const NO_CHECKPOINT: StoreOptions = {
  checkpointPolicy: { minCharacters: Infinity, everyCharacters: Infinity, everyEvents: Infinity },
}

/**
 * The events a session opens with are not frozen as they are taken in either (decision 0182):
 * they too are frozen when they leave it.
 */
describe.each(FILE_STORE_KINDS)('a session opened without a checkpoint in the %s store', (kind) => {
  async function writtenWithout(turns: number) {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory, NO_CHECKPOINT)
    const session = await store.create()
    for (let turn = 1; turn <= turns; turn++) {
      appendAll(session, closedTurn(turn, `prompt ${turn}`))
      // A compaction projected at open re-projects the events it keeps.
      if (turn === 3) appendAll(session, [compaction(12)])
    }
    const events = [...session.residentEvents]
    await session.close()
    return { store, id: session.header.id, events }
  }

  it('gives out only deeply frozen events and messages, whichever way they leave', async () => {
    const { store, id, events } = await writtenWithout(5)
    const session = await store.open(id)
    expect(session.residentFrom).toBe(0)
    expect(session.isProjectionLoaded).toBe(true)
    expect(unfrozenIn([...session.messages()])).toEqual([])
    expect(firstUnfrozen(session.requestHeader())).toBeUndefined()
    const at = events.map((event) => session.eventAt(event.seq))
    expect(at).toEqual(events)
    expect(unfrozenIn(at)).toEqual([])
    const read: SessionEvent[] = []
    for await (const batch of session.readEvents()) read.push(...batch)
    expect(read).toEqual(events)
    expect(unfrozenIn(read)).toEqual([])
    expect(session.residentEvents).toEqual(events)
    expect(unfrozenIn([...session.residentEvents])).toEqual([])
    await session.close()
  })

  it('gives out deeply frozen events when the log is read whole', async () => {
    const { store, id, events } = await writtenWithout(5)
    const read = await store.read(id)
    expect(read.events).toEqual(events)
    expect(unfrozenIn(read.events)).toEqual([])
  })

  it('freezes its events when they are first asked for as a whole', async () => {
    const { store, id, events } = await writtenWithout(5)
    const session = await store.open(id)
    expect(session.residentEvents).toEqual(events)
    expect(unfrozenIn([...session.residentEvents])).toEqual([])
    await session.close()
  })

  it('refuses changes made through what it gave out', async () => {
    const { store, id } = await writtenWithout(2)
    const session = await store.open(id)
    const message = session.messages()[0]!
    expect(() => {
      ;(message.content as unknown as { text: string }[])[0]!.text = 'changed'
    }).toThrow(TypeError)
    const first = session.eventAt(1)!
    expect(() => {
      ;(first.data as { id: string }).id = 'changed'
    }).toThrow(TypeError)
    await session.close()
  })
})
