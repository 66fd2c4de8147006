/**
 * The store conformance suite (docs/spec.md §9, scenarios 25, 26, 27 and 30), run against every store:
 * memory, JSONL and SQLite, with real files in temp directories.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkLog, project, RudderError, SessionBusyError } from '../../src/index.js'
import type { SessionStore, StoredSession } from '../../src/stores/index.js'
import { validLog } from '../support/arbitraries.js'
import { assistant, stepEnd, stepStart, toolCall, turnStart, user } from '../support/log-builder.js'
import { allEvents } from '../support/session-events.js'
import { appendAll, appendEvents, closedTurn, text, typesOf } from './support/events.js'
import {
  STORE_KINDS,
  secondHandle,
  storeOf,
  tempDirectory,
  tickingClock,
} from './support/stores.js'

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise
    return undefined
  } catch (error) {
    if (error instanceof RudderError) return error.code
    throw error
  }
}

describe.each(STORE_KINDS)('the %s store', (kind) => {
  async function setup(options: Parameters<typeof storeOf>[2] = {}) {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory, options)
    return { directory, store, reader: await secondHandle(kind, directory, store, options) }
  }

  it('gives back exactly the events appended, and the same projection (property, scenario 30)', async () => {
    const { store, reader } = await setup()
    await fc.assert(
      fc.asyncProperty(validLog(), async (log) => {
        const session = await store.create({ cwd: '/work' })
        appendEvents(session, log)
        await session.close()
        const reopened = await reader.open(session.header.id)
        try {
          expect(reopened.header).toEqual(session.header)
          expect(reopened.residentEvents).toEqual(session.residentEvents)
          expect(reopened.messages()).toEqual(project(session.residentEvents))
          expect(reopened.repairs).toEqual([])
          expect(checkLog(reopened.residentEvents)).toEqual([])
        } finally {
          await reopened.close()
        }
      }),
      { numRuns: kind === 'memory' ? 60 : 25 },
    )
  })

  it('makes flushed events visible to a reader while the writer stays open', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    appendAll(session, [user('a', 'ctx'), user('b', 'ctx')])
    await session.flush()
    const snapshot = await reader.read(session.header.id)
    expect(snapshot.events).toEqual(session.residentEvents)
    expect(snapshot.openTurn).toBeUndefined()
  })

  it('closes a turn a crash left open, visibly and durably (scenario 25)', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    appendAll(session, [
      ...closedTurn(1, 'first'),
      turnStart(2),
      user('second'),
      stepStart(2, 1),
      assistant('calling', [
        { id: 'c1', name: 'write' },
        { id: 'c2', name: 'bash' },
      ]),
      toolCall('c1', 'write'),
    ])
    // Closing mid-turn leaves the log as a crash would: the turn is open.
    await session.close()
    const reopened = await reader.open(session.header.id)
    const tail = reopened.residentEvents.slice(session.residentEvents.length)
    expect(typesOf(tail)).toBe('tool/result tool/result step/end turn/end')
    expect(tail[0]!.data).toMatchObject({
      callId: 'c1',
      name: 'write',
      isError: true,
      error: { code: 'outcome-unknown' },
    })
    expect(JSON.stringify(tail[0]!.data)).toMatch(/Do not retry side-effecting work blindly/)
    expect(tail[1]!.data).toMatchObject({
      callId: 'c2',
      name: 'bash',
      isError: true,
      error: { code: 'interrupted' },
    })
    expect(tail[2]!.data).toEqual({ turn: 2, step: 1 })
    expect(tail[3]!.data).toEqual({ turn: 2, reason: { kind: 'interrupted' } })
    expect(reopened.repairs).toEqual([
      {
        kind: 'turn-closed',
        turn: 2,
        fromSeq: session.residentEvents.length,
        toSeq: session.residentEvents.length + 3,
        results: [
          { callId: 'c1', code: 'outcome-unknown' },
          { callId: 'c2', code: 'interrupted' },
        ],
      },
    ])
    expect(checkLog(reopened.residentEvents)).toEqual([])
    await reopened.close()
    // The repair is durable: opening again finds nothing to repair.
    const again = await reader.open(session.header.id)
    expect(again.residentEvents).toEqual(reopened.residentEvents)
    expect(again.repairs).toEqual([])
    await again.close()
  })

  it('closes an open turn that has no open step with turn/end alone', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    appendAll(session, [turnStart(1), user('p'), stepStart(1, 1), assistant('x'), stepEnd(1, 1)])
    await session.close()
    const reopened = await reader.open(session.header.id)
    expect(typesOf(reopened.residentEvents.slice(5))).toBe('turn/end')
    await reopened.close()
  })

  it('keeps a between-turn user message as committed history (scenario 25)', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    appendAll(session, [...closedTurn(1, 'first'), user('X', 'plugin')])
    await session.close()
    const reopened = await reader.open(session.header.id)
    expect(reopened.residentEvents).toEqual(session.residentEvents)
    expect(reopened.repairs).toEqual([])
    expect(reopened.messages().at(-1)).toEqual({ role: 'user', content: text('X') })
    await reopened.close()
  })

  it('continues turn numbers on resume and refuses an out-of-order turn (scenario 27)', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    appendAll(session, [...closedTurn(1, 'a'), ...closedTurn(2, 'b')])
    await session.close()
    const resumed = await reader.open(session.header.id)
    expect(() => resumed.append('turn/start', { turn: 1, trigger: 'prompt' })).toThrowError(
      /next is 3/,
    )
    appendAll(resumed, closedTurn(3, 'c'))
    await resumed.close()
    const again = await reader.read(session.header.id)
    expect(again.events).toHaveLength(36)
    expect(checkLog(again.events)).toEqual([])
  })

  it('refuses data it could not read back, appending nothing', async () => {
    const { store } = await setup()
    const session = await store.create()
    expect(() =>
      session.append('user/message', {
        id: 'm',
        content: 'not blocks',
        source: { kind: 'user' },
      } as never),
    ).toThrowError(/cannot append "user\/message": data\.content/)
    expect(session.residentEvents).toEqual([])
    await session.flush()
  })

  it('lets one writer hold a session; a second open is refused until the first closes', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    const attempt = reader.open(session.header.id)
    await expect(attempt).rejects.toBeInstanceOf(SessionBusyError)
    await expect(attempt).rejects.toMatchObject({ pid: process.pid })
    // Readers never block.
    await expect(reader.read(session.header.id)).resolves.toMatchObject({ events: [] })
    await session.close()
    const reopened = await reader.open(session.header.id)
    expect(reopened.header.id).toBe(session.header.id)
    await reopened.close()
  })

  it('reads an open turn as open without repairing it', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    appendAll(session, [turnStart(1), user('p'), stepStart(1, 1)])
    await session.flush()
    const snapshot = await reader.read(session.header.id)
    expect(snapshot.events).toEqual(session.residentEvents)
    expect(snapshot.openTurn).toBe(1)
  })

  it('refuses unknown ids and ids that are not ids', async () => {
    const { store } = await setup()
    expect(await codeOf(store.open('no-such-session'))).toBe('SESSION_NOT_FOUND')
    expect(await codeOf(store.read('no-such-session'))).toBe('SESSION_NOT_FOUND')
    expect(await codeOf(store.open('../escape'))).toBe('INVALID_INPUT')
  })

  describe('list', () => {
    it('lists from metadata, newest write first, filtered by cwd, with title and event count', async () => {
      const { store } = await setup({ now: tickingClock() })
      const first = await store.create({ cwd: '/a', title: 'first' })
      const second = await store.create({ cwd: '/b', title: 'second' })
      const third = await store.create({ cwd: '/a' })
      appendAll(first, [user('late write', 'ctx')])
      for (const session of [first, second, third]) await session.close()
      const rows = await store.list()
      expect(rows.map((row) => row.id)).toEqual([
        first.header.id,
        third.header.id,
        second.header.id,
      ])
      expect(rows[0]).toMatchObject({ title: 'first', cwd: '/a', eventCount: 1 })
      expect(rows[2]).toMatchObject({ title: 'second', eventCount: 0 })
      expect(rows[1]!.title).toBeUndefined()
      const inA = await store.list({ cwd: '/a' })
      expect(inA.map((row) => row.id)).toEqual([first.header.id, third.header.id])
    })

    it('pages with a cursor, each session exactly once', async () => {
      const { store } = await setup({ now: tickingClock() })
      const ids: string[] = []
      for (let index = 0; index < 7; index++) {
        const session = await store.create({ title: `s${index}` })
        ids.unshift(session.header.id)
        await session.close()
      }
      const seen: string[] = []
      let cursor: string | undefined
      for (;;) {
        const page = await store.list({ limit: 3, ...(cursor ? { cursor } : {}) })
        if (page.length === 0) break
        expect(page.length).toBeLessThanOrEqual(3)
        seen.push(...page.map((row) => row.id))
        cursor = page.at(-1)!.cursor
      }
      expect(seen).toEqual(ids)
      expect(await codeOf(store.list({ cursor: 'not-a-cursor' }))).toBe('INVALID_INPUT')
    })
  })

  describe.each([
    ['open here', false],
    ['closed', true],
  ])('fork of a source %s (scenario 26)', (_, closeSource) => {
    async function sourceWithOpenTurn(store: SessionStore): Promise<StoredSession> {
      const session = await store.create({ cwd: '/w', title: 'source' })
      appendAll(session, [
        ...closedTurn(1, 'a'),
        user('X', 'plugin'),
        turnStart(2),
        user('b'),
        stepStart(2, 1),
      ])
      // Closing mid-turn leaves the turn open on disk, as a crash or a running writer would.
      if (closeSource) await session.close()
      else await session.flush()
      return session
    }

    it('cuts before an open turn by default, keeping between-turn messages, and continues turns', async () => {
      const { store } = await setup()
      const source = await sourceWithOpenTurn(store)
      const child = await store.fork(source.header.id)
      expect(child.header).toMatchObject({
        cwd: '/w',
        title: 'source',
        parent: { sessionId: source.header.id, seq: 12 },
      })
      expect(child.header.id).not.toBe(source.header.id)
      expect(child.residentEvents).toEqual(source.residentEvents.slice(0, 13))
      expect(child.messages().at(-1)).toEqual({ role: 'user', content: text('X') })
      expect(child.repairs).toEqual([])
      appendAll(child, closedTurn(2, 'in the child'))
      await child.close()
      const reread = await store.read(child.header.id)
      expect(reread.events.slice(0, 13)).toEqual(source.residentEvents.slice(0, 13))
      expect(checkLog(reread.events)).toEqual([])
    })

    it('refuses an explicit cut inside an open or later-closed turn with OPEN_TURN', async () => {
      const { store } = await setup()
      const source = await sourceWithOpenTurn(store)
      expect(await codeOf(store.fork(source.header.id, { atSeq: 14 }))).toBe('OPEN_TURN')
      expect(await codeOf(store.fork(source.header.id, { atSeq: 13 }))).toBe('OPEN_TURN')
      // Inside turn 1, which closes later: the cut would still leave it open.
      expect(await codeOf(store.fork(source.header.id, { atSeq: 5 }))).toBe('OPEN_TURN')
      expect(await codeOf(store.fork(source.header.id, { atSeq: 99 }))).toBe('INVALID_INPUT')
      expect(await codeOf(store.fork(source.header.id, { atSeq: -1 }))).toBe('INVALID_INPUT')
    })

    it('cuts exactly at an explicit seq outside any turn', async () => {
      const { store } = await setup()
      const source = await sourceWithOpenTurn(store)
      const child = await store.fork(source.header.id, { atSeq: 11 })
      expect(child.residentEvents).toEqual(source.residentEvents.slice(0, 12))
      expect(child.header.parent).toEqual({ sessionId: source.header.id, seq: 11 })
      await child.close()
      const reread = await store.read(child.header.id)
      expect(reread.events).toEqual(source.residentEvents.slice(0, 12))
    })

    it('forks a session that has only an open turn into an empty child', async () => {
      const { store } = await setup()
      const source = await store.create()
      appendAll(source, [turnStart(1), user('p')])
      if (closeSource) await source.close()
      else await source.flush()
      const child = await store.fork(source.header.id)
      expect(child.residentEvents).toEqual([])
      expect(child.header.parent).toEqual({ sessionId: source.header.id, seq: -1 })
    })

    it('forks a reopened session at seqs from before and after the reopen', async () => {
      const { store } = await setup()
      const first = await store.create()
      appendAll(first, closedTurn(1, 'before'))
      await first.close()
      const source = await store.open(first.header.id)
      appendAll(source, closedTurn(2, 'after'))
      if (closeSource) await source.close()
      else await source.flush()
      for (const atSeq of [11, 23]) {
        const child = await store.fork(source.header.id, { atSeq })
        expect((await store.read(child.header.id)).events).toEqual(
          source.residentEvents.slice(0, atSeq + 1),
        )
        // The child is open here but was written by a copy, so where its events sit on disk is
        // not known in memory: forking it reads them.
        const grandchild = await store.fork(child.header.id, { atSeq: 11 })
        expect(await allEvents(grandchild)).toEqual(source.residentEvents.slice(0, 12))
        expect((await store.read(grandchild.header.id)).events).toEqual(
          source.residentEvents.slice(0, 12),
        )
        await child.close()
        await grandchild.close()
      }
    })

    it('forks a fork of a fork, each naming its parent and continuing its turns', async () => {
      const { store } = await setup()
      const root = await sourceWithOpenTurn(store)
      let parent: StoredSession = root
      for (const atSeq of [12, 11, 11]) {
        const child = await store.fork(parent.header.id, { atSeq })
        expect(child.header.parent).toEqual({ sessionId: parent.header.id, seq: atSeq })
        expect(await allEvents(child)).toEqual(root.residentEvents.slice(0, atSeq + 1))
        if (parent !== root) await parent.close()
        if (closeSource) {
          await child.close()
          parent = await store.open(child.header.id)
          await parent.close()
        } else parent = child
      }
      if (!closeSource) await parent.close()
      const last = await store.open(parent.header.id)
      appendAll(last, closedTurn(2, 'in the great-grandchild'))
      await last.close()
      const reread = await store.read(parent.header.id)
      expect(reread.events.slice(0, 12)).toEqual(root.residentEvents.slice(0, 12))
      expect(checkLog(reread.events)).toEqual([])
    })
  })

  describe('search', () => {
    it('finds messages containing every word, and nothing else', async () => {
      const { store } = await setup()
      const one = await store.create()
      appendAll(one, [
        user('the quick brown fox', 'ctx'),
        ...closedTurn(1, 'jumps over the lazy dog'),
      ])
      const two = await store.create()
      appendAll(two, [user('a quick question about cats', 'ctx')])
      await one.close()
      await two.close()
      const hits = await store.search('quick fox')
      expect(hits).toEqual([
        { sessionId: one.header.id, seq: 0, snippet: expect.stringContaining('fox') },
      ])
      const lazy = await store.search('LAZY dog')
      expect(lazy.map((hit) => [hit.sessionId, hit.seq])).toEqual([[one.header.id, 2]])
      const done = await store.search('done')
      expect(done.map((hit) => hit.seq)).toEqual([10])
      expect(await store.search('nowhere')).toEqual([])
      expect(await store.search('   ')).toEqual([])
      expect(await store.search('quick', { limit: 1 })).toHaveLength(1)
    })

    it('stores and finds text with newlines, quotes, backslashes, NUL and non-ASCII, in batches', async () => {
      const { store, reader } = await setup()
      const session = await store.create()
      const awkward = 'line one\nline "two"\\ with\ttabs\u0000and NUL, ünïcödé 🚀 zebra'
      appendAll(session, [user(awkward, 'ctx'), user('second "quoted"\n\\', 'ctx')])
      await session.flush()
      appendAll(session, [user('third zebra', 'ctx')])
      await session.close()
      const reopened = await reader.open(session.header.id)
      expect(reopened.residentEvents).toEqual(session.residentEvents)
      await reopened.close()
      const hits = await store.search('zebra')
      expect(hits.map((hit) => hit.seq).sort()).toEqual([0, 2])
      expect((await store.search('ünïcödé')).map((hit) => hit.seq)).toEqual([0])
    })
  })

  describe.each(STORE_KINDS)('export to a %s store and import back', (target) => {
    it('round-trips identically', async () => {
      const { store } = await setup()
      const session = await store.create({ cwd: '/w', title: 'exported' })
      appendAll(session, [...closedTurn(1, 'a'), user('X', 'plugin'), turnStart(2), user('b')])
      await session.flush()
      const exported = await collect(store.exportJsonl(session.header.id))
      expect(exported.split('\n').at(-1)).toBe('')
      const other = await storeOf(target, tempDirectory())
      const imported = await other.importJsonl([exported])
      expect(imported).toEqual(session.header)
      const snapshot = await other.read(session.header.id)
      expect(snapshot.events).toEqual(session.residentEvents)
      expect(await collect(other.exportJsonl(session.header.id))).toBe(exported)
      expect(await codeOf(other.importJsonl([exported]))).toBe('INVALID_INPUT')
      // Imported with its turn open, as exported; opening repairs it like any crash.
      const opened = await other.open(session.header.id)
      expect(opened.residentEvents.at(-1)!.type).toBe('turn/end')
      await opened.close()
    })
  })

  it('stores -0 as 0, and the live event already holds 0 (JSON has no -0)', async () => {
    const { store, reader } = await setup()
    const session = await store.create()
    const [type, data] = user('minus zero', 'ctx')
    const appended = session.append(type, { ...data, meta: { n: -0, list: [-0, 1] } } as never)
    expect(Object.is((appended.data as unknown as { meta: { n: number } }).meta.n, 0)).toBe(true)
    await session.close()
    const reopened = await reader.open(session.header.id)
    expect(reopened.residentEvents).toEqual(session.residentEvents)
    await reopened.close()
  })

  describe('follow', () => {
    it('yields the stored events from fromSeq, then each durable append in order, until aborted', async () => {
      const { store, reader } = await setup({ followPollMs: 5 })
      const session = await store.create()
      appendAll(session, [user('a', 'ctx'), user('b', 'ctx')])
      await session.flush()
      const controller = new AbortController()
      const follower = reader
        .follow(session.header.id, { fromSeq: 1, signal: controller.signal })
        [Symbol.asyncIterator]()
      const seen: number[] = []
      const take = async (count: number) => {
        while (seen.length < count) {
          const next = await follower.next()
          if (next.done) throw new Error('the follow ended early')
          seen.push(next.value.seq)
        }
      }
      await take(1)
      appendAll(session, [user('c', 'ctx')])
      await session.flush()
      appendAll(session, [user('d', 'ctx'), user('e', 'ctx')])
      await session.flush()
      await take(4)
      expect(seen).toEqual([1, 2, 3, 4])
      controller.abort()
      expect((await follower.next()).done).toBe(true)
      await session.close()
    })

    it('starts past the end and waits; ends when the store closes', async () => {
      const { store, reader } = await setup({ followPollMs: 5 })
      const session = await store.create()
      appendAll(session, [user('a', 'ctx')])
      await session.flush()
      const follower = reader.follow(session.header.id, { fromSeq: 5 })[Symbol.asyncIterator]()
      const next = follower.next()
      appendAll(session, [user('b', 'ctx'), user('c', 'ctx'), user('d', 'ctx'), user('e', 'ctx')])
      appendAll(session, [user('f', 'ctx')])
      await session.close()
      const first = await next
      expect(first.done ? undefined : first.value).toEqual(session.residentEvents[5])
      const ended = follower.next()
      await reader.close()
      expect((await ended).done).toBe(true)
    })

    it('refuses an unknown session and a bad fromSeq', async () => {
      const { reader } = await setup()
      const follower = reader.follow('4b1c1a0e-0000-4000-8000-000000000000')[Symbol.asyncIterator]()
      expect(await codeOf(follower.next())).toBe('SESSION_NOT_FOUND')
      const bad = reader.follow('4b1c1a0e-0000-4000-8000-000000000000', { fromSeq: -1 })
      expect(await codeOf(bad[Symbol.asyncIterator]().next())).toBe('INVALID_INPUT')
    })
  })

  it('rejects every call once closed', async () => {
    const { store } = await setup()
    const session = await store.create()
    await store.close()
    expect(() =>
      session.append('user/message', { id: 'x', content: text('x'), source: { kind: 'user' } }),
    ).toThrowError(/closed/)
    expect(await codeOf(store.create())).toBe('DISPOSED')
    expect(await codeOf(store.list())).toBe('DISPOSED')
  })
})

async function collect(lines: AsyncIterable<string>): Promise<string> {
  const parts: string[] = []
  for await (const line of lines) parts.push(line)
  return parts.join('')
}
