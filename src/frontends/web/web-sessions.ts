/**
 * The sessions of one web host: those it runs (each a `WebSession` over a runtime from the
 * host) and the channels that stream sessions to browsers, live or read-only. Running a
 * session takes its writer lease; a session another process holds is answered with
 * `SessionBusyError` (naming that process and host) and stays followable read-only.
 */
import { resolve } from 'node:path'
import { RudderError, SessionBusyError, type SessionHeader } from '../../index.js'
import type { Host, SessionChoice } from '../../runtime/host.js'
import { createApprovalBoard } from './approval-board.js'
import { createSessionChannel, type SessionChannel } from './session-channel.js'
import type { StreamLimits } from './stream-client.js'
import { createWebSession, type WebSession } from './web-session.js'
import { type BusyInfo, CLOSE_CODES, type SlowCloseReason } from './wire.js'

export type WebSessionsOptions = {
  readonly host: Host
  readonly limits: StreamLimits
  readonly onDrop?: (info: SlowCloseReason & { readonly sessionId: string }) => void
}

export interface WebSessions {
  /** Creates a session in `cwd` (default: the host's) and runs it here. */
  create(options: { readonly title?: string; readonly cwd?: string }): Promise<WebSession>
  /** Runs a stored session here (takes its lease). Throws `SessionBusyError`, `SESSION_NOT_FOUND`. */
  open(id: string): Promise<WebSession>
  fork(id: string, atSeq?: number): Promise<WebSession>
  /** The session if this host runs it. */
  live(id: string): WebSession | undefined
  /** The session, opened here first if needed. */
  ensureLive(id: string): Promise<WebSession>
  /** Stops running a session here (its lease is released). False if it was not running here. */
  close(id: string): Promise<boolean>
  /** The channel that streams a session (made on demand). Throws `SESSION_NOT_FOUND`. */
  channel(id: string): Promise<SessionChannel>
  /** Closes every stream and stops every session this host runs. */
  closeAll(): Promise<void>
}

export function busyInfo(error: SessionBusyError): BusyInfo {
  const where = error.host === undefined ? '' : ` on host ${error.host}`
  return {
    pid: error.pid,
    ...(error.host === undefined ? {} : { host: error.host }),
    message: `session ${error.sessionId} is busy${where} (pid ${error.pid}): that process runs it, so this host can only follow it read-only`,
  }
}

export function createWebSessions(options: WebSessionsOptions): WebSessions {
  const { host } = options
  const running = new Map<string, WebSession>()
  const opening = new Map<string, Promise<WebSession>>()
  const channels = new Map<string, SessionChannel>()
  const making = new Map<string, Promise<SessionChannel>>()

  const run = async (choice: SessionChoice, cwd?: string): Promise<WebSession> => {
    const approvals = createApprovalBoard()
    const runtime = await host.openSession({
      choice,
      asker: approvals.asker,
      ...(cwd === undefined ? {} : { cwd }),
    })
    const web = createWebSession(runtime, approvals)
    running.set(web.id, web)
    channels.get(web.id)?.goLive(web)
    return web
  }

  const makeChannel = (id: string, header: SessionHeader, nextSeq: number) => {
    const channel = createSessionChannel({
      id,
      header,
      store: host.store,
      limits: options.limits,
      nextSeq,
      onIdle: () => {
        if (!running.has(id) && channels.get(id) === channel) channels.delete(id)
      },
      ...(options.onDrop === undefined
        ? {}
        : { onDrop: (info: SlowCloseReason) => options.onDrop?.({ ...info, sessionId: id }) }),
    })
    return channel
  }

  const sessions: WebSessions = {
    create: ({ title, cwd }) =>
      run(
        { kind: 'new', ...(title === undefined ? {} : { title }) },
        cwd === undefined ? undefined : resolve(host.cwd, cwd),
      ),
    open(id) {
      const current = running.get(id)
      if (current) return Promise.resolve(current)
      let pending = opening.get(id)
      if (!pending) {
        pending = run({ kind: 'resume', id }).catch((error: unknown) => {
          if (error instanceof SessionBusyError)
            channels.get(id)?.goFollow({ busy: busyInfo(error) })
          throw error
        })
        opening.set(id, pending)
        const forget = () => opening.delete(id)
        pending.then(forget, forget)
      }
      return pending
    },
    fork: (id, atSeq) => run({ kind: 'fork', id, ...(atSeq === undefined ? {} : { atSeq }) }),
    live: (id) => running.get(id),
    ensureLive: (id) => sessions.open(id),
    async close(id) {
      const web = running.get(id)
      if (!web) return false
      // Closing cancels a running turn: its last events still reach the channel.
      await web.runtime.close()
      // Closed: every event it appended is durable, and the channel follows the stored log
      // from after the last (decision 0165: a followed log is read, not held).
      const nextSeq = web.runtime.session.nextSeq
      web.detach()
      running.delete(id)
      const channel = channels.get(id)
      if (!channel) return true
      channel.goFollow({ nextSeq })
      if (channel.clientCount === 0) channels.delete(id)
      return true
    },
    async channel(id) {
      const existing = channels.get(id)
      if (existing) return existing
      let pending = making.get(id)
      if (!pending) {
        pending = (async () => {
          const web = running.get(id)
          let channel: SessionChannel
          if (web) {
            channel = makeChannel(id, web.runtime.session.header, 0)
            channel.goLive(web)
          } else {
            // The header and where the log ends: the events are neither read into memory nor kept.
            const { header, nextSeq } = await host.store.stat(id)
            channel = makeChannel(id, header, nextSeq)
            // A session this host started running meanwhile.
            const started = running.get(id)
            if (started) channel.goLive(started)
          }
          channels.set(id, channel)
          return channel
        })()
        making.set(id, pending)
        const forget = () => making.delete(id)
        pending.then(forget, forget)
      }
      return pending
    },
    async closeAll() {
      for (const channel of channels.values())
        channel.close(CLOSE_CODES.gone, 'the host is shutting down')
      channels.clear()
      await Promise.allSettled([...running.keys()].map((id) => sessions.close(id)))
      if (running.size > 0)
        throw new RudderError('INTERNAL', `${running.size} sessions did not close`)
    },
  }
  return sessions
}
