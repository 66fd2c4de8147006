/**
 * The projection checkpoint (issue 17 item 2, decision 0148), in every store: opening from a
 * checkpoint plus the tail equals opening with the full check, for random logs and random
 * checkpoint seqs; a stale, damaged or mismatching checkpoint is ignored and rebuilt; a
 * covered line edited by hand is still refused as damage.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import Database from 'better-sqlite3'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import {
  applyCrashRepair,
  crashRepairOf,
  foldLog,
  LogCorruptError,
  openLiveSession,
  project,
  RudderError,
  type Session,
  type SessionEvent,
} from '../../src/core/index.js'
import type { Backend } from '../../src/stores/backend.js'
import {
  CHECKPOINT_VERSION,
  type Checkpoint,
  encodeCheckpoint,
  parseCheckpoint,
} from '../../src/stores/checkpoint.js'
import { encodeEvents } from '../../src/stores/codec.js'
import type { SessionStore, StoreOptions } from '../../src/stores/index.js'
import { loadEvents } from '../../src/stores/log-loader.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import { createSqliteBackend } from '../../src/stores/sqlite/sqlite-backend.js'
import { validLog } from '../support/arbitraries.js'
import {
  compaction,
  type Entry,
  stepEnd,
  stepStart,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'
import { allEvents } from '../support/session-events.js'
import { appendAll, appendEvents } from './support/events.js'
import { adminQuery } from './support/postgres.js'
import { backendOf, STORE_KINDS, type StoreKind, tempDirectory, urlOf } from './support/stores.js'

/** Every close writes a checkpoint, however small the log. */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }

/** A store over a backend the test can also reach directly; closed after the test. */
async function setup(kind: StoreKind, options: StoreOptions = EVERY_CLOSE) {
  const directory = tempDirectory()
  const backend = await backendOf(kind, directory)
  const store = createSessionStore(backend, options)
  stores.push(store)
  return { directory, backend, store }
}
const stores: SessionStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

/** Appends `events` to session `id` as a process that keeps no checkpoint would. */
async function appendRaw(backend: Backend, id: string, events: readonly SessionEvent[]) {
  if (events.length === 0) return
  const lease = await backend.acquire(id)
  try {
    const header = JSON.parse((await backend.readHeader(id)).text)
    const writer = await backend.openWriter(id, {
      header,
      eventCount: events[0]?.seq ?? 0,
      updatedAt: header.createdAt,
    })
    await writer.write(events, await encodeEvents(events, backend.blobs))
    await writer.close()
  } finally {
    await lease.release()
  }
}

async function storedCheckpoint(backend: Backend, id: string): Promise<Checkpoint | undefined> {
  return parseCheckpoint(await backend.readCheckpoint!(id))
}

/** The outcome of an append: 'ok', or the error's code and message. */
function outcome(session: Session, [type, data]: Entry): string {
  try {
    session.append(type, data as never)
    return 'ok'
  } catch (error) {
    return error instanceof RudderError ? `${error.code}: ${error.message}` : String(error)
  }
}

/**
 * Appends the next probe both sessions get, chosen from the state of `reference`. A compaction
 * keeps from `keptFrom` on at the earliest: a session opened from a checkpoint refuses to keep
 * events it does not hold (decision 0161).
 */
function probe(reference: Session, kind: number, pick: number, keptFrom: number): Entry {
  const state = foldLog(reference.residentEvents)
  const turn = state.openTurn?.turn ?? state.lastTurn
  switch (kind % 7) {
    case 0:
      return turnStart(state.lastTurn + 1)
    case 1:
      return turnEnd(turn)
    case 2:
      return stepStart(turn, (state.openTurn?.lastStep ?? 0) + 1)
    case 3:
      return stepEnd(turn, state.step?.step ?? 1)
    case 4:
      return user('probe')
    case 5:
      return compaction(keptFrom + (pick % (reference.residentEvents.length + 1 - keptFrom)))
    default:
      return turnStart(state.lastTurn + 2)
  }
}

/**
 * `checkpoint` as a checkpoint of `version` (2 or 3) stored it: one `checksum` over all the
 * covered records instead of `ranges`, its own CRC made right.
 */
function withOneChecksum(checkpoint: Checkpoint, version: number, checksum: number): string {
  const text = encodeCheckpoint(checkpoint)
  const body = text
    .slice(text.indexOf('"body":') + 7, -1)
    .replace(/"ranges":\[[^\]]*\]/, `"checksum":${checksum}`)
  expect(body).toContain(`"checksum":${checksum}`)
  return `{"version":${version},"crc":${crc32(body)},"body":${body}}`
}

const withoutTimes = (events: readonly SessionEvent[]) =>
  events.map(({ time: _time, ...rest }) => rest)

describe.each(STORE_KINDS)('the checkpoint of the %s store', (kind) => {
  it('opens from checkpoint + tail exactly as with the full check (property)', async () => {
    const { backend, store } = await setup(kind)
    await fc.assert(
      fc.asyncProperty(
        validLog(8),
        fc.nat(),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 8 }),
        async (log, pick, probes) => {
          const covered = pick % (log.length + 1)
          const first = await store.create()
          const id = first.header.id
          appendEvents(first, log.slice(0, covered))
          await first.close()
          // The rest is appended past the checkpoint by a process that does not update it.
          await appendRaw(backend, id, log.slice(covered))
          const expected = [...first.residentEvents, ...log.slice(covered)]

          const checkpoint = await storedCheckpoint(backend, id)
          expect(checkpoint?.throughSeq).toBe(covered > 0 ? covered - 1 : undefined)
          const fromCheckpoint = await loadEvents(backend, id, { checkpoint })
          const full = await loadEvents(backend, id)
          expect(fromCheckpoint.restored !== undefined).toBe(covered > 0)
          expect(fromCheckpoint.events).toEqual(full.events)
          expect(fromCheckpoint.checker.snapshot()).toEqual(full.checker.snapshot())
          expect(fromCheckpoint.sums).toEqual(full.sums)
          expect(full.events).toEqual(expected)

          const opened = await store.open(id)
          const reference = openLiveSession({
            header: opened.header,
            events: structuredClone(expected),
            checkInvariants: true,
          })
          const plan = crashRepairOf(reference.residentEvents)
          if (plan) applyCrashRepair(reference, plan)
          try {
            // Opened from the checkpoint: only the events after it are read, until asked for.
            expect(opened.residentFrom).toBe(covered)
            expect(opened.isProjectionLoaded).toBe(covered === 0)
            expect(opened.state()).toEqual(reference.state())
            const read = await allEvents(opened)
            expect(withoutTimes(read)).toEqual(withoutTimes(reference.residentEvents))
            await opened.loadProjection()
            expect(opened.messages()).toEqual(reference.messages())
            expect(opened.messages()).toEqual(project(read))
            expect(opened.requestHeader()).toEqual(reference.requestHeader())
            expect(opened.transcriptCharacters()).toBe(reference.transcriptCharacters())
            for (const [kindOf, at] of probes) {
              const next = probe(reference, kindOf, at, opened.residentFrom)
              expect(outcome(opened, next)).toBe(outcome(reference, next))
            }
            expect(opened.messages()).toEqual(reference.messages())
            expect(opened.transcriptCharacters()).toBe(reference.transcriptCharacters())
          } finally {
            await opened.close()
          }
          // Closing wrote a checkpoint of everything: the next open takes it and agrees.
          expect((await storedCheckpoint(backend, id))?.throughSeq).toBe(
            opened.nextSeq > 0 ? opened.nextSeq - 1 : undefined,
          )
          // (A probe may have left a turn open: opening again closes it, as after a crash.)
          const again = await store.open(id)
          try {
            const readAgain = await allEvents(again)
            expect(readAgain.slice(0, opened.nextSeq)).toEqual(await allEvents(opened))
            const whole = openLiveSession({
              header: again.header,
              events: structuredClone(readAgain),
            })
            await again.loadProjection()
            expect(again.messages()).toEqual(whole.messages())
            expect(again.transcriptCharacters()).toBe(whole.transcriptCharacters())
          } finally {
            await again.close()
          }
        },
      ),
      { seed: 20_261_217, numRuns: kind === 'memory' ? 60 : kind === 'postgres' ? 12 : 20 },
    )
  })

  /** A closed session of a few turns with a checkpoint of all of it. */
  async function checkpointed(options: StoreOptions = EVERY_CLOSE) {
    const context = await setup(kind, options)
    const session = await context.store.create()
    const log = fc.sample(validLog(6), { seed: 7, numRuns: 1 })[0]!
    appendEvents(session, log)
    appendAll(session, [user('last')])
    await session.close()
    const checkpoint = await storedCheckpoint(context.backend, session.header.id)
    expect(checkpoint?.throughSeq).toBe(session.residentEvents.length - 1)
    return { ...context, session, id: session.header.id, checkpoint: checkpoint! }
  }

  /** Opens `id`, expects the log as written, and that closing rebuilt a usable checkpoint. */
  async function expectIgnoredAndRebuilt(
    context: Awaited<ReturnType<typeof checkpointed>>,
    damaged: string,
  ) {
    const { backend, store, id, session } = context
    await backend.writeCheckpoint!(id, damaged)
    const loaded = await loadEvents(backend, id, {
      checkpoint: parseCheckpoint(await backend.readCheckpoint!(id)),
    })
    expect(loaded.restored).toBeUndefined()
    expect(loaded.events).toEqual(session.residentEvents)
    const opened = await store.open(id)
    expect(opened.residentFrom).toBe(0)
    expect(opened.residentEvents).toEqual(session.residentEvents)
    expect(opened.messages()).toEqual(session.messages())
    expect(opened.transcriptCharacters()).toBe(session.transcriptCharacters())
    await opened.close()
    const rebuilt = await storedCheckpoint(backend, id)
    expect(rebuilt?.throughSeq).toBe(session.residentEvents.length - 1)
    expect((await loadEvents(backend, id, { checkpoint: rebuilt })).restored).toBeDefined()
  }

  it('ignores a checkpoint of garbage bytes, and rebuilds it', async () => {
    const context = await checkpointed()
    await expectIgnoredAndRebuilt(context, '\u00ff garbage {"version":1')
  })

  it('ignores a checkpoint whose own checksum does not match (a damaged body)', async () => {
    const context = await checkpointed()
    const text = encodeCheckpoint(context.checkpoint)
    await expectIgnoredAndRebuilt(context, text.replace('"throughSeq":', '"throughSeq":1'))
  })

  /**
   * Opens `id` from a checkpoint that does not fit the log in a way only reading the covered
   * events tells (decision 0161): that read is refused, the checkpoint discarded, and the next
   * open checks the whole log and writes a good one.
   */
  async function expectFoundWhenRead(
    context: Awaited<ReturnType<typeof checkpointed>>,
    misfit: string,
  ) {
    const { backend, store, id, session } = context
    await backend.writeCheckpoint!(id, misfit)
    const opened = await store.open(id)
    expect(opened.residentFrom).toBe(context.checkpoint.throughSeq + 1)
    const loading = opened.loadProjection()
    await expect(loading).rejects.toBeInstanceOf(LogCorruptError)
    await expect(loading).rejects.toThrow(/changed after it was opened/)
    expect(() => opened.messages()).toThrow(/loadProjection/)
    await opened.close()
    expect(await storedCheckpoint(backend, id)).toBeUndefined()
    const again = await store.open(id)
    expect(again.residentFrom).toBe(0)
    expect(again.residentEvents).toEqual(session.residentEvents)
    expect(again.messages()).toEqual(session.messages())
    expect(again.transcriptCharacters()).toBe(session.transcriptCharacters())
    expect(outcome(again, turnEnd(999))).toMatch(/^INVARIANT_VIOLATION/)
    await again.close()
    expect((await storedCheckpoint(backend, id))?.throughSeq).toBe(context.checkpoint.throughSeq)
  }

  it('finds a checkpoint whose checksum of the log does not match when the log is read', async () => {
    const context = await checkpointed()
    const ranges = context.checkpoint.ranges.map((range) => ({
      ...range,
      crc: (range.crc + 1) >>> 0,
    }))
    const wrong = { ...context.checkpoint, ranges }
    await expectFoundWhenRead(context, encodeCheckpoint(wrong))
  })

  it('ignores a checkpoint of a seq beyond the log', async () => {
    const context = await checkpointed()
    const { checkpoint } = context
    const beyond: Checkpoint = {
      ...checkpoint,
      throughSeq: checkpoint.throughSeq + 5,
      position: checkpoint.position + 5,
      checker: {
        ...checkpoint.checker,
        nextSeq: checkpoint.checker.nextSeq + 5,
        boundaries: new Uint8Array(checkpoint.checker.nextSeq + 5),
      },
    }
    await expectIgnoredAndRebuilt(context, encodeCheckpoint(beyond))
  })

  it('ignores a checkpoint of another format version', async () => {
    const context = await checkpointed()
    const text = encodeCheckpoint(context.checkpoint)
    const other = `{"version":${CHECKPOINT_VERSION + 1},`
    await expectIgnoredAndRebuilt(context, text.replace(`{"version":${CHECKPOINT_VERSION},`, other))
  })

  it('ignores a version 2 checkpoint (its checksum of another form), and rebuilds it', async () => {
    const context = await checkpointed()
    const { backend, id, checkpoint } = context
    // What version 2 summed in every store: the stored lines without their line ends.
    let textSum = 0
    for await (const batch of backend.records(id, { throughSeq: checkpoint.throughSeq }))
      for (const record of batch) if (record.kind === 'line') textSum = crc32(record.text, textSum)
    await expectIgnoredAndRebuilt(context, withOneChecksum(checkpoint, 2, textSum))
  })

  it('ignores a version 3 checkpoint (one checksum over all it covers), and rebuilds it', async () => {
    const context = await checkpointed()
    const { checkpoint } = context
    // Version 3's checksum is the CRC of all covered records: the one range's CRC here.
    expect(checkpoint.ranges).toHaveLength(1)
    await expectIgnoredAndRebuilt(
      context,
      withOneChecksum(checkpoint, 3, checkpoint.ranges[0]!.crc),
    )
  })

  it('finds a checkpoint whose projection does not fit the log when it is loaded', async () => {
    const context = await checkpointed()
    const { checkpoint, session } = context
    const beyond: Checkpoint = {
      ...checkpoint,
      projection: { from: checkpoint.throughSeq + 2 },
    }
    expect(parseCheckpoint(encodeCheckpoint(beyond))).toBeUndefined()
    // A header where the log has another event: it parses, but does not fit.
    const silent = session.residentEvents.findIndex((event) =>
      ['turn/start', 'step/start', 'step/end', 'turn/end'].includes(event.type),
    )
    expect(silent).toBeGreaterThanOrEqual(0)
    const misfit: Checkpoint = {
      ...checkpoint,
      projection: { from: checkpoint.throughSeq + 1, headerSeq: silent },
    }
    await expectFoundWhenRead(context, encodeCheckpoint(misfit))
  })

  it('writes no checkpoint at close below the size policy, and one at a durability point past it', async () => {
    const { backend, store } = await setup(kind, {
      checkpointPolicy: { minCharacters: 1e12, everyEvents: 3, everyCharacters: 1e12 },
    })
    const session = await store.create()
    appendAll(session, [user('a')])
    await session.flush()
    expect(await backend.readCheckpoint!(session.header.id)).toBeUndefined()
    appendAll(session, [user('b'), user('c')])
    await session.flush()
    await session.close()
    expect((await storedCheckpoint(backend, session.header.id))?.throughSeq).toBe(2)
  })

  it('takes a checkpoint at a durability point only where checker and projection stand', async () => {
    const { backend, store } = await setup(kind, {
      checkpointPolicy: { minCharacters: 1e12, everyEvents: 2, everyCharacters: 1e12 },
    })
    const session = await store.create()
    const id = session.header.id
    appendAll(session, [turnStart(1), user('a')])
    // An append lands while the batch is being written: no checkpoint of that batch, whose
    // end the checker and projector have already passed; the next batch is still due one
    // (a checkpoint of the first would have made it not due yet).
    const flushing = session.flush()
    appendAll(session, [user('b')])
    await flushing
    await session.flush()
    // Closing waits for the checkpoint written behind (and writes none itself, by the policy).
    await session.close()
    const checkpoint = await storedCheckpoint(backend, id)
    expect(checkpoint?.throughSeq).toBe(2)
    const fromCheckpoint = await loadEvents(backend, id, { checkpoint })
    const full = await loadEvents(backend, id)
    expect(fromCheckpoint.restored).toBeDefined()
    expect(fromCheckpoint.checker.snapshot()).toEqual(full.checker.snapshot())
    expect(checkpoint?.projection).toEqual({ from: 0 })
  })

  it('keeps working when a checkpoint cannot be written', async () => {
    const directory = tempDirectory()
    const inner = await backendOf(kind, directory)
    const backend: Backend = {
      ...inner,
      async writeCheckpoint() {
        throw new Error('disk full')
      },
    }
    const store = createSessionStore(backend, EVERY_CLOSE)
    stores.push(store)
    const session = await store.create()
    appendAll(session, [user('a'), user('b')])
    await session.close()
    expect(await inner.readCheckpoint!(session.header.id)).toBeUndefined()
    const opened = await store.open(session.header.id)
    expect(opened.residentEvents).toEqual(session.residentEvents)
    await opened.close()
  })

  it('gives a fork its own checkpoint at the cut, and the source keeps its own', async () => {
    const context = await checkpointed()
    const source = await context.backend.readCheckpoint!(context.id)
    const child = await context.store.fork(context.id)
    // Stored with the copy (decision 0019), in the child's own positions: a JSONL child's
    // record of the cut ends at the end of its own log, after its own header.
    // (Memory and PostgreSQL store it when the child closes.)
    const own = await storedCheckpoint(context.backend, child.header.id)
    const isStoredWithCopy = kind === 'jsonl' || kind === 'sqlite'
    expect(own?.throughSeq).toBe(isStoredWithCopy ? context.checkpoint.throughSeq : undefined)
    if (kind === 'jsonl')
      expect(own?.position).toBe(
        statSync(join(context.directory, 'jsonl', 'sessions', child.header.id, 'events.jsonl'))
          .size,
      )
    expect(await context.backend.readCheckpoint!(context.id)).toBe(source)
    // Forked by a scan of the kept records: the child reads them on demand.
    expect(child.residentFrom).toBe(context.checkpoint.throughSeq + 1)
    await child.loadProjection()
    expect(child.messages()).toEqual(context.session.messages())
    appendAll(child, [user('in the child')])
    await child.close()
    expect((await storedCheckpoint(context.backend, child.header.id))?.throughSeq).toBe(
      child.nextSeq - 1,
    )
    const reopened = await context.store.open(child.header.id)
    expect(reopened.residentFrom).toBe(child.nextSeq)
    expect(await allEvents(reopened)).toEqual(await allEvents(child))
    await reopened.loadProjection()
    expect(reopened.messages()).toEqual(child.messages())
    await reopened.close()
  })
})

describe.each(['jsonl', 'sqlite', 'postgres'] as const)(
  'a covered line edited by hand in the %s store',
  (kind) => {
    async function withCheckpoint() {
      const { directory, backend, store } = await setup(kind)
      const session = await store.create()
      appendAll(session, [user('first line'), user('second line'), user('third line')])
      await session.close()
      expect((await storedCheckpoint(backend, session.header.id))?.throughSeq).toBe(2)
      return { directory, backend, store, id: session.header.id }
    }

    /** Replaces `from` by `to` in the stored line of seq 1. */
    async function edit(directory: string, id: string, from: string, to: string) {
      if (kind === 'jsonl') {
        const path = join(directory, 'jsonl', 'sessions', id, 'events.jsonl')
        writeFileSync(path, readFileSync(path, 'utf8').replace(from, to))
      } else if (kind === 'sqlite') {
        const db = new Database(join(directory, 'sessions.db'))
        db.prepare(
          'UPDATE events SET line = replace(line, ?, ?) WHERE session_id = ? AND seq = 1',
        ).run(from, to, id)
        db.close()
      } else {
        const schema = new URL(urlOf('postgres', directory)).searchParams.get('schema')
        await adminQuery(
          `UPDATE ${schema}.events SET line = replace(line, $1, $2) WHERE session_id = $3 AND seq = 1`,
          [from, to, id],
        )
      }
    }

    /**
     * Opening reads only past the checkpoint (decision 0161), so the edit is found when the
     * covered events are read: that read is refused and the checkpoint discarded, and the next
     * open checks the whole log.
     */
    async function expectFoundOnRead(backend: Backend, store: SessionStore, id: string) {
      const opened = await store.open(id)
      expect(opened.residentFrom).toBe(3)
      const loading = opened.loadProjection()
      await expect(loading).rejects.toBeInstanceOf(LogCorruptError)
      await expect(loading).rejects.toMatchObject({
        message: expect.stringMatching(/changed after it was opened.*open it again/),
      })
      await expect(allEvents(opened)).rejects.toBeInstanceOf(LogCorruptError)
      await opened.close()
      expect(await storedCheckpoint(backend, id)).toBeUndefined()
    }

    it('is refused as LogCorruptError when the edit breaks the event', async () => {
      const { directory, backend, store, id } = await withCheckpoint()
      // Same length, so the JSONL positions still match: only the checksum tells.
      await edit(directory, id, '"type":"text"', '"type":"tezt"')
      await expectFoundOnRead(backend, store, id)
      const attempt = store.open(id)
      await expect(attempt).rejects.toBeInstanceOf(LogCorruptError)
      await expect(attempt).rejects.toMatchObject({
        message: expect.stringMatching(/rudder sessions repair/),
      })
    })

    it('is read as the log says when the edit leaves a valid event', async () => {
      const { directory, backend, store, id } = await withCheckpoint()
      await edit(directory, id, 'second line', 'second LINE')
      const checkpoint = await storedCheckpoint(backend, id)
      expect((await loadEvents(backend, id, { checkpoint })).restored).toBeUndefined()
      await expectFoundOnRead(backend, store, id)
      const opened = await store.open(id)
      expect(opened.residentFrom).toBe(0)
      expect(opened.messages()[1]).toEqual({
        role: 'user',
        content: [{ type: 'text', text: 'second LINE' }],
      })
      await opened.close()
    })
  },
)

describe('the boundaries a checkpoint carries', () => {
  it('round-trip as one bit per seq, and a bit past its seq refuses the checkpoint', async () => {
    const { backend, store } = await setup('jsonl')
    const session = await store.create()
    appendAll(session, [turnStart(1), user('one'), user('two'), turnEnd(1), user('three')])
    await session.close()
    const text = (await backend.readCheckpoint!(session.header.id))!
    const checkpoint = parseCheckpoint(text)!
    const { nextSeq, boundaries } = checkpoint.checker
    expect(nextSeq).toBe(5)
    expect(boundaries.length).toBe(1)
    expect(parseCheckpoint(encodeCheckpoint(checkpoint))!.checker.boundaries).toEqual(boundaries)
    // The same checkpoint with seq 6 marked (its CRC made right): a later event could keep
    // a compaction from a seq that was never a boundary.
    const stored = Buffer.from(boundaries).toString('base64')
    const body = text.slice(text.indexOf('"body":') + 7, -1)
    const withBits = (bits: string) => {
      const changed = body.replace(`"boundaries":"${stored}"`, `"boundaries":"${bits}"`)
      return `{"version":${CHECKPOINT_VERSION},"crc":${crc32(changed)},"body":${changed}}`
    }
    expect(parseCheckpoint(withBits(stored))).toEqual(checkpoint)
    const marked = Buffer.from([boundaries[0]! | (1 << 6)]).toString('base64')
    expect(withBits(marked)).toContain(marked)
    expect(parseCheckpoint(withBits(marked))).toBeUndefined()
  })
})

describe('the JSONL checksum (decision 0162)', () => {
  /**
   * Each byte of the covered part of the file (every event line and its newline) changed in
   * turn: the checkpoint never vouches for it. Opening either checks the whole log (the changed
   * line no longer sits where the checkpoint says) or reads past the checkpoint, and then
   * reading the covered events is refused; a full check refuses the damage or reads the log as
   * it now says.
   */
  it('takes no changed byte of the covered lines, newlines included, on its word', async () => {
    const { directory, backend, store } = await setup('jsonl')
    const session = await store.create()
    appendAll(session, [turnStart(1), user('one'), user('two'), turnEnd(1)])
    await session.close()
    const id = session.header.id
    const path = join(directory, 'jsonl', 'sessions', id, 'events.jsonl')
    const original = readFileSync(path)
    const checkpointText = (await backend.readCheckpoint!(id))!
    const checkpoint = parseCheckpoint(checkpointText)!
    expect(checkpoint.throughSeq).toBe(3)
    expect(checkpoint.ranges.map((range) => range.crc)).toEqual([
      crc32(original.subarray(original.indexOf(10) + 1)),
    ])
    const outcomes = new Set<string>()
    for (let at = original.indexOf(10) + 1; at < checkpoint.position; at++) {
      const changed = Buffer.from(original)
      changed[at] = changed[at]! ^ 1
      writeFileSync(path, changed)
      await backend.writeCheckpoint!(id, checkpointText)
      let opened: (Session & { residentFrom: number }) | undefined
      try {
        opened = await store.open(id)
      } catch (error) {
        expect(error).toBeInstanceOf(RudderError)
        expect(['LOG_CORRUPT', 'UNKNOWN_EVENT_TYPE']).toContain((error as RudderError).code)
        outcomes.add('refused at open')
        continue
      }
      try {
        if (opened.residentFrom === 0) outcomes.add('checked in full')
        else {
          await expect(opened.loadProjection()).rejects.toBeInstanceOf(LogCorruptError)
          outcomes.add('refused when read')
        }
      } finally {
        await opened.close()
      }
    }
    expect([...outcomes].sort()).toEqual([
      'checked in full',
      'refused at open',
      'refused when read',
    ])
    writeFileSync(path, original)
  })
})

describe('the JSONL checksum summed over the bytes written (decision 0167)', () => {
  // The writer continues the checkpoint's checksum over the very buffer it writes, instead of
  // the session store encoding the lines again: it must equal what a full load sums from the
  // file, for any text (multi-byte, astral, lone surrogates, which the line escapes), over
  // batches of one or more events.
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('é', '✓ done', '😀', '\ud800', 'a\nb', 'x'.repeat(2_000)),
  )
  it('equals the CRC-32 of the file’s event lines and the checksum a fresh load computes', async () => {
    const { directory, backend, store } = await setup('jsonl')
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(text, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        async (batches) => {
          const session = await store.create()
          appendAll(session, [turnStart(1)])
          for (const batch of batches) {
            for (const value of batch) appendAll(session, [user(value)])
            await session.flush()
          }
          appendAll(session, [turnEnd(1)])
          await session.close()
          const id = session.header.id
          const bytes = readFileSync(join(directory, 'jsonl', 'sessions', id, 'events.jsonl'))
          const checkpoint = (await storedCheckpoint(backend, id))!
          expect(checkpoint.throughSeq).toBe(session.nextSeq - 1)
          expect(checkpoint.position).toBe(bytes.length)
          expect(checkpoint.ranges.map((range) => range.crc)).toEqual([
            crc32(bytes.subarray(bytes.indexOf(10) + 1)),
          ])
          const loaded = await loadEvents(backend, id)
          expect(loaded.sums.ranges).toEqual([])
          expect(checkpoint.ranges[0]!.crc).toBe(loaded.sums.crc)
        },
      ),
      { numRuns: 25 },
    )
  })
})

describe('the PostgreSQL checksum summed while the server commits (decision 0176)', () => {
  // The writer continues the running checksum over a batch's lines after sending them, while
  // the server commits: it must equal what a full load sums from the rows, for any text.
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('é', '✓ done', '😀', '\ud800', 'a\nb', 'x'.repeat(2_000)),
  )
  it('equals the checksum a fresh load computes, and the checkpoint is used', async () => {
    const { backend, store } = await setup('postgres')
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(text, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        async (batches) => {
          const session = await store.create()
          appendAll(session, [turnStart(1)])
          for (const batch of batches) {
            for (const value of batch) appendAll(session, [user(value)])
            await session.flush()
          }
          appendAll(session, [turnEnd(1)])
          await session.close()
          const id = session.header.id
          const checkpoint = (await storedCheckpoint(backend, id))!
          expect(checkpoint.throughSeq).toBe(session.nextSeq - 1)
          const { sums } = await loadEvents(backend, id)
          expect(checkpoint.ranges.map((range) => range.crc)).toEqual([
            ...sums.ranges.map((range) => range.crc),
            sums.crc,
          ])
          // Opened from it: nothing before its seq is held.
          const reopened = await store.open(id)
          expect(reopened.residentFrom).toBe(session.nextSeq)
          await reopened.close()
        },
      ),
      { numRuns: 15 },
    )
  })
})

describe('the SQLite schema', () => {
  it('migrates a version 1 database forward, keeping its sessions', async () => {
    const directory = tempDirectory()
    const path = join(directory, 'sessions.db')
    const first = createSessionStore(createSqliteBackend(path, undefined))
    const session = await first.create()
    appendAll(session, [user('kept')])
    await session.close()
    await first.close()
    const db = new Database(path)
    db.exec('DROP TABLE checkpoints')
    db.exec('ALTER TABLE sessions DROP COLUMN search_indexed_through')
    db.pragma('user_version = 1')
    db.close()
    const store = createSessionStore(createSqliteBackend(path, undefined), EVERY_CLOSE)
    stores.push(store)
    const opened = await store.open(session.header.id)
    expect(opened.residentEvents).toEqual(session.residentEvents)
    await opened.close()
    const check = new Database(path, { readonly: true })
    expect(check.pragma('user_version', { simple: true })).toBe(3)
    expect(check.prepare('SELECT count(*) AS n FROM checkpoints').get()).toEqual({ n: 1 })
    check.close()
  })
})
