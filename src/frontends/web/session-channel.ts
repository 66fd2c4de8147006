/**
 * The fan-out of one session to the WebSockets that follow it. Its source is either the live
 * session this host runs (events as they are committed, notifications as they happen) or, when
 * another process writes the session or nobody does, the stored log followed read-only. When
 * the session starts or stops running here the source switches, and every client resumes from
 * its own cursor over the new source: no gap, no duplicate.
 */
import type { SessionEvent, SessionHeader, SessionStore } from '../../index.js'
import { followSession } from './follow.js'
import {
  createStreamClient,
  type StreamClient,
  type StreamLimits,
  type StreamSocket,
  type StreamSource,
} from './stream-client.js'
import type { WebSession } from './web-session.js'
import type { BusyInfo, LiveSnapshot, SessionMode, SlowCloseReason, StreamMessage } from './wire.js'

export type ChannelOptions = {
  readonly id: string
  readonly header: SessionHeader
  readonly store: SessionStore
  readonly limits: StreamLimits
  /** The seq after the last stored event when the channel was made (the follower goes on from it). */
  readonly nextSeq: number
  /** Called when the last client left (the owner drops the channel unless the session is live). */
  readonly onIdle: () => void
  readonly onDrop?: (info: SlowCloseReason) => void
}

export interface SessionChannel {
  readonly id: string
  readonly clientCount: number
  readonly mode: SessionMode
  /** Adds a socket that holds the log up to `since`; it is sent `hello`, the replay, then live. */
  attach(socket: StreamSocket, since: number, onClosed: (close: () => void) => void): void
  /** The session now runs here. */
  goLive(web: WebSession): void
  /**
   * The session stopped running here (closed) or was found busy elsewhere. `nextSeq`: the seq
   * after the last stored event, to follow from (default: the last one the channel knows).
   */
  goFollow(options?: { readonly nextSeq?: number; readonly busy?: BusyInfo }): void
  /** The last seq known to the channel. */
  lastSeq(): number
  /** Closes every client (host shutting down). */
  close(code: number, reason: string): void
}

type Source =
  | { readonly kind: 'live'; readonly web: WebSession; readonly stop: () => void }
  | {
      readonly kind: 'follow'
      /** The seq after the last stored event known. */
      next: number
      readonly busy?: BusyInfo
      follower?: AbortController | undefined
    }

export function createSessionChannel(options: ChannelOptions): SessionChannel {
  const clients = new Set<StreamClient>()
  let header = options.header
  let source: Source = { kind: 'follow', next: options.nextSeq }

  const mode = (): SessionMode =>
    source.kind === 'live'
      ? { kind: 'live' }
      : source.busy === undefined
        ? { kind: 'follow' }
        : { kind: 'follow', busy: source.busy }
  // A live session may not hold its history (docs/spec.md §9.2): clients read it from the
  // session, which reads it from the store. A followed log is not held at all (decision 0165):
  // the channel knows only where it ends, and a client catching up reads it from the store.
  const streamSource: StreamSource = {
    nextSeq: () => (source.kind === 'live' ? source.web.runtime.session.nextSeq : source.next),
    eventAt: (seq) =>
      source.kind === 'live' ? source.web.runtime.session.eventAt(seq) : undefined,
    read(fromSeq, throughSeq, signal) {
      if (source.kind === 'live')
        return source.web.runtime.session.readEvents({ fromSeq, throughSeq, signal })
      return readStored(options.store, options.id, fromSeq, throughSeq, signal)
    },
    liveSnapshot: (): LiveSnapshot =>
      source.kind === 'live'
        ? { ...source.web.snapshot(), mode: mode() }
        : { status: 'idle', replay: [], inputs: [], approvals: [], mode: mode() },
  }

  const broadcastEvent = (event: SessionEvent) => {
    if (clients.size === 0) return
    const frame = `{"type":"events","events":[${JSON.stringify(event)}]}`
    for (const client of clients) client.deliverEvent(event, frame)
  }
  const broadcast = (message: StreamMessage) => {
    if (clients.size === 0) return
    const text = JSON.stringify(message)
    for (const client of clients) client.deliver(text)
  }

  const startFollowing = () => {
    if (source.kind !== 'follow' || source.follower || clients.size === 0) return
    const current = source
    const controller = new AbortController()
    current.follower = controller
    void (async () => {
      while (!controller.signal.aborted) {
        try {
          for await (const event of followSession(
            options.store,
            options.id,
            current.next,
            controller.signal,
          )) {
            if (event.seq !== current.next) continue
            current.next++
            broadcastEvent(event)
          }
        } catch (error) {
          // Reading can fail while a writer replaces files; say so and try again shortly.
          broadcast({
            type: 'problem',
            code: 'FOLLOW_FAILED',
            message: (error as Error).message ?? String(error),
          })
          await new Promise((resolve) => setTimeout(resolve, 1000).unref())
        }
      }
    })()
  }
  const stopFollowing = () => {
    if (source.kind === 'follow') {
      source.follower?.abort()
      source.follower = undefined
    }
  }
  const resync = () => {
    for (const client of clients) client.pump()
  }

  return {
    id: options.id,
    get clientCount() {
      return clients.size
    },
    get mode() {
      return mode()
    },
    attach(socket, since, onClosed) {
      const hello: StreamMessage = { type: 'hello', header, mode: mode(), since }
      socket.send(JSON.stringify(hello))
      const client = createStreamClient({
        socket,
        since,
        source: streamSource,
        limits: options.limits,
        onDrop: (info) => {
          clients.delete(client)
          options.onDrop?.(info)
          if (clients.size === 0) {
            stopFollowing()
            options.onIdle()
          }
        },
      })
      clients.add(client)
      onClosed(() => {
        if (!clients.delete(client)) return
        if (clients.size === 0) {
          stopFollowing()
          options.onIdle()
        }
      })
      client.pump()
      startFollowing()
    },
    goLive(web) {
      stopFollowing()
      header = web.runtime.session.header
      const stop = web.subscribe((item) => {
        if (item.kind === 'event') broadcastEvent(item.event)
        else broadcast(item.message)
      })
      source = { kind: 'live', web, stop }
      resync()
    },
    goFollow(change = {}) {
      const before = streamSource.nextSeq()
      const next = change.nextSeq ?? before
      if (source.kind === 'live') source.stop()
      else stopFollowing()
      source = {
        kind: 'follow',
        next,
        ...(change.busy === undefined ? {} : { busy: change.busy }),
      }
      broadcast({ type: 'mode', mode: mode() })
      // The stored log, after the session closed, may hold more than the live clients got.
      if (next > before) resync()
      startFollowing()
    },
    lastSeq: () => streamSource.nextSeq() - 1,
    close(code, reason) {
      stopFollowing()
      if (source.kind === 'live') source.stop()
      for (const client of clients) client.close(code, reason)
      clients.clear()
    },
  }
}

/**
 * Stored events `fromSeq..throughSeq` (all durable already), as `readEvents` batches: read
 * through the store's follow, which checks them as any read does and holds none of them, and
 * left once `throughSeq` is read.
 */
async function* readStored(
  store: SessionStore,
  id: string,
  fromSeq: number,
  throughSeq: number,
  signal: AbortSignal,
): AsyncGenerator<readonly SessionEvent[]> {
  if (fromSeq > throughSeq) return
  for await (const event of followSession(store, id, fromSeq, signal)) {
    yield [event]
    if (event.seq >= throughSeq) return
  }
}
