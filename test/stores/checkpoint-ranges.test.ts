/**
 * The checkpoint's CRC per range (decision 0178), in every store: any read of covered history
 * (a page of `readEvents`, the kept events a compacted session loads) gives the events
 * appended; an edit of one covered event that keeps its shape is refused by the first read of
 * its range and by no read of another range; a fork's child gets ranges that check.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { LogCorruptError, type Session, type SessionEvent } from '../../src/core/index.js'
import type { Backend } from '../../src/stores/backend.js'
import { type Checkpoint, parseCheckpoint } from '../../src/stores/checkpoint.js'
import type { SessionStore, StoreOptions } from '../../src/stores/index.js'
import { loadEvents } from '../../src/stores/log-loader.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import { compaction, type Entry, user } from '../support/log-builder.js'
import '../support/property-seed.js'
import { allEvents } from '../support/session-events.js'
import { appendAll, closedTurn } from './support/events.js'
import { adminQuery } from './support/postgres.js'
import { backendOf, STORE_KINDS, type StoreKind, tempDirectory, urlOf } from './support/stores.js'

const stores: SessionStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

/** A store whose sessions write a checkpoint at every close, with ranges of `rangeCharacters`. */
async function setup(kind: StoreKind, rangeCharacters: number, directory = tempDirectory()) {
  const backend = await backendOf(kind, directory)
  const options: StoreOptions = { checkpointPolicy: { minCharacters: 0, rangeCharacters } }
  const store = createSessionStore(backend, options)
  stores.push(store)
  return { directory, backend, store }
}

async function storedCheckpoint(backend: Backend, id: string): Promise<Checkpoint | undefined> {
  return parseCheckpoint(await backend.readCheckpoint!(id))
}

/** The events `fromSeq..throughSeq` of `session` through `readEvents`. */
async function page(session: Session, fromSeq: number, throughSeq: number) {
  const events: SessionEvent[] = []
  for await (const batch of session.readEvents({ fromSeq, throughSeq })) events.push(...batch)
  return events
}

/** Where each range of `checkpoint` starts, by seq. */
const rangeStarts = (checkpoint: Checkpoint) =>
  checkpoint.ranges.map((_, index) =>
    index === 0 ? 0 : checkpoint.ranges[index - 1]!.throughSeq + 1,
  )

/** Ranges close where a batch ends once they hold their size; each is a run of seqs. */
function expectWellFormed(checkpoint: Checkpoint, rangeCharacters: number) {
  const { ranges } = checkpoint
  expect(ranges.at(-1)).toMatchObject({
    throughSeq: checkpoint.throughSeq,
    position: checkpoint.position,
    characters: checkpoint.characters,
  })
  for (let index = 0; index < ranges.length - 1; index++)
    expect(ranges[index]!.characters - (ranges[index - 1]?.characters ?? 0)).toBeGreaterThanOrEqual(
      rangeCharacters,
    )
}

const segment = fc.record({
  isTurn: fc.boolean(),
  text: fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.string({ unit: 'grapheme', maxLength: 60 }),
    fc.constantFrom('é', '✓ done', '😀', 'x'.repeat(900)),
  ),
  isFlushed: fc.boolean(),
})

describe.each(STORE_KINDS)('the ranges of a %s checkpoint', (kind) => {
  it('give back the appended events to any page read and to a compacted load (property)', async () => {
    const sizes = [97, 600, 5000]
    const directory = tempDirectory()
    const contexts: Awaited<ReturnType<typeof setup>>[] = []
    for (const size of sizes) contexts.push(await setup(kind, size, directory))
    await fc.assert(
      fc.asyncProperty(
        fc.nat(sizes.length - 1),
        fc.array(segment, { minLength: 4, maxLength: 24 }),
        fc.option(fc.nat(), { nil: undefined }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }),
        async (which, segments, keep, pages) => {
          const { backend, store } = contexts[which]!
          const size = sizes[which]!
          const session = await store.create()
          const id = session.header.id
          const starts: number[] = []
          let turn = 0
          for (const { isTurn, text, isFlushed } of segments) {
            starts.push(session.nextSeq)
            const entries: Entry[] = isTurn ? closedTurn(++turn, text) : [user(text)]
            appendAll(session, entries)
            if (isFlushed) await session.flush()
          }
          // A compaction keeping from a segment's start: the projection is loaded from there.
          if (keep !== undefined) appendAll(session, [compaction(starts[keep % starts.length]!)])
          appendAll(session, [user('last')])
          await session.close()
          const expected = [...session.residentEvents]
          const checkpoint = (await storedCheckpoint(backend, id))!
          expect(checkpoint.throughSeq).toBe(expected.length - 1)
          expectWellFormed(checkpoint, size)
          // A whole read (`read`, export) takes the covered part on the word of every range.
          const loaded = await loadEvents(backend, id, { checkpoint })
          expect(loaded.restored).toBeDefined()
          expect(loaded.events).toEqual(expected)

          const opened = await store.open(id)
          try {
            expect(opened.residentFrom).toBe(expected.length)
            for (const [from, length] of pages) {
              const first = from % expected.length
              const last = first + (length % (expected.length - first))
              expect(await page(opened, first, last)).toEqual(expected.slice(first, last + 1))
            }
            await opened.loadProjection()
            expect(opened.messages()).toEqual(session.messages())
            expect(await allEvents(opened)).toEqual(expected)
            // Appended in batches and let go of: read back through the ranges the session
            // summed as it appended.
            for (const [index, { text }] of segments.entries()) {
              appendAll(opened, [user(text)])
              if (index % 3 === 0) await opened.flush()
            }
            await opened.flush()
            const appended = await allEvents(opened)
            if (await opened.releaseHistory()) {
              expect(opened.residentFrom).toBe(appended.length)
              const [from, length] = pages[0]!
              const first = from % appended.length
              const last = first + (length % (appended.length - first))
              expect(await page(opened, first, last)).toEqual(appended.slice(first, last + 1))
              expect(await allEvents(opened)).toEqual(appended)
            }
          } finally {
            await opened.close()
          }
          const rewritten = (await storedCheckpoint(backend, id))!
          expectWellFormed(rewritten, size)
          const again = await store.open(id)
          try {
            expect(again.residentFrom).toBe(again.nextSeq)
            expect((await allEvents(again)).slice(0, expected.length)).toEqual(expected)
          } finally {
            await again.close()
          }
        },
      ),
      { numRuns: kind === 'postgres' ? 8 : kind === 'memory' ? 40 : 15 },
    )
  })

  it("gives a fork's child ranges that check, from an open source and a closed one", async () => {
    const { backend, store } = await setup(kind, 300)
    const source = await store.create()
    for (let turn = 1; turn <= 8; turn++) {
      appendAll(source, closedTurn(turn, `prompt ${turn} ${'é'.repeat(turn * 10)}`))
      await source.flush()
    }
    const events = [...source.residentEvents]
    const children: Session[] = [await store.fork(source.header.id)]
    await source.close()
    const sourceRanges = (await storedCheckpoint(backend, source.header.id))!.ranges
    expect(sourceRanges.length).toBe(8)
    // A closed source, at its end and inside its history (between two turns).
    children.push(await store.fork(source.header.id))
    children.push(await store.fork(source.header.id, { atSeq: 12 * 5 - 1 }))
    for (const child of children) {
      const cut = child.nextSeq - 1
      const kept = events.slice(0, cut + 1)
      expect(await allEvents(child)).toEqual(kept)
      await child.close()
      const checkpoint = (await storedCheckpoint(backend, child.header.id))!
      expect(checkpoint.throughSeq).toBe(cut)
      expectWellFormed(checkpoint, 300)
      // Copied whole from the open source: its ranges (in the child's positions). Scanned
      // from a closed one: summed again, closed where the copy's batches end.
      if (child === children[0])
        expect(checkpoint.ranges.map(({ throughSeq, crc }) => ({ throughSeq, crc }))).toEqual(
          sourceRanges.map(({ throughSeq, crc }) => ({ throughSeq, crc })),
        )
      // Opened from that checkpoint, every range is read and checked.
      const reopened = await store.open(child.header.id)
      try {
        expect(reopened.residentFrom).toBe(cut + 1)
        expect(await allEvents(reopened)).toEqual(kept)
        for (const start of rangeStarts(checkpoint))
          expect((await page(reopened, start, start))[0]?.data).toEqual(kept[start]!.data)
      } finally {
        await reopened.close()
      }
      expect((await storedCheckpoint(backend, child.header.id))?.ranges).toEqual(checkpoint.ranges)
    }
  })
})

describe.each(['jsonl', 'sqlite', 'postgres'] as const)(
  'one covered event edited in the %s store, its shape kept',
  (kind) => {
    /** A closed session of 120 messages, flushed one by one, in ranges of ~13 messages. */
    async function withRanges(compactFrom?: number) {
      const context = await setup(kind, 2000)
      const session = await context.store.create()
      for (let index = 0; index < 120; index++) {
        appendAll(session, [user(`message ${index} ${'x'.repeat(40)}`)])
        await session.flush()
      }
      if (compactFrom !== undefined) appendAll(session, [compaction(compactFrom)])
      await session.close()
      const id = session.header.id
      const checkpoint = (await storedCheckpoint(context.backend, id))!
      expect(checkpoint.ranges.length).toBeGreaterThan(4)
      return {
        ...context,
        session,
        id,
        checkpoint,
        text: await context.backend.readCheckpoint!(id),
      }
    }

    /** Replaces `from` by `to` in the stored line of `seq`. */
    async function edit(directory: string, id: string, seq: number, from: string, to: string) {
      if (kind === 'jsonl') {
        const path = join(directory, 'jsonl', 'sessions', id, 'events.jsonl')
        const lines = readFileSync(path, 'utf8').split('\n')
        expect(lines[seq + 1]).toContain(from)
        lines[seq + 1] = lines[seq + 1]!.replace(from, to)
        writeFileSync(path, lines.join('\n'))
      } else if (kind === 'sqlite') {
        const db = new Database(join(directory, 'sessions.db'))
        db.prepare(
          'UPDATE events SET line = replace(line, ?, ?) WHERE session_id = ? AND seq = ?',
        ).run(from, to, id, seq)
        db.close()
      } else {
        const schema = new URL(urlOf('postgres', directory)).searchParams.get('schema')
        await adminQuery(
          `UPDATE ${schema}.events SET line = replace(line, $1, $2) WHERE session_id = $3 AND seq = $4`,
          [from, to, id, seq],
        )
      }
    }

    /** The range holding `seq`: its first and last seq. */
    function rangeOf(checkpoint: Checkpoint, seq: number) {
      const index = checkpoint.ranges.findIndex((range) => range.throughSeq >= seq)
      return {
        index,
        first: rangeStarts(checkpoint)[index]!,
        last: checkpoint.ranges[index]!.throughSeq,
      }
    }

    async function expectRefused(read: Promise<unknown>) {
      await expect(read).rejects.toBeInstanceOf(LogCorruptError)
      await expect(read).rejects.toThrow(/changed after it was opened/)
    }

    for (const [what, edited] of [
      ['the same length', 'massage'],
      ['another length', 'message and more'],
    ] as const)
      it(`to ${what}: refused by a read of its range only, even one stopping before it`, async () => {
        const context = await withRanges()
        const { backend, store, id, checkpoint, session } = context
        // An event inside the range holding seq 90 (past seq 64), not its first.
        const range = rangeOf(checkpoint, 90)
        const seq = range.first + 2
        expect(range.first).toBeGreaterThan(64)
        expect(seq).toBeLessThanOrEqual(range.last)
        const from = `message ${seq} `
        const to = edited === 'massage' ? `massage ${seq} ` : `message ${seq} and more `
        await edit(context.directory, id, seq, from, to)
        // A whole read does not take the covered part on the checkpoint's word: it checks it all.
        const loaded = await loadEvents(backend, id, { checkpoint })
        expect(loaded.restored).toBeUndefined()
        expect(JSON.stringify(loaded.events[seq])).toContain(to)
        const events = session.residentEvents
        const isShifted = kind === 'jsonl' && to.length !== from.length
        const opened = await store.open(id)
        try {
          if (isShifted) {
            // The records after the edit moved: the checkpoint's tail does not fit, so the
            // whole log is checked at open and read as it now says.
            expect(opened.residentFrom).toBe(0)
            expect(JSON.stringify(opened.residentEvents[seq])).toContain(to)
            return
          }
          expect(opened.residentFrom).toBe(120)
          // Other ranges read fine, from the first, the one before and the one after.
          expect(await page(opened, 0, 3)).toEqual(events.slice(0, 4))
          expect(await page(opened, range.first - 2, range.first - 1)).toEqual(
            events.slice(range.first - 2, range.first),
          )
          expect(await page(opened, range.last + 1, range.last + 2)).toEqual(
            events.slice(range.last + 1, range.last + 3),
          )
          expect(await backend.readCheckpoint!(id)).toBe(context.text)
          // A page of the edited range that stops before the edited event: read to the
          // range's end and refused there.
          await expectRefused(page(opened, range.first, seq - 1))
        } finally {
          await opened.close()
        }
        expect(await storedCheckpoint(backend, id)).toBeUndefined()
        const again = await store.open(id)
        expect(again.residentFrom).toBe(0)
        expect(JSON.stringify(again.residentEvents[seq])).toContain(to)
        await again.close()
      })

    it('is refused by the kept-events load of a compacted session (from past seq 64)', async () => {
      const context = await withRanges(80)
      const { backend, store, id, checkpoint } = context
      expect(checkpoint.projection.from).toBe(80)
      await edit(context.directory, id, 90, 'message 90 ', 'massage 90 ')
      const opened = await store.open(id)
      try {
        expect(opened.residentFrom).toBe(121)
        await expectRefused(opened.loadProjection())
      } finally {
        await opened.close()
      }
      expect(await storedCheckpoint(backend, id)).toBeUndefined()
    })
  },
)
