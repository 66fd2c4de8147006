/**
 * A web host for tests: a temp workspace and home, a scripted model from a JSON file (steps
 * may hold until a file appears: `release(name)` creates it), a SQLite store, a real server on
 * 127.0.0.1 with a random port, and clients that speak HTTP and WebSocket to it.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, onTestFinished } from 'vitest'
import WebSocket from 'ws'
import {
  startWebServer,
  type WebServer,
  type WebServerOptions,
} from '../../../src/frontends/web/web-server.js'
import type { StreamMessage } from '../../../src/frontends/web/wire.js'
import { checkLog, type SessionEvent } from '../../../src/index.js'
import type { ApprovalMode } from '../../../src/runtime/approval-control.js'
import { type Host, openHost } from '../../../src/runtime/host.js'

export type ScriptStep = Record<string, unknown>

export type WebPlace = {
  readonly root: string
  readonly cwd: string
  readonly host: Host
  readonly server: WebServer
  readonly base: string
  /** Creates `<root>/<name>`, releasing a step that holds until it exists. */
  release(name: string): Promise<void>
  /** fetch with the token (Bearer) unless `headers` says otherwise. */
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>
  /** JSON of an authorized call that must succeed. */
  json<T = Record<string, unknown>>(
    path: string,
    init?: RequestInit & { json?: unknown },
  ): Promise<T>
  stream(id: string, since?: number, headers?: Record<string, string>): StreamReader
  /** The log of a session, read from the store; checks it keeps every invariant. */
  checkedLog(id: string): Promise<readonly SessionEvent[]>
}

export async function webPlace(
  steps: readonly ScriptStep[],
  options: {
    approvalMode?: ApprovalMode
    server?: Partial<WebServerOptions>
    config?: Record<string, unknown>
    /** Registers the teardown (default: after the current test). */
    cleanup?: (teardown: () => Promise<void>) => void
  } = {},
): Promise<WebPlace> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'rudder-web-')))
  const home = join(root, 'home')
  const cwd = join(root, 'work')
  await mkdir(join(home, '.rudder'), { recursive: true })
  await mkdir(join(cwd, '.rudder'), { recursive: true })
  if (options.config)
    await writeFile(join(home, '.rudder', 'config.json'), JSON.stringify(options.config))
  const script = join(root, 'script.json')
  await writeFile(script, JSON.stringify({ model: 'demo', steps }))
  const host = await openHost({
    cwd,
    env: {},
    home,
    store: `sqlite:${join(root, 'sessions.db')}`,
    defaults: {
      provider: `scripted:${script}`,
      ...(options.approvalMode === undefined ? {} : { approvalMode: options.approvalMode }),
    },
  })
  const server = await startWebServer({ host, log: () => {}, ...options.server })
  ;(options.cleanup ?? onTestFinished)(async () => {
    await server.close()
    await host.close()
    await rm(root, { recursive: true, force: true })
  })
  const call = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, headers, ...rest } = init
    return fetch(`${server.url.replace(/\/$/, '')}${path}`, {
      ...rest,
      headers: {
        authorization: `Bearer ${server.token}`,
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        ...(headers as Record<string, string> | undefined),
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json), method: rest.method ?? 'POST' }),
    })
  }
  const place: WebPlace = {
    root,
    cwd,
    host,
    server,
    base: server.url,
    release: (name) => writeFile(join(root, name), ''),
    call,
    async json(path, init) {
      const response = await call(path, init)
      const text = await response.text()
      if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`)
      return JSON.parse(text)
    },
    stream: (id, since = -1, headers = {}) =>
      openStream(`${server.url.replace(/^http/, 'ws')}api/sessions/${id}/stream?since=${since}`, {
        authorization: `Bearer ${server.token}`,
        ...headers,
      }),
    async checkedLog(id) {
      // What the live session holds may still wait in the store's flush window.
      await server.sessions.live(id)?.runtime.session.flush()
      const { events } = await host.store.read(id)
      expect(checkLog(events)).toEqual([])
      return events
    },
  }
  return place
}

/** A WebSocket client that records every message and lets a test wait for one. */
export type StreamReader = {
  readonly socket: WebSocket
  readonly messages: StreamMessage[]
  /** Every event received, in order. */
  readonly events: SessionEvent[]
  /** Resolves with the first message (from the start) that `predicate` accepts. */
  until(predicate: (message: StreamMessage) => boolean): Promise<StreamMessage>
  /** Resolves once the event with this seq arrived. */
  untilSeq(seq: number): Promise<void>
  readonly closed: Promise<{ code: number; reason: string }>
  close(): void
}

export function openStream(url: string, headers: Record<string, string>): StreamReader {
  const socket = new WebSocket(url, { headers, perMessageDeflate: false })
  const messages: StreamMessage[] = []
  const events: SessionEvent[] = []
  const waiters: {
    predicate: (message: StreamMessage) => boolean
    resolve: (m: StreamMessage) => void
  }[] = []
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as StreamMessage
    messages.push(message)
    if (message.type === 'events') events.push(...message.events)
    for (const waiter of [...waiters])
      if (waiter.predicate(message)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(message)
      }
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve, reject) => {
    socket.on('close', (code, reason) => resolve({ code, reason: String(reason) }))
    socket.on('error', reject)
  })
  closed.catch(() => {
    // Tests that expect a refused upgrade look at `closed` themselves.
  })
  onTestFinished(() => socket.terminate())
  const until = (predicate: (message: StreamMessage) => boolean) => {
    const found = messages.find(predicate)
    if (found) return Promise.resolve(found)
    return new Promise<StreamMessage>((resolve) => waiters.push({ predicate, resolve }))
  }
  return {
    socket,
    messages,
    events,
    until,
    untilSeq: async (seq) => {
      await until(
        (message) => message.type === 'events' && message.events.some((event) => event.seq >= seq),
      )
    },
    closed,
    close: () => socket.close(),
  }
}

/** A raw HTTP request, for headers fetch will not let a caller set (Host). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{
  status: number
  body: string
  headers: Record<string, string | string[] | undefined>
}> {
  return new Promise((resolve, reject) => {
    // The path is sent as written (no dot-segment resolution), to test what a server gets.
    const [, hostname, port, path] = /^http:\/\/([^/:]+):(\d+)(.*)$/.exec(url) ?? []
    const target = { hostname, port: Number(port), path: path || '/' }
    const request = httpRequest(
      { ...target, method: options.method ?? 'GET', headers: options.headers },
      (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          body += chunk
        })
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        )
      },
    )
    request.on('error', reject)
    request.end(options.body)
  })
}

/** Events of a log as `type` strings, for compact assertions. */
export function typesOf(events: readonly SessionEvent[]): string[] {
  return events.map((event) => event.type)
}

/** Opens a WebSocket and resolves with the HTTP status of a refused upgrade (or 101). */
export function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers })
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0)
      socket.terminate()
    })
    socket.on('open', () => {
      resolve(101)
      socket.terminate()
    })
    socket.on('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error)
    })
  })
}
