/**
 * The session stream (docs/web-api.md): a follower of the log. A reconnect from seq N gets
 * exactly the events after N, then live ones; a client that stops reading is dropped past a
 * bounded buffer and resumes from its last seq; sessions stream independently.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SlowCloseReason, StreamMessage } from '../../../src/frontends/web/wire.js'
import type { SessionEvent } from '../../../src/index.js'
import { dialogueOf, writeUnreadSession } from '../unread-history.js'
import { upgradeStatus, webPlace } from './web-support.js'

type Created = { header: { id: string } }

const seqs = (events: readonly SessionEvent[]) => events.map((event) => event.seq)
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i)
const ended = (message: StreamMessage) =>
  message.type === 'events' && message.events.some((event) => event.type === 'turn/end')

describe('the session stream', () => {
  it('resumes from a seq with exactly the missing events, and shows a mid-turn joiner the text so far', async () => {
    const place = await webPlace([{ text: 'streamed words', holdUntilFile: 'go' }])
    const { header } = await place.json<Created>('/api/sessions', { json: {} })
    const id = header.id
    const first = place.stream(id)
    await place.json(`/api/sessions/${id}/inject`, {
      json: { text: 'context before', source: { kind: 'plugin', name: 'notes' } },
    })
    await place.json(`/api/sessions/${id}/send`, { json: { text: 'go on' } })
    await first.until(
      (message) =>
        message.type === 'notification' &&
        message.notification.type === 'assistant/delta' &&
        message.notification.text.endsWith('s'),
    )
    const lastSeq = first.events.at(-1)!.seq
    expect(lastSeq).toBeGreaterThanOrEqual(3)

    // Reconnect as a client that holds seqs 0..1.
    const second = place.stream(id, 1)
    const hello = await second.until((message) => message.type === 'hello')
    expect(hello).toMatchObject({ type: 'hello', since: 1, mode: { kind: 'live' }, header: { id } })
    const caughtUp = await second.until((message) => message.type === 'caught-up')
    expect(seqs(second.events)).toEqual(range(2, lastSeq))
    expect(caughtUp).toMatchObject({ lastSeq, live: { status: 'running', mode: { kind: 'live' } } })
    const replay = caughtUp.type === 'caught-up' ? caughtUp.live.replay : []
    expect(replay).toContainEqual(
      expect.objectContaining({ type: 'assistant/delta', text: 'streamed words' }),
    )

    await place.release('go')
    await Promise.all([first.until(ended), second.until(ended)])
    const log = await place.checkedLog(id)
    expect(first.events).toEqual(JSON.parse(JSON.stringify(log)))
    expect(second.events).toEqual(JSON.parse(JSON.stringify(log.slice(2))))

    // A client already holding everything gets no event, only the live state.
    const third = place.stream(id, log.length - 1)
    await third.until((message) => message.type === 'caught-up')
    expect(third.events).toEqual([])
    // A seq past the end is refused (a client of another log, or a bug): 400, not a silent gap.
    const url = `${place.base.replace(/^http/, 'ws')}api/sessions/${id}/stream?since=${log.length + 5}`
    expect(await upgradeStatus(url, { authorization: `Bearer ${place.server.token}` })).toBe(400)
  })

  it('drops a client that stops reading past the buffer limit; it resumes from its last seq', async () => {
    let dropped: (info: SlowCloseReason) => void = () => {}
    const drop = new Promise<SlowCloseReason>((resolve) => {
      dropped = resolve
    })
    const place = await webPlace([], {
      server: {
        limits: { maxBufferedBytes: 64 * 1024, dropGraceMs: 60_000 },
        onDrop: (info) => dropped(info),
      },
    })
    const { header } = await place.json<Created>('/api/sessions', { json: {} })
    const id = header.id
    const steady = place.stream(id)
    const slow = place.stream(id)
    await Promise.all([steady, slow].map((client) => client.until((m) => m.type === 'caught-up')))
    slow.socket.pause()
    const web = place.server.sessions.live(id)!
    const text = 'x'.repeat(32 * 1024)
    let isDropped = false
    void drop.then(() => {
      isDropped = true
    })
    // Contexts land at once on an idle session; each is one event to every client.
    for (let round = 0; round < 2000 && !isDropped; round++) {
      web.give('context', {
        content: [{ type: 'text', text }],
        source: { kind: 'plugin', name: 'bulk' },
      })
      await new Promise((resolve) => setImmediate(resolve))
    }
    const info = await drop
    expect(info.reason).toBe('slow')
    for (let i = 0; i < 3; i++)
      web.give('context', {
        content: [{ type: 'text', text: `after ${i}` }],
        source: { kind: 'plugin', name: 'bulk' },
      })

    slow.socket.resume()
    const closed = await slow.closed
    expect(closed.code).toBe(4008)
    expect(JSON.parse(closed.reason)).toEqual({ reason: 'slow', lastSeq: info.lastSeq })
    expect(seqs(slow.events)).toEqual(range(0, info.lastSeq))

    const log = await place.checkedLog(id)
    const resumed = place.stream(id, info.lastSeq)
    await resumed.until((message) => message.type === 'caught-up')
    expect([...slow.events, ...resumed.events]).toEqual(JSON.parse(JSON.stringify(log)))
    // The client that kept reading was never dropped and has everything.
    await steady.untilSeq(log.length - 1)
    expect(seqs(steady.events)).toEqual(range(0, log.length - 1))
  })

  it('streams a resumed session whose history the store did not read: whole, from a seq, after a turn, and once closed', async () => {
    // Small frames and a low high-water mark: the stored part goes out in several frames.
    const place = await webPlace([{ text: 'third answer' }], {
      server: { limits: { frameBytes: 300, replayHighWaterBytes: 600 } },
    })
    const stored = await writeUnreadSession(`sqlite:${join(place.root, 'sessions.db')}`, {
      cwd: place.cwd,
    })
    const id = stored.id
    const opened = await place.json<{ lastSeq: number }>(`/api/sessions/${id}/open`, { json: {} })
    expect(opened.lastSeq).toBe(stored.events.length - 1)
    expect(place.server.sessions.live(id)!.runtime.session.residentFrom).toBeGreaterThan(0)
    const storedJson = JSON.parse(JSON.stringify(stored.events))

    const whole = place.stream(id)
    await whole.until((message) => message.type === 'caught-up')
    expect(whole.events).toEqual(storedJson)
    const part = place.stream(id, 3)
    await part.until((message) => message.type === 'caught-up')
    expect(part.events).toEqual(storedJson.slice(4))

    await place.json(`/api/sessions/${id}/send`, { json: { text: 'third question' } })
    await whole.until(
      (message) =>
        message.type === 'events' &&
        message.events.some((event) => event.type === 'turn/end' && event.seq > 14),
    )
    const log = await place.checkedLog(id)
    expect(whole.events).toEqual(JSON.parse(JSON.stringify(log)))
    expect(dialogueOf(log).slice(-2)).toEqual(['third question', 'third answer'])

    // Closed here, the session is followed from the store: a new client still gets all of it.
    await place.json(`/api/sessions/${id}/close`, { json: {} })
    const follower = place.stream(id)
    const hello = await follower.until((message) => message.type === 'hello')
    expect(hello).toMatchObject({ mode: { kind: 'follow' } })
    await follower.until((message) => message.type === 'caught-up')
    expect(follower.events).toEqual(JSON.parse(JSON.stringify(log)))
  })

  it('runs two sessions at once; each stream carries its own session only', async () => {
    const place = await webPlace([{ text: 'working', holdUntilFile: 'go' }, { text: 'second' }])
    const sessions = await Promise.all(
      ['alpha', 'beta'].map(async (name) => {
        const { header } = await place.json<Created>('/api/sessions', { json: { title: name } })
        return { name, id: header.id, stream: place.stream(header.id) }
      }),
    )
    const sends = await Promise.all(
      sessions.map(({ id, name }) =>
        place.json<{ id: string }>(`/api/sessions/${id}/send`, { json: { text: `task ${name}` } }),
      ),
    )
    await Promise.all(
      sessions.map(({ stream }) =>
        stream.until(
          (message) =>
            message.type === 'notification' && message.notification.type === 'assistant/delta',
        ),
      ),
    )
    // Both turns are running at the same time.
    expect(sessions.map(({ id }) => place.server.sessions.live(id)?.runtime.agent.status)).toEqual([
      'running',
      'running',
    ])
    await place.release('go')
    const results = await Promise.all(
      sessions.map(({ id }, index) =>
        place.json(`/api/sessions/${id}/deliveries/${sends[index]!.id}?wait=true`),
      ),
    )
    for (const result of results) expect(result).toMatchObject({ result: { status: 'completed' } })
    for (const { id, name, stream } of sessions) {
      await stream.until(ended)
      const log = await place.checkedLog(id)
      expect(stream.events).toEqual(JSON.parse(JSON.stringify(log)))
      const prompts = JSON.stringify(stream.events.filter((event) => event.type === 'user/message'))
      expect(prompts).toContain(`task ${name}`)
      expect(prompts).not.toContain(`task ${name === 'alpha' ? 'beta' : 'alpha'}`)
    }
  })
})
