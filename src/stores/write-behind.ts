/**
 * The write-behind sink of a stored session (docs/spec.md §9.1 durability points). Appends are
 * buffered; `flush()` writes the buffer as one batch and makes it durable (one fdatasync or
 * one commit); a timer flushes at most `windowMs` after the first unflushed append. A flush
 * with nothing new costs nothing, so callers may flush at every durability point.
 *
 * Batches are written strictly in order, one at a time. After a failed batch nothing more is
 * written: every later `write` throws and every `flush` rejects with the same `StoreError`,
 * so the durable log is always a prefix of what was appended, with no gap.
 */
import {
  emptyObjectArray,
  messageOf,
  type SessionEvent,
  type SessionSink,
  StoreError,
} from '../core/index.js'

export type WriteBehindOptions = {
  /** Writes one batch and makes it durable. */
  readonly writeBatch: (events: readonly SessionEvent[]) => Promise<void>
  /** Checks an event before it is accepted (throws to refuse it; nothing is buffered). */
  readonly check?: (event: SessionEvent) => void
  /** Longest time an event waits before a background flush. */
  readonly windowMs: number
  /** Runs once on close, after the last flush (even a failed one): release writer and lease. */
  readonly release: () => Promise<void>
  /** Names the session and its location in error messages. */
  readonly describe: () => string
}

/**
 * A timer held for the life of the process, made (and unref'd) as the sink makes its window
 * timers, then cleared. Node's timers are objects of one class, and V8 holds the hidden class of
 * its instances only while some timer has it. The append path makes a timer inline (`write`,
 * inlined into the session's `take`), so when no timer was alive at a full collection, as
 * between the runs of an append benchmark, that code was discarded and compiled again: `take`
 * alone 14–20 ms of compiling, several times in ten runs of 2,002 appends to SQLite (bench B4,
 * decision 0186). Clearing it keeps its class (it only sets fields the class already has) and
 * leaves nothing pending. Exported so that it is a module binding (see `LINE_SHAPE`).
 */
export const TIMER_SHAPE: ReturnType<typeof setTimeout> = heldTimer()

function heldTimer(): ReturnType<typeof setTimeout> {
  const timer = setTimeout(() => {}, 1)
  timer.unref()
  clearTimeout(timer)
  return timer
}

export function createWriteBehindSink(options: WriteBehindOptions): SessionSink {
  let pending = emptyObjectArray<SessionEvent>()
  // The chain of batch writes. It never rejects: a failure is latched in `failure` instead.
  let tail: Promise<void> = Promise.resolve()
  let failure: StoreError | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  /** Batches started and not yet settled. */
  let outstanding = 0
  let closing: Promise<void> | undefined

  function fail(error: unknown, batch: readonly SessionEvent[]): void {
    const first = batch[0]?.seq ?? 0
    failure = new StoreError(
      `could not write ${options.describe()}: ${messageOf(error)}. Events from seq ${first} on were not saved and the session accepts no more appends; fix the cause (disk space, permissions, a removed directory), then open the session again (it resumes from the last durable event)`,
      { cause: error },
    )
  }

  function startBatch(): void {
    if (timer !== undefined) {
      clearTimeout(timer)
      timer = undefined
    }
    if (pending.length === 0) return
    const batch = pending
    pending = emptyObjectArray<SessionEvent>()
    const run = async () => {
      try {
        if (!failure) await options.writeBatch(batch)
      } catch (error) {
        fail(error, batch)
      } finally {
        outstanding--
      }
    }
    // With nothing in flight the batch starts now, so a flush adds no scheduling delay.
    tail = outstanding++ === 0 ? run() : tail.then(run)
  }

  function flush(): Promise<void> {
    startBatch()
    return tail.then(() => {
      if (failure) throw failure
    })
  }

  return {
    write(event) {
      if (failure) throw failure
      if (closing)
        throw new StoreError(`cannot append to ${options.describe()}: the session is closed`)
      options.check?.(event)
      pending.push(event)
      if (timer === undefined) {
        timer = setTimeout(() => {
          timer = undefined
          flush().catch(() => {
            // Latched in `failure`: the next append or flush reports it to its caller.
          })
        }, options.windowMs)
        // A pending window must not keep the process alive; closing the session flushes.
        timer.unref()
      }
    },
    flush,
    close() {
      closing ??= (async () => {
        try {
          await flush()
        } finally {
          await options.release()
        }
      })()
      return closing
    },
  }
}
