/**
 * The stream client over a source that does not hold the start of its log (a resumed session,
 * docs/decisions/0135): the stored part is read, then the held part, then live; a read that
 * fails ends the stream with a `problem`, unless the source changed under it.
 */
import { describe, expect, it } from 'vitest'
import {
  createStreamClient,
  DEFAULT_STREAM_LIMITS,
  type StreamSocket,
  type StreamSource,
} from '../../../src/frontends/web/stream-client.js'
import type { LiveSnapshot, StreamMessage } from '../../../src/frontends/web/wire.js'
import type { SessionEvent } from '../../../src/index.js'

const event = (seq: number) =>
  ({
    seq,
    time: seq,
    type: 'turn/start',
    data: { turn: seq + 1, trigger: 'prompt' },
  }) as SessionEvent

const IDLE: LiveSnapshot = {
  mode: { kind: 'live' },
  status: 'idle',
  replay: [],
  inputs: [],
  approvals: [],
}

function fakeSocket() {
  const messages: StreamMessage[] = []
  let closed: (close: { code: number; reason: string }) => void = () => {}
  const socket: StreamSocket & { messages: StreamMessage[]; closed: Promise<{ code: number }> } = {
    bufferedAmount: 0,
    messages,
    closed: new Promise((resolve) => {
      closed = resolve
    }),
    send(data, callback) {
      messages.push(JSON.parse(data) as StreamMessage)
      callback?.(null)
    },
    close: (code = 1000, reason = '') => closed({ code, reason }),
    terminate: () => {},
  }
  return socket
}

/** A log of `length` events of which those from `residentFrom` on are held. */
function source(
  length: number,
  residentFrom: number,
  read: StreamSource['read'] = async function* (fromSeq, throughSeq) {
    for (let seq = fromSeq; seq <= throughSeq; seq++) yield [event(seq)]
  },
): StreamSource {
  return {
    nextSeq: () => length,
    eventAt: (seq) => (seq >= residentFrom && seq < length ? event(seq) : undefined),
    read,
    liveSnapshot: () => IDLE,
  }
}

const seqsOf = (messages: readonly StreamMessage[]) =>
  messages.flatMap((message) => (message.type === 'events' ? message.events.map((e) => e.seq) : []))

const limits = { ...DEFAULT_STREAM_LIMITS, frameBytes: 1 }

/** Resolves once the client sent `caught-up`. */
function caughtUp(socket: ReturnType<typeof fakeSocket>): Promise<void> {
  return new Promise((resolve) => {
    const send = socket.send.bind(socket)
    socket.send = (data, callback) => {
      send(data, callback)
      if (socket.messages.at(-1)?.type === 'caught-up') resolve()
    }
  })
}

describe('the stream client over a log not held from its start', () => {
  it('reads the stored part, then sends the held part, then goes live', async () => {
    const socket = fakeSocket()
    const done = caughtUp(socket)
    const client = createStreamClient({ socket, since: 1, source: source(8, 5), limits })
    client.pump()
    expect(client.phase).toBe('replaying')
    await done
    expect(seqsOf(socket.messages)).toEqual([2, 3, 4, 5, 6, 7])
    expect(socket.messages.at(-1)).toMatchObject({ type: 'caught-up', lastSeq: 7 })
    expect(client.phase).toBe('live')
  })

  it('ends with a problem and code 4011 when the stored part cannot be read', async () => {
    const socket = fakeSocket()
    const failing = source(6, 4, async function* (fromSeq) {
      yield [event(fromSeq)]
      throw Object.assign(new Error('seq 1 does not match'), { code: 'LOG_CORRUPT' })
    })
    createStreamClient({ socket, since: -1, source: failing, limits }).pump()
    expect(await socket.closed).toMatchObject({ code: 4011 })
    expect(seqsOf(socket.messages)).toEqual([0])
    expect(socket.messages.at(-1)).toMatchObject({ type: 'problem', code: 'LOG_CORRUPT' })
  })

  it('goes on from what it sent over a new source when the old one fails under a read', async () => {
    const socket = fakeSocket()
    const done = caughtUp(socket)
    let current: StreamSource
    let release: () => void = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    // The old source reads one event, then waits, then fails (its session closed).
    const old = source(5, 3, async function* (fromSeq) {
      yield [event(fromSeq)]
      await released
      throw new Error('the session is closed')
    })
    current = old
    const switching: StreamSource = {
      nextSeq: () => current.nextSeq(),
      eventAt: (seq) => current.eventAt(seq),
      read: (from, through, signal) => current.read(from, through, signal),
      liveSnapshot: () => IDLE,
    }
    const client = createStreamClient({ socket, since: -1, source: switching, limits })
    client.pump()
    await new Promise<void>((resolve) => queueMicrotask(resolve))
    current = source(6, 0)
    client.pump()
    release()
    await done
    expect(seqsOf(socket.messages)).toEqual([0, 1, 2, 3, 4, 5])
    expect(socket.messages.some((message) => message.type === 'problem')).toBe(false)
  })
})
