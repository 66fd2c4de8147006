/**
 * The write-behind sink: batching, the flush window, flushes that cost nothing when nothing is
 * new, and a failed write that stops everything after it (docs/spec.md §9.1).
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type SessionEvent, StoreError } from '../../src/index.js'
import { createWriteBehindSink } from '../../src/stores/write-behind.js'

const event = (seq: number): SessionEvent => ({
  seq,
  time: seq,
  type: 'user/message',
  data: { id: `m${seq}`, content: [], source: { kind: 'user' } },
})

/** A sink over a batch writer the test controls: each batch waits for the test to settle it. */
function controlledSink(windowMs = 200) {
  const batches: { events: readonly SessionEvent[]; settle: (error?: Error) => void }[] = []
  let released = 0
  const sink = createWriteBehindSink({
    windowMs,
    describe: () => 'session s (test)',
    writeBatch: (events) =>
      new Promise<void>((resolve, reject) => {
        batches.push({ events, settle: (error) => (error ? reject(error) : resolve()) })
      }),
    async release() {
      released++
    },
  })
  return { sink, batches, released: () => released }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('the write-behind sink', () => {
  it('writes everything appended since the last flush as one batch', async () => {
    const { sink, batches } = controlledSink()
    for (let seq = 0; seq < 5; seq++) sink.write(event(seq))
    const flushed = sink.flush()
    expect(batches.map((batch) => batch.events.map((e) => e.seq))).toEqual([[0, 1, 2, 3, 4]])
    batches[0]!.settle()
    await flushed
  })

  it('writes nothing for a flush with nothing new, and waits for a batch in flight', async () => {
    const { sink, batches } = controlledSink()
    sink.write(event(0))
    const first = sink.flush()
    let isSecondDone = false
    const second = sink.flush().then(() => {
      isSecondDone = true
    })
    expect(batches).toHaveLength(1)
    await Promise.resolve()
    expect(isSecondDone).toBe(false)
    batches[0]!.settle()
    await Promise.all([first, second])
    await sink.flush()
    expect(batches).toHaveLength(1)
  })

  it('flushes on its own once the window after the first unflushed append passes', async () => {
    vi.useFakeTimers()
    const { sink, batches } = controlledSink(200)
    sink.write(event(0))
    vi.advanceTimersByTime(100)
    sink.write(event(1))
    expect(batches).toHaveLength(0)
    vi.advanceTimersByTime(100)
    expect(batches.map((batch) => batch.events.length)).toEqual([2])
    batches[0]!.settle()
  })

  it('keeps batches in order, one at a time', async () => {
    const { sink, batches } = controlledSink()
    sink.write(event(0))
    const first = sink.flush()
    sink.write(event(1))
    const second = sink.flush()
    await Promise.resolve()
    expect(batches).toHaveLength(1)
    batches[0]!.settle()
    await first
    await vi.waitFor(() => expect(batches).toHaveLength(2))
    expect(batches[1]!.events.map((e) => e.seq)).toEqual([1])
    batches[1]!.settle()
    await second
  })

  it('after a failed batch, writes nothing more and fails every later append and flush', async () => {
    const { sink, batches, released } = controlledSink()
    sink.write(event(0))
    const first = sink.flush()
    sink.write(event(1))
    const second = sink.flush()
    batches[0]!.settle(new Error('ENOSPC: no space left on device'))
    await expect(first).rejects.toBeInstanceOf(StoreError)
    await expect(second).rejects.toThrowError(
      /could not write session s \(test\): ENOSPC.*seq 0 on were not saved/,
    )
    expect(batches).toHaveLength(1)
    expect(() => sink.write(event(2))).toThrowError(StoreError)
    await expect(sink.flush()).rejects.toBeInstanceOf(StoreError)
    await expect(sink.close()).rejects.toBeInstanceOf(StoreError)
    expect(released()).toBe(1)
  })

  it('refuses an event its check rejects, buffering nothing', async () => {
    const batches: (readonly SessionEvent[])[] = []
    const sink = createWriteBehindSink({
      windowMs: 200,
      describe: () => 'session s',
      check: (candidate) => {
        if (candidate.seq === 1) throw new Error('bad data')
      },
      writeBatch: async (events) => {
        batches.push(events)
      },
      release: async () => {},
    })
    sink.write(event(0))
    expect(() => sink.write(event(1))).toThrowError('bad data')
    await sink.close()
    expect(batches.map((batch) => batch.map((e) => e.seq))).toEqual([[0]])
  })
})
