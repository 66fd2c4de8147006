/**
 * A channel following a stored session (decision 0165): it holds none of the log, only where
 * it ends. Clients catching up read from the store's follow, from their own cursor; the channel
 * follows from its end; every client gets exactly the events after its `since`, then the live
 * ones, in order.
 */
import { describe, expect, it } from 'vitest'
import { createSessionChannel } from '../../../src/frontends/web/session-channel.js'
import {
  DEFAULT_STREAM_LIMITS,
  type StreamSocket,
} from '../../../src/frontends/web/stream-client.js'
import type { StreamMessage } from '../../../src/frontends/web/wire.js'
import { openStore, type SessionEvent, type SessionStore } from '../../../src/index.js'
import { appendAll, closedTurn } from '../../stores/support/events.js'

type Socket = StreamSocket & {
  readonly messages: StreamMessage[]
  /** Resolves with the first message (from the start) that `predicate` accepts. */
  until(predicate: (message: StreamMessage) => boolean): Promise<StreamMessage>
  readonly seqs: () => number[]
}

function fakeSocket(): Socket {
  const messages: StreamMessage[] = []
  const waiting = new Set<() => void>()
  const socket: Socket = {
    bufferedAmount: 0,
    messages,
    send(data, callback) {
      messages.push(JSON.parse(data) as StreamMessage)
      callback?.(null)
      for (const check of [...waiting]) check()
    },
    close: () => {},
    terminate: () => {},
    until: (predicate) =>
      new Promise((resolve) => {
        const check = () => {
          const found = messages.find(predicate)
          if (!found) return
          waiting.delete(check)
          resolve(found)
        }
        waiting.add(check)
        check()
      }),
    seqs: () =>
      messages.flatMap((message) =>
        message.type === 'events' ? message.events.map((event) => event.seq) : [],
      ),
  }
  return socket
}

/** The store, with the `fromSeq` of every follow it is asked for noted in `follows`. */
function recording(store: SessionStore): { store: SessionStore; follows: number[] } {
  const follows: number[] = []
  return {
    follows,
    store: {
      ...store,
      follow(id, options) {
        follows.push(options?.fromSeq ?? 0)
        return store.follow(id, options)
      },
    },
  }
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index)
const caughtUp = (message: StreamMessage) => message.type === 'caught-up'
const reached = (seq: number) => (message: StreamMessage) =>
  message.type === 'events' && message.events.some((event) => event.seq === seq)

describe('a channel following a stored session', () => {
  it('replays each client from the store from its own seq, follows from its end, and holds no event', async () => {
    const inner = await openStore('memory:', { followPollMs: 5 })
    const session = await inner.create()
    const id = session.header.id
    appendAll(session, [...closedTurn(1, 'one'), ...closedTurn(2, 'two')])
    await session.close()
    const stored = (await inner.read(id)).events
    const { store, follows } = recording(inner)
    const channel = createSessionChannel({
      id,
      header: session.header,
      store,
      limits: DEFAULT_STREAM_LIMITS,
      nextSeq: stored.length,
      onIdle: () => {},
    })
    expect(channel.lastSeq()).toBe(stored.length - 1)

    const whole = fakeSocket()
    const late = fakeSocket()
    channel.attach(whole, -1, () => {})
    channel.attach(late, 20, () => {})
    expect(await whole.until(caughtUp)).toMatchObject({
      lastSeq: 23,
      live: { mode: { kind: 'follow' } },
    })
    expect(await late.until(caughtUp)).toMatchObject({ lastSeq: 23 })
    expect(whole.seqs()).toEqual(range(0, 23))
    expect(late.seqs()).toEqual(range(21, 23))
    // The stored events went out as stored (the wire form of each).
    const sent = whole.messages.flatMap((message) =>
      message.type === 'events' ? message.events : [],
    )
    expect(sent).toEqual(JSON.parse(JSON.stringify(stored)))

    // Another writer appends: both clients get the new events live, in order, once each.
    const writer = await inner.open(id)
    appendAll(writer, closedTurn(3, 'three'))
    await writer.flush()
    await Promise.all([whole.until(reached(35)), late.until(reached(35))])
    expect(whole.seqs()).toEqual(range(0, 35))
    expect(late.seqs()).toEqual(range(21, 35))
    expect(channel.lastSeq()).toBe(35)

    // A client joining now is replayed from the store too: the channel kept none of them.
    const joiner = fakeSocket()
    channel.attach(joiner, 30, () => {})
    await joiner.until(caughtUp)
    expect(joiner.seqs()).toEqual(range(31, 35))
    // One follow from the channel's end (the follower), one per replay from each client's seq.
    expect([...follows].sort((a, b) => a - b)).toEqual([0, 21, 24, 31])
    const all = whole.messages.flatMap((message) =>
      message.type === 'events' ? (message.events as SessionEvent[]) : [],
    )
    expect(all).toEqual(JSON.parse(JSON.stringify((await inner.read(id)).events)))

    channel.close(1001, 'done')
    await writer.close()
    await inner.close()
  })
})
