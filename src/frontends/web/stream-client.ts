/**
 * One WebSocket following one session. It first replays the log after the client's `since`
 * seq in frames, sending the next frame only when the socket has drained below a high-water
 * mark; once it reaches the end of the log (in the same synchronous stretch that sends the
 * live snapshot) it switches to live delivery. A live client whose unsent bytes pass
 * `maxBufferedBytes` is dropped with close code 4008 and the last seq it was sent, so the
 * host's memory per client stays bounded and the client resumes from its own last seq.
 */
import type { SessionEvent } from '../../index.js'
import { CLOSE_CODES, type LiveSnapshot, type SlowCloseReason, type StreamMessage } from './wire.js'

/** The part of a `ws` WebSocket the stream uses. */
export interface StreamSocket {
  readonly bufferedAmount: number
  send(data: string, callback?: (error?: Error | null) => void): void
  close(code?: number, reason?: string): void
  terminate(): void
}

export type StreamLimits = {
  /** Unsent bytes a live client may have before it is dropped (default 4 MiB). */
  readonly maxBufferedBytes: number
  /** Replay frames are sent while fewer bytes than this are unsent (default 256 KiB). */
  readonly replayHighWaterBytes: number
  /** A replay frame holds events up to about this many characters (default 64 KiB). */
  readonly frameBytes: number
  /** How long a dropped client's close handshake may take before it is cut (default 5 s). */
  readonly dropGraceMs: number
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxBufferedBytes: 4 * 1024 * 1024,
  replayHighWaterBytes: 256 * 1024,
  frameBytes: 64 * 1024,
  dropGraceMs: 5000,
}

/** What a client reads from the session it follows. */
export interface StreamSource {
  /** The seq after the last event known. */
  nextSeq(): number
  /** The event at `seq` if it is held in memory, else undefined (then it is `read`). */
  eventAt(seq: number): SessionEvent | undefined
  /** The events `fromSeq..throughSeq`, in order, in batches (from the store where not held). */
  read(
    fromSeq: number,
    throughSeq: number,
    signal: AbortSignal,
  ): AsyncIterable<readonly SessionEvent[]>
  liveSnapshot(): LiveSnapshot
}

export interface StreamClient {
  readonly phase: 'replaying' | 'live' | 'closed'
  /** Starts (or, after the source changed, restarts) the replay from the client's cursor. */
  pump(): void
  /** Sends a live event frame; `event` must be the next seq this client needs. */
  deliverEvent(event: SessionEvent, frame: string): void
  /** Sends a live message to a caught-up client. */
  deliver(text: string): void
  /** Closes the socket (host shutting down, session gone). */
  close(code: number, reason: string): void
}

export type StreamClientOptions = {
  readonly socket: StreamSocket
  /** The last seq the client holds (−1 for none). */
  readonly since: number
  readonly source: StreamSource
  readonly limits: StreamLimits
  /** Called once when the client is dropped for being slow. */
  readonly onDrop?: (info: SlowCloseReason) => void
}

export function createStreamClient(options: StreamClientOptions): StreamClient {
  const { socket, source, limits } = options
  let phase: StreamClient['phase'] = 'replaying'
  let cursor = options.since + 1
  /** A frame waits to drain, or a read of the log runs: it goes on from the cursor. */
  let isWaiting = false
  /** The source changed while a read of the old one ran (its failure is then no problem). */
  let isSourceChanged = false
  /** Aborts a read of the log when the client closes. */
  const closed = new AbortController()

  const drop = () => {
    const reason: SlowCloseReason = { reason: 'slow', lastSeq: cursor - 1 }
    phase = 'closed'
    closed.abort()
    socket.close(CLOSE_CODES.slow, JSON.stringify(reason))
    // A client that does not read cannot finish the close handshake either.
    setTimeout(() => socket.terminate(), limits.dropGraceMs).unref()
    options.onDrop?.(reason)
  }
  const sendLive = (text: string) => {
    socket.send(text)
    if (socket.bufferedAmount > limits.maxBufferedBytes) drop()
  }
  const frameOf = (parts: readonly string[]) => `{"type":"events","events":[${parts.join(',')}]}`
  /**
   * Sends a replay frame. Past the high-water mark it resolves once the frame is handed to the
   * OS (the replay waits); otherwise undefined, at once.
   */
  const sendFrame = (frame: string): Promise<boolean> | undefined => {
    if (socket.bufferedAmount + frame.length <= limits.replayHighWaterBytes) {
      socket.send(frame)
      return undefined
    }
    return new Promise((resolve) => socket.send(frame, (error) => resolve(!error)))
  }
  /** After a wait: the replay goes on unless the client closed meanwhile. */
  const resume = (isSent: boolean) => {
    isWaiting = false
    if (!isSent) phase = 'closed'
    else if (phase === 'replaying') client.pump()
  }

  /**
   * Replays the events the source does not hold, from the cursor through `throughSeq`, then
   * goes on as `pump`. A log that cannot be read ends the stream with a `problem`.
   */
  async function replayStored(throughSeq: number): Promise<void> {
    isWaiting = true
    isSourceChanged = false
    let parts: string[] = []
    let size = 0
    // The seq after the last event read; the cursor follows it frame by frame, as sent.
    let next = cursor
    const flush = async () => {
      const frame = frameOf(parts)
      parts = []
      size = 0
      cursor = next
      if ((await sendFrame(frame)) === false) phase = 'closed'
    }
    try {
      for await (const batch of source.read(cursor, throughSeq, closed.signal)) {
        for (const event of batch) {
          if (event.seq !== next) continue
          const text = JSON.stringify(event)
          parts.push(text)
          size += text.length
          next++
          if (parts.length >= 1000 || size >= limits.frameBytes) await flush()
          if (phase === 'closed') return
        }
      }
      if (parts.length > 0) await flush()
      if (phase === 'closed') return
      if (cursor <= throughSeq) throw new Error(`the log ends at seq ${cursor - 1}`)
      resume(true)
    } catch (error) {
      isWaiting = false
      if (phase === 'closed') return
      // A session that closed under the read: the new source goes on from the cursor.
      if (isSourceChanged) return client.pump()
      const problem: StreamMessage = {
        type: 'problem',
        code: (error as { code?: unknown }).code === 'LOG_CORRUPT' ? 'LOG_CORRUPT' : 'READ_FAILED',
        message: `cannot read the log from seq ${cursor}: ${(error as Error).message ?? String(error)}`,
      }
      socket.send(JSON.stringify(problem))
      client.close(CLOSE_CODES.unreadable, 'the log could not be read')
    }
  }

  const client: StreamClient = {
    get phase() {
      return phase
    },
    pump() {
      if (phase === 'closed') return
      phase = 'replaying'
      if (isWaiting) {
        isSourceChanged = true
        return
      }
      // Synchronous while the events are held in memory: the switch to live happens in the
      // same stretch as the check that the cursor reached the end, so no event is missed.
      for (;;) {
        const end = source.nextSeq()
        if (cursor >= end) break
        if (source.eventAt(cursor) === undefined) {
          // A resumed session does not hold its history (docs/spec.md §9.2): read it.
          void replayStored(end - 1)
          return
        }
        const parts: string[] = []
        let size = 0
        for (
          let event = source.eventAt(cursor);
          event !== undefined && parts.length < 1000 && size < limits.frameBytes;
          event = cursor < end ? source.eventAt(cursor) : undefined
        ) {
          const text = JSON.stringify(event)
          parts.push(text)
          size += text.length
          cursor++
        }
        const sending = sendFrame(frameOf(parts))
        if (sending) {
          // Wait until this frame is handed to the OS, then go on from the cursor.
          isWaiting = true
          void sending.then(resume)
          return
        }
      }
      phase = 'live'
      const caughtUp: StreamMessage = {
        type: 'caught-up',
        lastSeq: cursor - 1,
        live: source.liveSnapshot(),
      }
      sendLive(JSON.stringify(caughtUp))
    },
    deliverEvent(event, frame) {
      if (phase !== 'live') return
      if (event.seq !== cursor) {
        // Not the next one (cannot happen while the source is consistent): replay instead.
        client.pump()
        return
      }
      cursor = event.seq + 1
      sendLive(frame)
    },
    deliver(text) {
      if (phase === 'live') sendLive(text)
    },
    close(code, reason) {
      if (phase === 'closed') return
      phase = 'closed'
      closed.abort()
      socket.close(code, reason)
    },
  }
  return client
}
