/**
 * The fan-out of one session to the WebSockets that follow it. Its source is either the live
 * session this host runs (events as they are committed, notifications as they happen) or, when
 * another process writes the session or nobody does, the stored log followed read-only. When
 * the session starts or stops running here the source switches, and every client resumes from
 * its own cursor over the new source: no gap, no duplicate.
 */
import {
  RudderError,
  type SessionEvent,
  type SessionHeader,
  type SessionStore,
} from '../../index.js'
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
  /** The stored log as read when the channel was made (the follower continues after it). */
  readonly events: readonly SessionEvent[]
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
   * The session stopped running here (closed) or was found busy elsewhere. `events` is the
   * stored log to follow after; required when a live session did not hold its whole history.
   */
  goFollow(options?: { readonly events?: readonly SessionEvent[]; readonly busy?: BusyInfo }): void
  /** The last seq known to the channel. */
  lastSeq(): number
  /** Closes every client (host shutting down). */
  close(code: number, reason: string): void
}

type Source =
  | { readonly kind: 'live'; readonly web: WebSession; readonly stop: () => void }
  | {
      readonly kind: 'follow'
      readonly events: SessionEvent[]
      readonly busy?: BusyInfo
      follower?: AbortController | undefined
    }

export function createSessionChannel(options: ChannelOptions): SessionChannel {
  const clients = new Set<StreamClient>()
  let header = options.header
  let source: Source = { kind: 'follow', events: [...options.events] }

  const mode = (): SessionMode =>
    source.kind === 'live'
      ? { kind: 'live' }
      : source.busy === undefined
        ? { kind: 'follow' }
        : { kind: 'follow', busy: source.busy }
  // A live session may not hold its history (docs/spec.md §9.2): clients read it from the
  // session, which reads it from the store. A followed log is held whole, as read.
  const streamSource: StreamSource = {
    nextSeq: () =>
      source.kind === 'live' ? source.web.runtime.session.nextSeq : source.events.length,
    eventAt: (seq) =>
      source.kind === 'live' ? source.web.runtime.session.eventAt(seq) : source.events[seq],
    read(fromSeq, throughSeq, signal) {
      if (source.kind === 'live')
        return source.web.runtime.session.readEvents({ fromSeq, throughSeq, signal })
      return batchesOf(source.events.slice(fromSeq, throughSeq + 1))
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

  /** The whole log as the current source holds it (a live one only if it holds its history). */
  const knownEvents = (): readonly SessionEvent[] => {
    if (source.kind === 'follow') return source.events
    const session = source.web.runtime.session
    if (session.residentFrom > 0)
      throw new RudderError(
        'INTERNAL',
        `session ${options.id} does not hold its history: pass the stored log to goFollow`,
      )
    return session.residentEvents
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
            current.events.length,
            controller.signal,
          )) {
            if (event.seq !== current.events.length) continue
            current.events.push(event)
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
      const known = change.events ?? knownEvents()
      if (source.kind === 'live') source.stop()
      else stopFollowing()
      source = {
        kind: 'follow',
        events: [...known],
        ...(change.busy === undefined ? {} : { busy: change.busy }),
      }
      broadcast({ type: 'mode', mode: mode() })
      // The stored log, read after the session closed, may hold more than the live clients got.
      if (known.length > before) resync()
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

/** Events already in memory, as `readEvents` batches (one, or none). */
async function* batchesOf(
  events: readonly SessionEvent[],
): AsyncGenerator<readonly SessionEvent[]> {
  if (events.length > 0) yield events
}
