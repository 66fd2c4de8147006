/**
 * The JSONL format on disk: torn tails from every possible truncation, corruption in the
 * committed part, salvage, versioning and unknown event types, and the cost of durability.
 */
import {
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkLog, LogCorruptError } from '../../src/index.js'
import { openStore, type StoreCounters } from '../../src/stores/index.js'
import {
  assistant,
  header,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'
import { appendAll, typesOf } from './support/events.js'
import { storeOf, tempDirectory } from './support/stores.js'

const logPath = (directory: string, id: string) =>
  join(directory, 'jsonl', 'sessions', id, 'events.jsonl')

const smallLog = [
  turnStart(1),
  user('hi'),
  stepStart(1, 1),
  header(),
  assistant('', [{ id: 'c1' }]),
  toolCall('c1'),
  toolResult('c1', 'out'),
  stepEnd(1, 1),
  turnEnd(1),
  user('X', 'plugin'),
  turnStart(2),
  user('go'),
  stepStart(2, 1),
  assistant('', [{ id: 'c2' }, { id: 'c3' }]),
  toolCall('c2'),
]

async function writtenSession(directory: string, entries = smallLog) {
  const store = await storeOf('jsonl', directory)
  const session = await store.create({ title: 'small' })
  appendAll(session, entries)
  await session.close()
  return { store, session, bytes: readFileSync(logPath(directory, session.header.id)) }
}

/** A store holding only a copy of `bytes` as the log of session `id`. */
async function storeWithLog(id: string, bytes: Uint8Array) {
  const directory = tempDirectory()
  mkdirSync(join(directory, 'jsonl', 'sessions', id), { recursive: true })
  writeFileSync(logPath(directory, id), bytes)
  return { directory, store: await storeOf('jsonl', directory) }
}

function replaceLine(bytes: Buffer, lineIndex: number, replace: (line: string) => string): Buffer {
  const lines = bytes.toString('utf8').split('\n')
  lines[lineIndex] = replace(lines[lineIndex]!)
  return Buffer.from(lines.join('\n'))
}

describe('the JSONL store on disk', () => {
  it('opens every byte-truncation of a log repaired, or refuses it with a clear error', async () => {
    const { session, bytes } = await writtenSession(tempDirectory(), [
      user('X', 'plugin'),
      turnStart(1),
      user('hi'),
      stepStart(1, 1),
      assistant('', [{ id: 'c1' }, { id: 'c2' }]),
      toolCall('c1'),
    ])
    const id = session.header.id
    const headerEnd = bytes.indexOf(10) + 1
    const directory = tempDirectory()

    // Each truncation gets its own store directory, so they can run concurrently (the syncs
    // of concurrent repairs share journal commits, which keeps this test quick).
    async function check(length: number): Promise<void> {
      const root = join(directory, `cut-${length}`)
      mkdirSync(join(root, 'sessions', id), { recursive: true })
      writeFileSync(join(root, 'sessions', id, 'events.jsonl'), bytes.subarray(0, length))
      const cutStore = await openStore(`jsonl:${root}`)
      try {
        if (length < headerEnd) {
          await expect(cutStore.open(id), `length ${length}`).rejects.toThrowError(
            /header line is incomplete/,
          )
          return
        }
        const cut = bytes.subarray(0, length)
        const kept = cut.toString('utf8').split('\n').length - 2
        const torn = length - (cut.lastIndexOf(10) + 1)
        const opened = await cutStore.open(id)
        expect(opened.residentEvents.slice(0, kept), `length ${length}`).toEqual(
          session.residentEvents.slice(0, kept),
        )
        expect(opened.repairs[0]?.kind === 'torn-tail', `length ${length}`).toBe(torn > 0)
        if (torn > 0) expect(opened.repairs[0]).toMatchObject({ bytes: torn })
        expect(checkLog(opened.residentEvents), `length ${length}`).toEqual([])
        await opened.close()
        const again = await cutStore.read(id)
        expect(again.events, `length ${length}`).toEqual(opened.residentEvents)
        expect(again.tornTail).toBeUndefined()
      } finally {
        await cutStore.close()
      }
    }
    const lengths = Array.from({ length: bytes.length + 1 }, (_, length) => length)
    for (let index = 0; index < lengths.length; index += 32)
      await Promise.all(lengths.slice(index, index + 32).map(check))
  })

  it('refuses damage before the last line, naming file, line and the repair command', async () => {
    const { session, bytes } = await writtenSession(tempDirectory())
    const id = session.header.id
    const damaged = replaceLine(bytes, 5, (line) => line.slice(0, 20))
    const { directory, store } = await storeWithLog(id, damaged)
    const attempt = store.open(id)
    await expect(attempt).rejects.toBeInstanceOf(LogCorruptError)
    await expect(attempt).rejects.toThrowError(`${logPath(directory, id)}:6`)
    await expect(attempt).rejects.toThrowError(`rudder sessions repair ${id}`)
    await expect(store.read(id)).rejects.toBeInstanceOf(LogCorruptError)
    // The lease was released: the failure left nothing held.
    await expect(store.open(id)).rejects.toBeInstanceOf(LogCorruptError)
  })

  it('refuses a line that breaks an invariant, naming the rule', async () => {
    const { session, bytes } = await writtenSession(tempDirectory())
    const id = session.header.id
    // Line 8 is the tool/result of c1 (seq 6); make it answer a call that was never made.
    const damaged = replaceLine(bytes, 7, (line) => line.replace('"c1"', '"c9"'))
    const { store } = await storeWithLog(id, damaged)
    await expect(store.open(id)).rejects.toThrowError(/tool-pairing/)
  })

  it('salvages the valid prefix into a new session and leaves the original untouched', async () => {
    const { session, bytes } = await writtenSession(tempDirectory())
    const id = session.header.id
    const damaged = replaceLine(bytes, 8, () => '{"seq": oops')
    const { directory, store } = await storeWithLog(id, damaged)
    const result = await store.repair(id)
    expect(result.sourceId).toBe(id)
    expect(result.keptEvents).toBe(7)
    expect(result.problem?.location).toBe(`${logPath(directory, id)}:9`)
    const salvaged = result.session
    expect(salvaged.header.id).not.toBe(id)
    expect(salvaged.header.parent).toEqual({ sessionId: id, seq: 6 })
    expect(salvaged.header.title).toBe('small (repaired)')
    // Seqs 0..6 end inside step 1 of turn 1, so the copy is closed like a crash.
    expect(salvaged.residentEvents.slice(0, 7)).toEqual(session.residentEvents.slice(0, 7))
    expect(typesOf(salvaged.residentEvents.slice(7))).toBe('step/end turn/end')
    expect(checkLog(salvaged.residentEvents)).toEqual([])
    await salvaged.close()
    expect(readFileSync(logPath(directory, id))).toEqual(damaged)
    expect((await store.read(salvaged.header.id)).events).toEqual(salvaged.residentEvents)
  })

  it('salvages a log whose header is damaged, with a fresh header', async () => {
    const { session, bytes } = await writtenSession(tempDirectory())
    const id = session.header.id
    const { store } = await storeWithLog(
      id,
      replaceLine(bytes, 0, () => '{"id": 1}'),
    )
    await expect(store.open(id)).rejects.toBeInstanceOf(LogCorruptError)
    const result = await store.repair(id)
    expect(result.keptEvents).toBe(smallLog.length)
    expect(result.session.header.title).toBe(`session ${id} (repaired)`)
    await result.session.close()
  })

  it('refuses a log written by a newer rudder, saying to upgrade', async () => {
    const { session, bytes } = await writtenSession(tempDirectory())
    const id = session.header.id
    const newer = replaceLine(bytes, 0, (line) =>
      line.replace('"formatVersion":1', '"formatVersion":2'),
    )
    const { store } = await storeWithLog(id, newer)
    await expect(store.open(id)).rejects.toMatchObject({ code: 'FORMAT_TOO_NEW' })
    await expect(store.open(id)).rejects.toThrowError(/newer rudder.*upgrade/)
    await expect(store.repair(id)).rejects.toMatchObject({ code: 'FORMAT_TOO_NEW' })
  })

  it('refuses an unknown event type unless it is ignorable', async () => {
    const { session, bytes } = await writtenSession(tempDirectory())
    const id = session.header.id
    const lines = bytes.toString('utf8').split('\n')
    const unknown = (ignorable: boolean) =>
      `{"seq":15,"time":1,"type":"plugin/note","data":{"n":1}${ignorable ? ',"ignorable":true' : ''}}`
    const refused = await storeWithLog(
      id,
      Buffer.from([...lines.slice(0, -1), unknown(false), ''].join('\n')),
    )
    await expect(refused.store.open(id)).rejects.toMatchObject({ code: 'UNKNOWN_EVENT_TYPE' })
    await expect(refused.store.open(id)).rejects.toThrowError(/plugin\/note.*not marked ignorable/)
    const kept = await storeWithLog(
      id,
      Buffer.from([...lines.slice(0, -1), unknown(true), ''].join('\n')),
    )
    const opened = await kept.store.open(id)
    expect(opened.residentEvents[15]).toEqual({
      seq: 15,
      time: 1,
      type: 'plugin/note',
      data: { n: 1 },
      ignorable: true,
    })
    await opened.close()
  })

  it('refuses an envelope with a key rudder never writes', async () => {
    const { session, bytes } = await writtenSession(tempDirectory())
    const id = session.header.id
    const { store } = await storeWithLog(
      id,
      replaceLine(bytes, 3, (line) => `${line.slice(0, -1)},"extra":1}`),
    )
    await expect(store.open(id)).rejects.toThrowError(/Unrecognized key/)
  })

  it('syncs once per flush, never per event, and not at all when nothing is new', async () => {
    const counters: StoreCounters = { syncs: 0, bytesWritten: 0, batches: 0 }
    const store = await storeOf('jsonl', tempDirectory(), { counters })
    const session = await store.create()
    const before = { ...counters }
    for (let index = 0; index < 100; index++) appendAll(session, [user(`context ${index}`, 'ctx')])
    await session.flush()
    await session.flush()
    expect(counters.batches - before.batches).toBe(1)
    expect(counters.syncs - before.syncs).toBe(1)
    await session.close()
  })

  it.skipIf(!existsSync('/proc/self/fdinfo'))(
    'appends through an O_DSYNC handle: each batch write returns durable, one trip to the disk',
    async () => {
      const directory = tempDirectory()
      const store = await storeOf('jsonl', directory)
      const session = await store.create()
      appendAll(session, [user('one', 'ctx')])
      await session.flush()
      const path = logPath(directory, session.header.id)
      const flags = readdirSync('/proc/self/fd')
        .filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`) === path
          } catch {
            return false // closed since it was listed
          }
        })
        .map((fd) => /flags:\s+([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!)
        .map((octal) => Number.parseInt(octal, 8))
      expect(flags).toHaveLength(1)
      expect(flags[0]! & constants.O_DSYNC).toBe(constants.O_DSYNC)
      expect(flags[0]! & constants.O_APPEND).toBe(constants.O_APPEND)
      await session.close()
    },
  )

  it('keeps a session readable by a second store while its writer appends', async () => {
    const directory = tempDirectory()
    const { session } = await writtenSession(directory)
    const other = await openStore(`jsonl:${join(directory, 'jsonl')}`)
    try {
      const snapshot = await other.read(session.header.id)
      expect(snapshot.events).toEqual(session.residentEvents)
      expect(snapshot.openTurn).toBe(2)
    } finally {
      await other.close()
    }
  })

  describe('fork copies bytes (decision 0067)', () => {
    /** The bytes of a log after its header line. */
    const body = (bytes: Buffer) => bytes.subarray(bytes.indexOf(10) + 1)
    /** The first `count` event lines of a log (after its header), as bytes. */
    /** A JSONL store with a session of `smallLog` to fork, closed or open here and flushed. */
    async function sourceOfFork(closeSource: boolean) {
      const directory = tempDirectory()
      const store = await storeOf('jsonl', directory)
      const source = await store.create({ title: 'source' })
      appendAll(source, smallLog)
      if (closeSource) await source.close()
      else await source.flush()
      return { directory, store, source }
    }

    function prefix(bytes: Buffer, count: number): Buffer {
      let end = bytes.indexOf(10) + 1
      for (let line = 0; line < count; line++) end = bytes.indexOf(10, end) + 1
      return bytes.subarray(bytes.indexOf(10) + 1, end)
    }

    it.each([
      ['open here', false],
      ['closed', true],
    ])(
      'writes a new header line, then the parent lines byte for byte (source %s)',
      async (_, closeSource) => {
        const { directory, store, source } = await sourceOfFork(closeSource)
        const parentBytes = readFileSync(logPath(directory, source.header.id))
        for (const atSeq of [undefined, 8]) {
          const child = await store.fork(source.header.id, atSeq === undefined ? {} : { atSeq })
          await child.close()
          const childBytes = readFileSync(logPath(directory, child.header.id))
          // The default cut is seq 9 (the between-turn message before the open turn 2).
          const kept = (atSeq ?? 9) + 1
          expect(body(childBytes).equals(prefix(parentBytes, kept))).toBe(true)
          const childHeader = JSON.parse(childBytes.subarray(0, childBytes.indexOf(10)).toString())
          expect(childHeader).toMatchObject({
            id: child.header.id,
            title: 'source',
            parent: { sessionId: source.header.id, seq: kept - 1 },
          })
        }
      },
    )

    it.each([
      ['open here', false],
      ['closed', true],
    ])(
      'leaves the child listed, with no temporary file beside its log (source %s)',
      async (_, closeSource) => {
        const { directory, store, source } = await sourceOfFork(closeSource)
        const child = await store.fork(source.header.id, { atSeq: 8 })
        // The metadata is staged while the copy is synced and renamed into place after the
        // header (decision 0186): listed at once, as written, and nothing staged is left.
        const sessionDirectory = join(directory, 'jsonl', 'sessions', child.header.id)
        const names = readdirSync(sessionDirectory)
        expect(names.filter((name) => name.endsWith('.tmp'))).toEqual([])
        expect(names).toContain('meta.json')
        const listed = (await store.list()).find((row) => row.id === child.header.id)
        expect(listed).toMatchObject({ title: 'source', eventCount: 9 })
        await child.close()
        await expect(store.fork('no-such-session')).rejects.toMatchObject({
          code: 'SESSION_NOT_FOUND',
        })
      },
    )

    it('cuts at the right byte after batches of ASCII, non-ASCII and mixed lines (source open)', async () => {
      const directory = tempDirectory()
      const store = await storeOf('jsonl', directory)
      const source = await store.create()
      const batches = [
        [turnStart(1), user('plain ascii'), turnEnd(1)],
        [turnStart(2), user('ünïcödé 🚀 and a lone \ud800'), turnEnd(2)],
        [turnStart(3), user('plain again'), turnEnd(3), turnStart(4), user('€'), turnEnd(4)],
      ]
      for (const batch of batches) {
        appendAll(source, batch)
        await source.flush()
      }
      const parentBytes = readFileSync(logPath(directory, source.header.id))
      for (const atSeq of [2, 5, 8, 11]) {
        const child = await store.fork(source.header.id, { atSeq })
        await child.close()
        const childBytes = readFileSync(logPath(directory, child.header.id))
        expect(body(childBytes).equals(prefix(parentBytes, atSeq + 1))).toBe(true)
      }
      await source.close()
    })

    it('forks a fork of a fork, each copy byte-equal to the first parent and openable', async () => {
      const directory = tempDirectory()
      const store = await storeOf('jsonl', directory)
      const root = await store.create()
      appendAll(root, smallLog.slice(0, 10))
      await root.close()
      const rootBytes = readFileSync(logPath(directory, root.header.id))
      let parent = root.header.id
      for (const atSeq of [9, 8, 8]) {
        const child = await store.fork(parent, { atSeq })
        expect(child.header.parent).toEqual({ sessionId: parent, seq: atSeq })
        expect(child.residentEvents).toEqual(root.residentEvents.slice(0, atSeq + 1))
        await child.close()
        const childBytes = readFileSync(logPath(directory, child.header.id))
        expect(body(childBytes).equals(prefix(rootBytes, atSeq + 1))).toBe(true)
        const reopened = await store.open(child.header.id)
        expect(reopened.residentEvents).toEqual(root.residentEvents.slice(0, atSeq + 1))
        expect(checkLog(reopened.residentEvents)).toEqual([])
        await reopened.close()
        parent = child.header.id
      }
    })

    it('still refuses a closed source whose kept lines are damaged', async () => {
      const { session, bytes } = await writtenSession(tempDirectory())
      const id = session.header.id
      const notJson = await storeWithLog(
        id,
        replaceLine(bytes, 3, (line) => line.slice(0, 20)),
      )
      await expect(notJson.store.fork(id, { atSeq: 8 })).rejects.toBeInstanceOf(LogCorruptError)
      // A result for a call never made breaks tool pairing, which a fork still checks.
      const unpaired = await storeWithLog(
        id,
        replaceLine(bytes, 7, (line) => line.replace('"c1"', '"c9"')),
      )
      await expect(unpaired.store.fork(id, { atSeq: 8 })).rejects.toThrowError(/tool-pairing/)
    })

    it('copies data damaged by hand after writing as it is, and opening the child refuses it', async () => {
      const { session, bytes } = await writtenSession(tempDirectory())
      const id = session.header.id
      // Valid JSON and structure, wrong shape: only the schema walk, which a fork skips, sees it.
      const damaged = replaceLine(bytes, 2, (line) => line.replace('"text":"hi"', '"text":5'))
      const { store } = await storeWithLog(id, damaged)
      await expect(store.open(id)).rejects.toBeInstanceOf(LogCorruptError)
      const child = await store.fork(id, { atSeq: 8 })
      await child.close()
      const opening = store.open(child.header.id)
      await expect(opening).rejects.toBeInstanceOf(LogCorruptError)
      await expect(opening).rejects.toThrowError(`rudder sessions repair ${child.header.id}`)
    })
  })
})
