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
  send(data: string, callback?: (error?: Error) => void): void
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
  /** The log as far as it is known, indexed by seq. */
  events(): readonly SessionEvent[]
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
  let isWaiting = false

  const drop = () => {
    const reason: SlowCloseReason = { reason: 'slow', lastSeq: cursor - 1 }
    phase = 'closed'
    socket.close(CLOSE_CODES.slow, JSON.stringify(reason))
    // A client that does not read cannot finish the close handshake either.
    setTimeout(() => socket.terminate(), limits.dropGraceMs).unref()
    options.onDrop?.(reason)
  }
  const sendLive = (text: string) => {
    socket.send(text)
    if (socket.bufferedAmount > limits.maxBufferedBytes) drop()
  }

  const client: StreamClient = {
    get phase() {
      return phase
    },
    pump() {
      if (phase === 'closed') return
      phase = 'replaying'
      if (isWaiting) return
      const events = source.events()
      while (cursor < events.length) {
        const parts: string[] = []
        let size = 0
        while (cursor < events.length && parts.length < 1000 && size < limits.frameBytes) {
          const text = JSON.stringify(events[cursor])
          parts.push(text)
          size += text.length
          cursor++
        }
        const frame = `{"type":"events","events":[${parts.join(',')}]}`
        if (socket.bufferedAmount + frame.length > limits.replayHighWaterBytes) {
          // Wait until this frame is handed to the OS, then go on from the cursor.
          isWaiting = true
          socket.send(frame, (error) => {
            isWaiting = false
            if (error) phase = 'closed'
            else if (phase === 'replaying') client.pump()
          })
          return
        }
        socket.send(frame)
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
      socket.close(code, reason)
    },
  }
  return client
}
