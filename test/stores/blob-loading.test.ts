/**
 * Loading logs whose events refer to blobs (B13, decision 0163): the blobs of a batch are read
 * ahead, beside each other and beside decoding the rest of the batch, yet every payload lands
 * at its own event in order on every load path, and a blob that is missing or of the wrong
 * size is reported at its event, before any later problem, with salvage stopping before it.
 */

import { isAscii } from 'node:buffer'
import {
  appendFileSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { LogCorruptError, type Message, project, type SessionEvent } from '../../src/core/index.js'
import type { Backend } from '../../src/stores/backend.js'
import { createBlobStore } from '../../src/stores/blob-store.js'
import { type Checkpoint, parseCheckpoint } from '../../src/stores/checkpoint.js'
import { encodeEvents } from '../../src/stores/codec.js'
import type { SessionStore, StoreOptions } from '../../src/stores/index.js'
import { loadEvents, loadTail, readCovered } from '../../src/stores/log-loader.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import { DECODE_SLICE_BYTES, DECODE_WHOLE_BYTES } from '../../src/stores/utf8-slices.js'
import {
  assistant,
  type Entry,
  stepEnd,
  stepStart,
  toolCall,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import { backendOf, FILE_STORE_KINDS, type StoreKind, tempDirectory } from './support/stores.js'

const KiB = 1024
const MiB = 1024 * KiB

/** Every close writes a checkpoint, however small the log. */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }
/** No checkpoint is ever written. */
const NEVER: StoreOptions = {
  checkpointPolicy: { minCharacters: 1e12, everyCharacters: 1e12, everyEvents: 1e12 },
}

const stores: SessionStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

async function setup(kind: StoreKind, options: StoreOptions) {
  const directory = tempDirectory()
  const backend = await backendOf(kind, directory)
  const store = createSessionStore(backend, options)
  stores.push(store)
  return { directory, backend, store }
}

/** A text of `bytes` UTF-8 bytes, distinct per `mark`, ASCII or not. */
function payload(mark: string, bytes: number, ascii = true): string {
  const unit = ascii ? `${mark} output line\n` : `${mark} ✓ résumé\n`
  return unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit))).slice(0, bytes)
}

const result = (callId: string, content: unknown[]): Entry => [
  'tool/result',
  { callId, name: 'read', content: content as never, isError: false },
]

/**
 * Seqs 0–3 open a turn; the tool results at seqs 5, 7, 9 and 11 each refer to blobs (the one
 * at 9 to two, an ASCII one and a non-ASCII one); seqs 12–14 close the turn and follow it.
 */
const entries: Entry[] = [
  turnStart(1),
  user('read them'),
  stepStart(1, 1),
  assistant('', [
    { id: 'c1', name: 'read' },
    { id: 'c2', name: 'read' },
    { id: 'c3', name: 'read' },
    { id: 'c4', name: 'read' },
  ]),
  toolCall('c1', 'read'),
  result('c1', [{ type: 'text', text: payload('first', 1.2 * MiB) }]),
  toolCall('c2', 'read'),
  result('c2', [{ type: 'text', text: payload('second', 1.1 * MiB, false) }]),
  toolCall('c3', 'read'),
  result('c3', [
    { type: 'text', text: payload('third a', 700 * KiB) },
    { type: 'text', text: 'between' },
    { type: 'text', text: payload('third b', 600 * KiB, false) },
  ]),
  toolCall('c4', 'read'),
  result('c4', [
    {
      type: 'image',
      mediaType: 'image/png',
      data: Buffer.alloc(0.9 * MiB, 3).toString('base64'),
    },
  ]),
  stepEnd(1, 1),
  turnEnd(1),
  user('thanks'),
]

/** Writes the session; returns it and the events as appended. */
async function written(store: SessionStore) {
  const session = await store.create()
  appendAll(session, entries)
  const events = [...session.residentEvents]
  await session.close()
  return { id: session.header.id, events }
}

/** Where a load reports a problem with the event of `seq`. */
function locationOf(kind: StoreKind, backend: Backend, id: string, seq: number): string {
  // A JSONL log's line 1 is the header; a SQLite row is located by its seq.
  return backend.locate(id, kind === 'jsonl' ? seq + 2 : seq)
}

/** The blob files, by the content they hold (`text` must occur in exactly one). */
function blobFileHolding(kind: StoreKind, directory: string, text: string): string {
  const root =
    kind === 'jsonl' ? join(directory, 'jsonl', 'blobs') : join(directory, 'sessions.db.blobs')
  const files = readdirSync(root).flatMap((shard) =>
    readdirSync(join(root, shard)).map((name) => join(root, shard, name)),
  )
  const holding = files.filter((file) => readFileSync(file, 'utf8').includes(text))
  expect(holding).toHaveLength(1)
  return holding[0]!
}

/** Replaces the stored record of `seq` with `text` (a damaged line). */
function damageRecord(kind: StoreKind, directory: string, id: string, seq: number, text: string) {
  if (kind === 'jsonl') {
    const path = join(directory, 'jsonl', 'sessions', id, 'events.jsonl')
    const lines = readFileSync(path, 'utf8').split('\n')
    lines[seq + 1] = text
    writeFileSync(path, lines.join('\n'))
    return
  }
  const db = new Database(join(directory, 'sessions.db'))
  try {
    db.prepare('UPDATE events SET line = ? WHERE session_id = ? AND seq = ?').run(text, id, seq)
  } finally {
    db.close()
  }
}

async function storedCheckpoint(backend: Backend, id: string): Promise<Checkpoint> {
  const checkpoint = parseCheckpoint(await backend.readCheckpoint!(id))
  expect(checkpoint).toBeDefined()
  return checkpoint!
}

async function covered(backend: Backend, id: string, checkpoint: Checkpoint) {
  const events: SessionEvent[] = []
  for await (const batch of readCovered(
    backend,
    id,
    { fromSeq: 0, throughSeq: checkpoint.throughSeq },
    { ...checkpoint, characters: checkpoint.characters },
    (reason) => new Error(`mismatch: ${reason}`),
  ))
    events.push(...batch)
  return events
}

describe.each(FILE_STORE_KINDS)('blobs read ahead in the %s store', (kind) => {
  it('puts every payload back at its own event, in order, on every load path', async () => {
    const { backend, store } = await setup(kind, EVERY_CLOSE)
    const { id, events } = await written(store)
    // The log in full, checked event by event.
    expect((await loadEvents(backend, id)).events).toEqual(events)
    // The events a checkpoint covers, checked against its checksum.
    const checkpoint = await storedCheckpoint(backend, id)
    expect(checkpoint.throughSeq).toBe(events.length - 1)
    const fromCheckpoint = await loadEvents(backend, id, { checkpoint })
    expect(fromCheckpoint.restored).toBeDefined()
    expect(fromCheckpoint.events).toEqual(events)
    expect(await covered(backend, id, checkpoint)).toEqual(events)
    // Opened from the checkpoint, its projection read on demand.
    const reopened = await store.open(id)
    await reopened.loadProjection()
    expect(reopened.messages()).toEqual(project(events))
    await reopened.close()
  })

  it('puts the payloads of the events after a checkpoint back in order', async () => {
    const { backend, store } = await setup(kind, EVERY_CLOSE)
    const { events } = await written(store)
    // A second session whose checkpoint covers seqs 0–3, with the rest written after it.
    const session = await store.create()
    appendAll(session, entries.slice(0, 4))
    await session.close()
    const id = session.header.id
    const checkpoint = await storedCheckpoint(backend, id)
    expect(checkpoint.throughSeq).toBe(3)
    const rest = events.slice(4)
    const lease = await backend.acquire(id)
    const header = JSON.parse((await backend.readHeader(id)).text)
    const writer = await backend.openWriter(id, { header, eventCount: 4, updatedAt: 0 })
    await writer.write(rest, await encodeEvents(rest, backend.blobs))
    await writer.close()
    await lease.release()
    const tail = await loadTail(backend, id, checkpoint)
    expect(tail?.events).toEqual(rest)
  })

  it('reports a missing blob at its event, before a later damaged line, and salvages what precedes it', async () => {
    const { directory, backend, store } = await setup(kind, NEVER)
    const { id } = await written(store)
    rmSync(blobFileHolding(kind, directory, 'second ✓'))
    // A later line is damaged too: the blob of seq 7 is the first problem in log order.
    damageRecord(kind, directory, id, 9, '{"seq": oops')
    const attempt = loadEvents(backend, id)
    await expect(attempt).rejects.toBeInstanceOf(LogCorruptError)
    await expect(attempt).rejects.toThrowError(/large payload .* cannot be read/)
    await expect(attempt).rejects.toMatchObject({ location: locationOf(kind, backend, id, 7) })
    await expect(store.open(id)).rejects.toMatchObject({
      location: locationOf(kind, backend, id, 7),
    })
    const salvage = await loadEvents(backend, id, { salvage: true })
    expect(salvage.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(salvage.problem?.location).toBe(locationOf(kind, backend, id, 7))
    expect(salvage.problem?.message).toMatch(/large payload .* cannot be read/)
    const repaired = await store.repair(id)
    expect(repaired.keptEvents).toBe(7)
    await repaired.session.close()
  })

  it('reports the damaged line first when it comes before the missing blob', async () => {
    const { directory, backend, store } = await setup(kind, NEVER)
    const { id } = await written(store)
    rmSync(blobFileHolding(kind, directory, 'third b ✓'))
    damageRecord(kind, directory, id, 6, '{"seq": oops')
    const salvage = await loadEvents(backend, id, { salvage: true })
    expect(salvage.events).toHaveLength(6)
    expect(salvage.problem?.location).toBe(locationOf(kind, backend, id, 6))
    expect(salvage.problem?.message).toMatch(/not valid JSON/)
  })

  it.each([
    ['grew', (file: string) => appendFileSync(file, 'x')],
    ['shrank', (file: string) => truncateSync(file, 1000)],
  ])('reports a blob that %s at its event, the second of one event’s two', async (_, change) => {
    const { directory, backend, store } = await setup(kind, NEVER)
    const { id } = await written(store)
    const file = blobFileHolding(kind, directory, 'third b ✓')
    const expected = Buffer.byteLength(payload('third b', 600 * KiB, false))
    change(file)
    const salvage = await loadEvents(backend, id, { salvage: true })
    expect(salvage.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    expect(salvage.problem?.location).toBe(locationOf(kind, backend, id, 9))
    expect(salvage.problem?.message).toMatch(
      new RegExp(`has \\d+ bytes but the event expects ${expected}`),
    )
  })

  it('falls back from a checkpoint whose covered blob is gone, and reports it where a full load does', async () => {
    const { directory, backend, store } = await setup(kind, EVERY_CLOSE)
    const { id } = await written(store)
    const checkpoint = await storedCheckpoint(backend, id)
    rmSync(blobFileHolding(kind, directory, 'first output'))
    const expected = { location: locationOf(kind, backend, id, 5) }
    // Read with the checkpoint: its covered stretch cannot be read back, so the log is
    // loaded as without it, and the problem reported as that load reports it.
    await expect(loadEvents(backend, id, { checkpoint })).rejects.toMatchObject(expected)
    await expect(store.read(id)).rejects.toMatchObject(expected)
    // Opened from the checkpoint (only seq 13 is read), the history read later refuses.
    const reopened = await store.open(id)
    await expect(reopened.loadProjection()).rejects.toMatchObject(expected)
    await reopened.close()
  })
})

describe('the blob store read', () => {
  it('reads many blobs asked for at once, each to its own content, failing only the bad ones', async () => {
    const blobs = createBlobStore(join(tempDirectory(), 'blobs'), undefined)
    const contents = Array.from({ length: 40 }, (_, index) =>
      payload(`blob ${index}`, 70 * KiB, index % 2 === 0),
    )
    const addresses = await Promise.all(contents.map((content) => blobs.put(content)))
    const missing = { sha256: 'f'.repeat(64), bytes: 10 }
    const wrongSize = { ...addresses[7]!, bytes: addresses[7]!.bytes + 1 }
    const reads = await Promise.allSettled([
      ...addresses.map((address, index) => blobs.get(address, `at ${index}`)),
      blobs.get(missing, 'at missing'),
      blobs.get(wrongSize, 'at wrong size'),
    ])
    expect(reads.slice(0, 40)).toEqual(contents.map((value) => ({ status: 'fulfilled', value })))
    const [gone, short] = reads.slice(40).map((read) => (read as PromiseRejectedResult).reason)
    expect(gone).toBeInstanceOf(LogCorruptError)
    expect(gone).toMatchObject({ location: 'at missing' })
    expect(gone.message).toMatch(/cannot be read/)
    expect(short).toMatchObject({ location: 'at wrong size' })
    expect(short.message).toMatch(
      new RegExp(
        `has ${addresses[7]!.bytes} bytes but the event expects ${addresses[7]!.bytes + 1}`,
      ),
    )
  })
})

/**
 * A text of several slices (decision 0169) whose slice ends fall inside characters: each unit
 * is 11 UTF-8 bytes (`a`, a three-byte, a four-byte and a two-byte character, a newline).
 */
const LARGE_TEXT = 'a漢😀é\n'.repeat(Math.ceil((5 * MiB) / 11))
/** An image of several slices, as base64. */
const LARGE_IMAGE = Buffer.alloc(3 * MiB, 7).toString('base64')

const largeEntries: Entry[] = [
  turnStart(1),
  user('show me'),
  stepStart(1, 1),
  assistant('', [{ id: 'c1', name: 'read' }]),
  toolCall('c1', 'read'),
  result('c1', [
    { type: 'text', text: LARGE_TEXT },
    { type: 'image', mediaType: 'image/png', data: LARGE_IMAGE },
  ]),
  stepEnd(1, 1),
  turnEnd(1),
]

/** Seq of the tool result that refers to the large blobs. */
const LARGE_SEQ = 5

/** The text and image data of the tool result among `events`, by `===` against the originals. */
function isLargeIntact(events: readonly SessionEvent[]): boolean {
  const data = events.find((candidate) => candidate.seq === LARGE_SEQ)?.data as
    | { content: { text?: string; data?: string }[] }
    | undefined
  return holdsLarge(data?.content ?? [])
}

/** Whether `content` is the large text and image, by `===` (no diff of megabytes on failure). */
function holdsLarge(content: readonly unknown[]): boolean {
  const [text, image] = content as readonly ({ text?: string; data?: string } | undefined)[]
  return text?.text === LARGE_TEXT && image?.data === LARGE_IMAGE
}

/** The content of the tool message of a projection. */
const toolContent = (messages: readonly Message[]) =>
  messages.find((candidate) => candidate.role === 'tool')?.content ?? []

async function writtenLarge(store: SessionStore) {
  const session = await store.create()
  appendAll(session, largeEntries)
  const events = [...session.residentEvents]
  await session.close()
  return { id: session.header.id, events }
}

describe.each(FILE_STORE_KINDS)('large blobs decoded in slices in the %s store', (kind) => {
  it('gives back the bytes written, characters cut at slice ends included', async () => {
    const bytes = Buffer.from(LARGE_TEXT, 'utf8')
    const ends = [1, 2].map((slice) => bytes[slice * DECODE_SLICE_BYTES]!)
    // The decode is sliced, and a slice ends inside a character (a continuation byte there).
    expect(bytes.length).toBeGreaterThan(Math.max(DECODE_WHOLE_BYTES, 3 * DECODE_SLICE_BYTES))
    expect(ends.some((byte) => (byte & 0xc0) === 0x80)).toBe(true)
    expect(LARGE_IMAGE.length).toBeGreaterThan(DECODE_WHOLE_BYTES)
    const { backend, store } = await setup(kind, EVERY_CLOSE)
    const { id, events } = await writtenLarge(store)
    expect(isLargeIntact(events)).toBe(true)
    const loaded = (await loadEvents(backend, id)).events
    expect(isLargeIntact(loaded)).toBe(true)
    const text = (loaded[LARGE_SEQ]!.data as { content: { text: string }[] }).content[0]!.text
    expect(Buffer.from(text, 'utf8').equals(bytes)).toBe(true)
    // Opened from its checkpoint, the history read by `loadProjection`.
    const reopened = await store.open(id)
    await reopened.loadProjection()
    expect(holdsLarge(toolContent(reopened.messages()))).toBe(true)
    await reopened.close()
  })

  it.each([
    ['missing', (file: string) => rmSync(file), /large payload .* cannot be read/],
    [
      'cut short',
      (file: string) => truncateSync(file, Buffer.byteLength(LARGE_TEXT) - 1),
      new RegExp(
        `has ${Buffer.byteLength(LARGE_TEXT) - 1} bytes but the event expects ${Buffer.byteLength(LARGE_TEXT)}`,
      ),
    ],
  ])('reports a large blob %s at its event, as a small one', async (_, change, message) => {
    const { directory, backend, store } = await setup(kind, NEVER)
    const { id } = await writtenLarge(store)
    change(blobFileHolding(kind, directory, 'a漢😀é'))
    const location = locationOf(kind, backend, id, LARGE_SEQ)
    await expect(store.open(id)).rejects.toMatchObject({ location, message })
    const salvage = await loadEvents(backend, id, { salvage: true })
    expect(salvage.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4])
    expect(salvage.problem).toEqual({ location, message: expect.stringMatching(message) })
  })

  it('ends a projection load with its abort when it comes during a sliced decode', async () => {
    const directory = tempDirectory()
    const backend = await backendOf(kind, directory)
    const blobs = backend.blobs!
    const controller = new AbortController()
    const reason = new Error('load stopped by the test')
    let abortedDecodes = 0
    let armed = false
    // The store's blob reads; once armed, the read of the non-ASCII text (decoded in slices
    // by the loader) brings the abort on the next turn, while its first slice is made.
    const watched: Backend = {
      ...backend,
      blobs: {
        ...blobs,
        async read(address, location) {
          const bytes = await blobs.read(address, location)
          if (armed && !isAscii(bytes)) {
            armed = false
            setImmediate(() => {
              controller.abort(reason)
              abortedDecodes++
            })
          }
          return bytes
        },
      },
    }
    const store = createSessionStore(watched, EVERY_CLOSE)
    stores.push(store)
    const { id } = await writtenLarge(store)
    const reopened = await store.open(id)
    armed = true
    await expect(reopened.loadProjection(controller.signal)).rejects.toBe(reason)
    expect(abortedDecodes).toBe(1)
    expect(reopened.isProjectionLoaded).toBe(false)
    // Loaded again without the abort, the session holds the payloads whole.
    await reopened.loadProjection()
    expect(holdsLarge(toolContent(reopened.messages()))).toBe(true)
    await reopened.close()
  })

  it('gives the reason of an abort to a blob read', async () => {
    const { backend, store } = await setup(kind, NEVER)
    await writtenLarge(store)
    const blobs = backend.blobs!
    const address = await blobs.put(LARGE_TEXT)
    const reason = new Error('read stopped by the test')
    await expect(blobs.get(address, 'at seq 5', AbortSignal.abort(reason))).rejects.toBe(reason)
    expect((await blobs.get(address, 'at seq 5')) === LARGE_TEXT).toBe(true)
  })
})
