/**
 * Fork by copy (docs/spec.md §9.4, decisions 0018, 0067, 0069): a fork at a middle seq holds
 * the source's kept records byte for byte and event for event, whether the source is closed
 * or open, across the chunks a one-pass copy reads them in; a refused fork leaves no child
 * behind; and a JSONL source whose log changed after it was opened is refused, not copied.
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { project, type SessionEvent, type SessionHeader } from '../../src/index.js'
import type { Backend } from '../../src/stores/backend.js'
import { parseCheckpoint } from '../../src/stores/checkpoint.js'
import type { SessionStore, StoreOptions } from '../../src/stores/index.js'
import { acquireLeaseFile, createLeaseFile } from '../../src/stores/jsonl/lease-file.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import { compaction } from '../support/log-builder.js'
import { allEvents } from '../support/session-events.js'
import { appendAll, closedTurn } from './support/events.js'
import {
  backendOf,
  FILE_STORE_KINDS,
  STORE_KINDS,
  type StoreKind,
  storeOf,
  tempDirectory,
} from './support/stores.js'

/** Every close writes a checkpoint, however small the log (a fork from a closed source uses it). */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }

/**
 * Enough turns that the kept part spans several reads of a copy (over 2 MiB of JSONL, over
 * 2,000 SQLite rows), so records cross the chunks and pages they are read in.
 */
const MANY_TURNS = 360

/** Long prompts with non-ASCII text (accents, an arrow, an astral emoji). */
const prompt = (turn: number) => `turn ${turn}: ${'déjà vu → 🙂 plain words '.repeat(400)}`

/**
 * Writes a closed session of `turns` turns with a compaction after the first half, each turn
 * made durable as the agent does (so its checkpoint has a range per MiB or so).
 */
async function written(store: SessionStore, turns: number) {
  const session = await store.create({ title: 'fork source' })
  for (let turn = 1; turn <= turns; turn++) {
    appendAll(session, closedTurn(turn, prompt(turn)))
    await session.flush()
    // Keeps from the start of turn 3 (each turn is 12 events).
    if (turn === Math.floor(turns / 2)) appendAll(session, [compaction(24)])
  }
  await session.close()
  const id = session.header.id
  const opened = await store.open(id)
  const events = await allEvents(opened)
  await opened.close()
  return { id, events }
}

/** An open session holding `turns` closed turns, durable, and the number of sessions listed. */
async function openWithTurns(store: SessionStore, turns: number) {
  const session = await store.create()
  for (let turn = 1; turn <= turns; turn++) appendAll(session, closedTurn(turn, prompt(turn)))
  await session.flush()
  return { session, listed: (await store.list()).length }
}

/** The `turn/end` nearest after the middle of `events`. */
function middleCut(events: readonly SessionEvent[]): number {
  for (let seq = Math.floor(events.length / 2); seq < events.length; seq++)
    if (events[seq]!.type === 'turn/end') return seq
  throw new Error('no turn end after the middle')
}

/** A store over `directory` that counts the records read through its backend's `records`. */
async function countingStore(kind: StoreKind, directory: string) {
  const inner = await backendOf(kind, directory)
  const reads = { records: 0 }
  const backend: Backend = {
    ...inner,
    async *records(id, range) {
      for await (const batch of inner.records(id, range)) {
        reads.records += batch.length
        yield batch
      }
    },
  }
  return { store: createSessionStore(backend, EVERY_CLOSE), reads }
}

/** The stored lines of session `id`, read through a second backend on the same files. */
async function storedLines(kind: StoreKind, directory: string, id: string): Promise<string[]> {
  const backend = await backendOf(kind, directory)
  const lines: string[] = []
  try {
    for await (const batch of backend.records(id))
      for (const record of batch) if (record.kind === 'line') lines.push(record.text)
  } finally {
    await backend.close()
  }
  return lines
}

describe.each(STORE_KINDS)('fork at a middle seq in the %s store', (kind) => {
  it('holds the kept events of a closed or open source, and reopens from its own checkpoint', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory, EVERY_CLOSE)
    const { id, events } = await written(store, MANY_TURNS)
    const cut = middleCut(events)
    const kept = events.slice(0, cut + 1)
    for (const isOpen of [false, true]) {
      const source = isOpen ? await store.open(id) : undefined
      const child = await store.fork(id, { atSeq: cut })
      expect(child.header.parent).toEqual({ sessionId: id, seq: cut })
      expect(child.nextSeq).toBe(cut + 1)
      expect(await allEvents(child)).toEqual(kept)
      await child.loadProjection()
      expect(child.messages()).toEqual(project(kept))
      await child.close()
      await source?.close()
      // The child's checkpoint covers what was copied: reopening reads only past it, and
      // reading the rest checks it against the checksum the copy summed.
      const reopened = await store.open(child.header.id)
      expect(reopened.residentFrom).toBe(cut + 1)
      await reopened.loadProjection()
      expect(reopened.messages()).toEqual(project(kept))
      expect(await allEvents(reopened)).toEqual(kept)
      await reopened.close()
    }
  })
})

describe.each(FILE_STORE_KINDS)('fork by copy in the %s store', (kind) => {
  it("forks a closed fork from the ranges its checkpoint took from its source's", async () => {
    const directory = tempDirectory()
    const { store, reads } = await countingStore(kind, directory)
    const { id, events } = await written(store, MANY_TURNS)
    const cut = middleCut(events)
    const child = await store.fork(id, { atSeq: cut })
    await child.close()
    // A turn end two turns (12 events each) or so before the child's end.
    let grandchildCut = cut - 20
    while (events[grandchildCut]!.type !== 'turn/end') grandchildCut--
    // The child's checkpoint has ranges below the cut to check the grandchild's records with.
    const backend = await backendOf(kind, directory)
    const stored = await backend.readCheckpoint!(child.header.id)
    await backend.close()
    const { ranges } = parseCheckpoint(stored!)!
    expect(ranges.filter((range) => range.throughSeq <= grandchildCut).length).toBeGreaterThan(0)
    reads.records = 0
    const grandchild = await store.fork(child.header.id, { atSeq: grandchildCut })
    await grandchild.close()
    // Every range checked matched (decision 0192): nothing was read and checked instead.
    expect(reads.records).toBe(0)
    const reopened = await store.open(grandchild.header.id)
    expect(await allEvents(reopened)).toEqual(events.slice(0, grandchildCut + 1))
    await reopened.close()
    await store.close()
  })

  it('copies the kept records byte for byte', async () => {
    const directory = tempDirectory()
    // Counts what the store reads through `records`: a one-pass copy reads none (decisions
    // 0069, 0019).
    const { store, reads } = await countingStore(kind, directory)
    const { id, events } = await written(store, MANY_TURNS)
    const cut = middleCut(events)
    reads.records = 0
    const child = await store.fork(id, { atSeq: cut })
    await child.close()
    await store.close()
    expect(reads.records).toBe(0)
    const source = await storedLines(kind, directory, id)
    expect(await storedLines(kind, directory, child.header.id)).toEqual(source.slice(0, cut + 1))
    if (kind === 'jsonl') {
      // The file itself: the child's header line, then the source's bytes after its own.
      const bytesOf = (session: string) =>
        readFileSync(join(directory, 'jsonl', 'sessions', session, 'events.jsonl'))
      const sourceBytes = bytesOf(id)
      const childBytes = bytesOf(child.header.id)
      const afterHeader = (bytes: Buffer) => bytes.subarray(bytes.indexOf(10) + 1)
      const keptBytes = Buffer.concat(
        source.slice(0, cut + 1).map((line) => Buffer.from(`${line}\n`)),
      )
      expect(afterHeader(childBytes).equals(keptBytes)).toBe(true)
      expect(afterHeader(sourceBytes).subarray(0, keptBytes.length).equals(keptBytes)).toBe(true)
    }
  })

  it('refuses a cut inside a turn or past the end, leaving no child behind', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory, EVERY_CLOSE)
    const { id, events } = await written(store, 6)
    const listed = (await store.list()).length
    await expect(store.fork(id, { atSeq: 13 })).rejects.toMatchObject({ code: 'OPEN_TURN' })
    await expect(store.fork(id, { atSeq: events.length })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    })
    expect((await store.list()).length).toBe(listed)
    if (kind === 'jsonl') expect(readdirSync(join(directory, 'jsonl', 'sessions'))).toEqual([id])
  })
})

// JSONL copies by reading the kept bytes, so it can compare them with what the source wrote.
describe('fork of an open JSONL session', () => {
  it('refuses to copy an open source whose log changed after it was opened', async () => {
    const directory = tempDirectory()
    const store = await storeOf('jsonl', directory, EVERY_CLOSE)
    const { session, listed } = await openWithTurns(store, 4)
    // A letter of a kept prompt changed behind the open session, the length kept: only the
    // checksum of what it wrote can tell.
    changeStoredLine(directory, session.header.id, 13, (line) => line.replace('turn 2:', 'turn 9:'))
    await expect(store.fork(session.header.id)).rejects.toMatchObject({
      code: 'LOG_CORRUPT',
      message: expect.stringMatching(/changed after it was opened.*not the ones written/),
    })
    // A longer line moves where the cut ends.
    changeStoredLine(directory, session.header.id, 13, (line) =>
      line.replace('turn 9:', 'turn 99:'),
    )
    await expect(store.fork(session.header.id)).rejects.toMatchObject({
      code: 'LOG_CORRUPT',
      message: expect.stringMatching(/changed after it was opened.*ends at/),
    })
    expect(readdirSync(join(directory, 'jsonl', 'sessions'))).toEqual([session.header.id])
    expect((await store.list()).length).toBe(listed)
    await session.close()
  })
})

describe('fork of a closed JSONL session with a damaged kept line', () => {
  // The kept scan parses a compaction's and a turn start's data: a line that starts as the
  // store writes it but is not JSON after that is refused there, and the fork reads and
  // checks the log instead, which names the line.
  it.each([
    ['a compaction', 'compaction', (line: string) => `${line.slice(0, -1)},`],
    ['a turn start', 'turn/start', (line: string) => line.replace(/"turn":(\d+)/, '"turn":$1x')],
  ])(
    'refuses %s that is not JSON, naming it, and leaves no child behind',
    async (_, type, damage) => {
      const directory = tempDirectory()
      const store = await storeOf('jsonl', directory, EVERY_CLOSE)
      const { id, events } = await written(store, 6)
      const listed = (await store.list()).length
      const damaged = events.findIndex((event) => event.type === type)
      changeStoredLine(directory, id, damaged, damage)
      const fork = store.fork(id, { atSeq: events.length - 1 })
      await expect(fork).rejects.toMatchObject({ code: 'LOG_CORRUPT' })
      await expect(fork).rejects.toThrow(`events.jsonl:${damaged + 2}`)
      expect(readdirSync(join(directory, 'jsonl', 'sessions'))).toEqual([id])
      expect((await store.list()).length).toBe(listed)
      await store.close()
    },
  )
})

describe.each(FILE_STORE_KINDS)('fork of a %s session whose kept records changed', (kind) => {
  /** Changes the data of the stored record of `seq` (a `user/message`), its envelope kept. */
  function changeRecord(
    directory: string,
    id: string,
    seq: number,
    change: (line: string) => string,
  ) {
    if (kind === 'jsonl') return changeStoredLine(directory, id, seq, change)
    const db = new Database(join(directory, 'sessions.db'))
    const select = db.prepare('SELECT line FROM events WHERE session_id = ? AND seq = ?').pluck()
    const line = select.get(id, seq) as string
    db.prepare('UPDATE events SET line = ? WHERE session_id = ? AND seq = ?').run(
      change(line),
      id,
      seq,
    )
    db.close()
  }

  // Decision 0192: the kept records are summed range by range against the source's checkpoint.
  it('reads and checks them when they are not what its checkpoint summed, naming a broken one', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory, EVERY_CLOSE)
    const { id, events } = await written(store, MANY_TURNS)
    const cut = middleCut(events)
    const message = events.findIndex((event, seq) => seq > 1000 && event.type === 'user/message')
    expect(message).toBeLessThan(cut)
    const listed = (await store.list()).length
    // The envelope as the store writes it, the data no longer JSON: a scan of envelopes
    // alone would copy it and vouch for it.
    // Open here too (from its checkpoint, before the change): it knows the ranges it wrote.
    const open = await store.open(id)
    changeRecord(directory, id, message, (line) => line.replace('"data":{', '"data":['))
    for (const source of [open, undefined]) {
      await expect(store.fork(id, { atSeq: cut })).rejects.toMatchObject({
        code: 'LOG_CORRUPT',
        message: expect.stringMatching(
          kind === 'jsonl' ? `events.jsonl:${message + 2}` : `seq ${message}`,
        ),
      })
      await source?.close()
    }
    expect((await store.list()).length).toBe(listed)
    await store.close()
  })

  it('forks what the log holds when a change is still an event, read and checked', async () => {
    const directory = tempDirectory()
    const { store, reads } = await countingStore(kind, directory)
    const { id, events } = await written(store, MANY_TURNS)
    const cut = middleCut(events)
    const message = events.findIndex((event, seq) => seq > 1000 && event.type === 'user/message')
    // The same length, so only the checksum can tell.
    changeRecord(directory, id, message, (line) => line.replace('turn ', 'TURN '))
    reads.records = 0
    const child = await store.fork(id, { atSeq: cut })
    await child.close()
    expect(reads.records).toBeGreaterThan(cut)
    const source = await storedLines(kind, directory, id)
    expect(source[message]).toContain('TURN ')
    expect(await storedLines(kind, directory, child.header.id)).toEqual(source.slice(0, cut + 1))
    // The child's own checkpoint sums what it holds: it reopens from it.
    const reopened = await store.open(child.header.id)
    expect((await allEvents(reopened)).map((event) => event.seq)).toEqual(
      events.slice(0, cut + 1).map((event) => event.seq),
    )
    await reopened.close()
    await store.close()
  })
})

describe('fork of an open SQLite session', () => {
  it('refuses to copy an open source whose rows changed after it was opened', async () => {
    const directory = tempDirectory()
    const store = await storeOf('sqlite', directory, EVERY_CLOSE)
    const { session, listed } = await openWithTurns(store, 4)
    // A letter of a kept prompt changed behind the open session, as a hand edit would.
    const db = new Database(join(directory, 'sessions.db'))
    db.prepare(
      "UPDATE events SET line = replace(line, 'turn 2:', 'turn 9:') WHERE session_id = ? AND seq = 13",
    ).run(session.header.id)
    db.close()
    await expect(store.fork(session.header.id)).rejects.toMatchObject({
      code: 'LOG_CORRUPT',
      message: expect.stringMatching(/changed after it was opened.*not the ones written/),
    })
    expect((await store.list()).length).toBe(listed)
    await session.close()
  })
})

// SQLite reads each range of kept rows for the scan and copies it inside SQLite (decision
// 0171): a kept row missing or not in the store's form is refused as a read would report it.
describe('fork of a SQLite session with a damaged kept row', () => {
  const damages = [
    ['a row deleted', 'DELETE FROM events WHERE session_id = ? AND seq = ?'],
    ['a torn row', 'UPDATE events SET line = substr(line, 1, 40) WHERE session_id = ? AND seq = ?'],
    [
      'a row holding the next seq',
      `UPDATE events SET line = replace(line, '{"seq":' || seq || ',', '{"seq":' || (seq + 1) || ',') WHERE session_id = ? AND seq = ?`,
    ],
  ] as const
  it.each(damages)('refuses %s, as a read reports it, leaving no child', async (_, change) => {
    const directory = tempDirectory()
    const path = join(directory, 'sessions.db')
    const store = await storeOf('sqlite', directory, EVERY_CLOSE)
    // Over two ranges of copied rows (1,000 each), the damage in the second.
    const { id, events } = await written(store, 200)
    const cut = middleCut(events)
    const damaged = 1100
    expect(cut).toBeGreaterThan(damaged)
    const listed = (await store.list()).length
    const db = new Database(path)
    db.prepare(change).run(id, damaged)
    db.close()
    for (const isOpen of [false, true]) {
      const source = isOpen ? await store.open(id) : undefined
      await expect(store.fork(id, { atSeq: cut })).rejects.toMatchObject({
        code: 'LOG_CORRUPT',
        message: expect.stringContaining(`seq ${damaged}`),
      })
      await source?.close()
    }
    expect((await store.list()).length).toBe(listed)
    const check = new Database(path, { readonly: true })
    const sessions = check.prepare('SELECT DISTINCT session_id FROM events').pluck().all()
    check.close()
    expect(sessions).toEqual([id])
    await store.close()
  })
})

/** Rewrites the stored line of `seq` of a JSONL session in place, as a hand edit would. */
function changeStoredLine(
  directory: string,
  id: string,
  seq: number,
  change: (line: string) => string,
): void {
  const path = join(directory, 'jsonl', 'sessions', id, 'events.jsonl')
  const lines = readFileSync(path, 'utf8').split('\n')
  lines[seq + 1] = change(lines[seq + 1]!)
  writeFileSync(path, lines.join('\n'))
}

describe('a JSONL fork cut short', () => {
  it('writes the child header only after the copy, and an open of a child without it is refused', async () => {
    const directory = tempDirectory()
    const store = await storeOf('jsonl', directory, EVERY_CLOSE)
    const source = await store.create()
    for (let turn = 1; turn <= 3; turn++) appendAll(source, closedTurn(turn, prompt(turn)))
    await source.close()
    const backend = await backendOf('jsonl', directory)
    const child = { id: randomUUID(), formatVersion: 1, createdAt: 1 } as SessionHeader
    const logPath = join(directory, 'jsonl', 'sessions', child.id, 'events.jsonl')
    const headsSeen: string[] = []
    const copied = await backend.copyInspected!(source.header.id, child, {
      throughSeq: 23,
      inspect: () => {
        headsSeen.push(readFileSync(logPath).subarray(0, 8).toString('latin1'))
        return true
      },
    })
    expect(copied?.eventCount).toBe(24)
    // While the copied events were inspected (before the header is written) the header's
    // place held nothing: a crash then leaves no header naming a cut the log does not reach.
    expect(headsSeen.length).toBeGreaterThan(0)
    for (const head of headsSeen) expect(head.replaceAll('\0', '')).toBe('')
    await copied!.lease.release()
    await backend.close()
    const done = await store.open(child.id)
    expect(done.nextSeq).toBe(24)
    await done.close()
    // What a crash before the header's write leaves: zeros where the header goes.
    const bytes = readFileSync(logPath)
    bytes.fill(0, 0, bytes.indexOf(10) + 1)
    writeFileSync(logPath, bytes)
    await expect(store.open(child.id)).rejects.toMatchObject({
      code: 'LOG_CORRUPT',
      message: expect.stringMatching(/creation was cut short/),
    })
  })
})

/** Where each event line of a JSONL log ends (past its newline), in file offsets. */
function lineEnds(bytes: Buffer): number[] {
  const ends: number[] = []
  for (let at = bytes.indexOf(10) + 1; at < bytes.length; at = bytes.indexOf(10, at) + 1)
    ends.push(bytes.indexOf(10, at) + 1)
  return ends
}

// Decision 0192: the lines are copied whole, then read back from the child and inspected
// while its bytes sync.
describe("a JSONL fork's inspection", () => {
  it('sees every kept line after the copy, at its place in the source, across chunks', async () => {
    const directory = tempDirectory()
    const store = await storeOf('jsonl', directory, EVERY_CLOSE)
    const { id, events } = await written(store, MANY_TURNS)
    await store.close()
    const cut = middleCut(events)
    const backend = await backendOf('jsonl', directory)
    const child = { id: randomUUID(), formatVersion: 1, createdAt: 1 } as SessionHeader
    const logOf = (session: string) => join(directory, 'jsonl', 'sessions', session, 'events.jsonl')
    const sourceBytes = readFileSync(logOf(id))
    const sourceStart = sourceBytes.indexOf(10) + 1
    const keptEnd = lineEnds(sourceBytes)[cut]!
    const kept = sourceBytes.subarray(sourceStart, keptEnd)
    const texts: string[] = []
    const positions: number[] = []
    let copiedWhenFirstInspected: Buffer | undefined
    const copied = await backend.copyInspected!(id, child, {
      throughSeq: cut,
      sourceHeader: sourceBytes.subarray(0, sourceStart - 1).toString(),
      inspect: (records) => {
        copiedWhenFirstInspected ??= readFileSync(logOf(child.id))
        if ('texts' in records) throw new Error('a JSONL copy hands over bytes')
        records.starts.forEach((start, index) => {
          texts.push(records.bytes.toString('utf8', start, records.ends[index]))
          positions.push(records.positions[index]!)
        })
        return true
      },
    })
    expect(copied?.eventCount).toBe(cut + 1)
    await copied!.lease.release()
    await backend.close()
    // Every kept byte was in the child before the first line was inspected.
    const early = copiedWhenFirstInspected!
    expect(early.subarray(early.length - kept.length).equals(kept)).toBe(true)
    // Each line once, in order, ending where it ends in the source (not in the child).
    expect(texts).toEqual(kept.toString('utf8').split('\n').slice(0, -1))
    expect(positions).toEqual(lineEnds(sourceBytes).slice(0, cut + 1))
    expect(positions.length).toBeGreaterThan(2)
  })

  it('that fails, fails the fork and leaves no child behind', async () => {
    const directory = tempDirectory()
    const store = await storeOf('jsonl', directory, EVERY_CLOSE)
    const { id, events } = await written(store, 6)
    await store.close()
    const backend = await backendOf('jsonl', directory)
    const child = { id: randomUUID(), formatVersion: 1, createdAt: 1 } as SessionHeader
    const copy = backend.copyInspected!(id, child, {
      throughSeq: middleCut(events),
      inspect: () => {
        throw new Error('the inspector failed')
      },
    })
    await expect(copy).rejects.toMatchObject({
      code: 'STORE',
      message: expect.stringMatching(/cannot create session .*the inspector failed/),
    })
    await backend.close()
    expect(readdirSync(join(directory, 'jsonl', 'sessions'))).toEqual([id])
  })

  it('refused after the copy, leaves no child behind and the source as it was', async () => {
    const directory = tempDirectory()
    const store = await storeOf('jsonl', directory, EVERY_CLOSE)
    const { id, events } = await written(store, MANY_TURNS)
    const listed = (await store.list()).length
    await store.close()
    const sourcePath = join(directory, 'jsonl', 'sessions', id, 'events.jsonl')
    const sourceBefore = readFileSync(sourcePath)
    const backend = await backendOf('jsonl', directory)
    const child = { id: randomUUID(), formatVersion: 1, createdAt: 1 } as SessionHeader
    let calls = 0
    const copied = await backend.copyInspected!(id, child, {
      throughSeq: middleCut(events),
      // Refuses the second batch: the first chunk's lines are taken, the rest is not.
      inspect: () => ++calls < 2,
    })
    await backend.close()
    expect(calls).toBe(2)
    expect(copied).toBeUndefined()
    expect(readdirSync(join(directory, 'jsonl', 'sessions'))).toEqual([id])
    expect(readFileSync(sourcePath).equals(sourceBefore)).toBe(true)
    const reopened = await storeOf('jsonl', directory, EVERY_CLOSE)
    expect((await reopened.list()).length).toBe(listed)
    await reopened.close()
  })
})

describe("a JSONL fork's checkpoint", () => {
  it("is stored with the copy, in the child's own offsets, and the child reopens from it", async () => {
    const directory = tempDirectory()
    const inner = await backendOf('jsonl', directory)
    const reads: { fromSeq?: number; fromPosition?: number }[] = []
    // Records where each read starts: reopening the child seeks to the checkpoint's record.
    const backend: Backend = {
      ...inner,
      records(id, range) {
        reads.push({ ...range })
        return inner.records(id, range)
      },
    }
    const store = createSessionStore(backend, EVERY_CLOSE)
    const { id, events } = await written(store, 24)
    const cut = middleCut(events)
    reads.length = 0
    const child = await store.fork(id, { atSeq: cut })
    // The closed source's checkpoint (read beside its header) stood for the kept events: the
    // copy scanned them, nothing read the log as records.
    expect(reads).toEqual([])
    const childDirectory = join(directory, 'jsonl', 'sessions', child.header.id)
    // Stored before the fork returned, while the child is still open.
    const checkpoint = parseCheckpoint(
      readFileSync(join(childDirectory, 'checkpoint.json'), 'utf8'),
    )
    const log = readFileSync(join(childDirectory, 'events.jsonl'))
    const lastStart = log.lastIndexOf(10, log.length - 2) + 1
    expect(checkpoint).toMatchObject({
      throughSeq: cut,
      position: log.length,
      start: lastStart,
      projection: { from: 24 },
    })
    expect(log.subarray(lastStart).toString()).toMatch(new RegExp(`^\\{"seq":${cut},`))
    await child.close()
    reads.length = 0
    const reopened = await store.open(child.header.id)
    expect(reads).toEqual([{ fromSeq: cut, fromPosition: lastStart }])
    expect(reopened.residentFrom).toBe(cut + 1)
    expect(await allEvents(reopened)).toEqual(events.slice(0, cut + 1))
    await reopened.close()
    await store.close()
  })

  it('is stored with the copy for a fork at the end of an open source, which is listed', async () => {
    const directory = tempDirectory()
    const store = await storeOf('jsonl', directory, EVERY_CLOSE)
    const source = await store.create()
    for (let turn = 1; turn <= 6; turn++) appendAll(source, closedTurn(turn, prompt(turn)))
    await source.flush()
    const end = source.nextSeq - 1
    const kept = await allEvents(source)
    const child = await store.fork(source.header.id)
    const childDirectory = join(directory, 'jsonl', 'sessions', child.header.id)
    const log = readFileSync(join(childDirectory, 'events.jsonl'))
    const lastStart = log.lastIndexOf(10, log.length - 2) + 1
    expect(
      parseCheckpoint(readFileSync(join(childDirectory, 'checkpoint.json'), 'utf8')),
    ).toMatchObject({ throughSeq: end, position: log.length, start: lastStart })
    // Listed as created: the writer did not write the metadata again.
    expect((await store.list()).find((row) => row.id === child.header.id)).toMatchObject({
      eventCount: end + 1,
      updatedAt: child.header.createdAt,
    })
    // Events appended after the fork move the checkpoint on at close.
    appendAll(child, closedTurn(7, prompt(7)))
    await child.close()
    await source.close()
    const reopened = await store.open(child.header.id)
    expect(reopened.nextSeq).toBeGreaterThan(end + 1)
    expect(reopened.residentFrom).toBe(reopened.nextSeq)
    expect((await allEvents(reopened)).slice(0, end + 1)).toEqual(kept)
    await reopened.close()
  })
})

describe("a new JSONL session's lease", () => {
  it('is generation 1 of its new directory, held against this process', async () => {
    const directory = join(tempDirectory(), 'session')
    mkdirSync(directory)
    const lease = await createLeaseFile(directory, 's1')
    expect(readdirSync(directory)).toEqual(['writer.1.lock'])
    await expect(acquireLeaseFile(directory, 's1')).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    await lease.release()
    expect(readdirSync(directory)).toEqual(['writer.2.lock'])
  })

  it('falls back to the full protocol when another holder raced it to generation 1', async () => {
    const directory = join(tempDirectory(), 'session')
    mkdirSync(directory)
    const raced = join(directory, 'writer.1.lock')
    // A live holder (this process): busy.
    writeFileSync(raced, JSON.stringify({ pid: process.pid, host: hostname() }))
    await expect(createLeaseFile(directory, 's1')).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    // A holder that is gone: taken over at the next generation, as `acquireLeaseFile` does.
    writeFileSync(raced, JSON.stringify({ pid: 0, host: hostname() }))
    const lease = await createLeaseFile(directory, 's1')
    expect(readdirSync(directory)).toEqual(['writer.2.lock'])
    await lease.release()
  })
})
