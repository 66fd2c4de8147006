/**
 * `startWebServer`: the web host's HTTP server on one port: the API and page (api.ts) and the
 * session streams (WebSocket upgrades at `/api/sessions/:id/stream?since=N`), all behind the
 * same gate (security.ts). It serves the sessions of one runtime host.
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { getRequestListener } from '@hono/node-server'
import { WebSocketServer } from 'ws'
import { RudderError } from '../../index.js'
import type { Host } from '../../runtime/host.js'
import { createApi } from './api.js'
import { createGuard, freshToken, type Guard } from './security.js'
import { defaultAssetsDir, loadAssets } from './static-assets.js'
import { DEFAULT_STREAM_LIMITS, type StreamLimits } from './stream-client.js'
import { createWebSessions, type WebSessions } from './web-sessions.js'
import type { SlowCloseReason } from './wire.js'

export type WebServerOptions = {
  readonly host: Host
  /** Default 127.0.0.1. Anything else is reachable from other machines. */
  readonly hostname?: string
  /** Default 0: a free port chosen by the system. */
  readonly port?: number
  /** Default: a fresh random token. */
  readonly token?: string
  /** Host names (besides IP literals and `localhost`) the `Host` header may carry. */
  readonly allowedHosts?: readonly string[]
  readonly limits?: Partial<StreamLimits>
  /** Largest request body accepted (default 1 MiB). */
  readonly bodyLimitBytes?: number
  /** The built page (default: `dist/web/` of this package). */
  readonly assetsDir?: string
  /** Where unexpected failures are logged (default: stderr). */
  readonly log?: (line: string) => void
  /** Told when a slow client is dropped (tests, diagnostics). */
  readonly onDrop?: (info: SlowCloseReason & { readonly sessionId: string }) => void
}

export interface WebServer {
  /** `http://host:port/` (without the token). */
  readonly url: string
  /** The URL to open: it carries the token, which the page trades for a cookie. */
  readonly tokenUrl: string
  readonly port: number
  readonly token: string
  readonly sessions: WebSessions
  /** Closes every stream, stops the sessions this server runs, then the listener. */
  close(): Promise<void>
}

/** Starts the server; resolves once it listens. Throws `CONFIG` when the page was not built. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const assets = loadAssets(options.assetsDir ?? defaultAssetsDir())
  const token = options.token ?? freshToken()
  const hostname = options.hostname ?? '127.0.0.1'
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const limits: StreamLimits = { ...DEFAULT_STREAM_LIMITS, ...options.limits }
  const sessions = createWebSessions({
    host: options.host,
    limits,
    ...(options.onDrop === undefined ? {} : { onDrop: options.onDrop }),
  })
  let guard: Guard | undefined
  const currentGuard = () => {
    if (!guard) throw new RudderError('INTERNAL', 'the web server is not listening yet')
    return guard
  }
  const app = createApi({
    host: options.host,
    sessions,
    guard: currentGuard,
    assets,
    bodyLimitBytes: options.bodyLimitBytes ?? 1024 * 1024,
    version: packageVersion(),
    log,
  })
  const server = createServer(getRequestListener(app.fetch, { overrideGlobalObjects: false }))
  // The stream carries nothing from the client: small frames only, no compression state.
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: 4096,
    perMessageDeflate: false,
  })
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {
      // A client that vanished mid-handshake; nothing to clean up beyond the socket itself.
    })
    void upgrade({ request, socket, head, guard: currentGuard(), sessions, sockets }).catch(
      (error: unknown) => {
        log(`rudder serve: stream upgrade failed: ${(error as Error).stack ?? String(error)}`)
        refuse(socket, 500, 'INTERNAL', 'the host failed to open the stream')
      },
    )
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, hostname, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  guard = createGuard({
    token,
    port,
    allowedHosts: [...(options.allowedHosts ?? []), hostname],
  })
  const shown = hostname.includes(':') ? `[${hostname}]` : hostname
  const url = `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${port}/`
  let closing: Promise<void> | undefined
  return {
    url,
    tokenUrl: `${url}?token=${encodeURIComponent(token)}`,
    port,
    token,
    sessions,
    close() {
      closing ??= (async () => {
        await sessions.closeAll()
        sockets.close()
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        })
      })()
      return closing
    },
  }
}

type Upgrade = {
  readonly request: IncomingMessage
  readonly socket: Duplex
  readonly head: Buffer
  readonly guard: Guard
  readonly sessions: WebSessions
  readonly sockets: WebSocketServer
}

async function upgrade({ request, socket, head, guard, sessions, sockets }: Upgrade) {
  const refusal = guard.checkRequest((name) => {
    const value = request.headers[name]
    return Array.isArray(value) ? value.join(', ') : value
  })
  if (refusal) return refuse(socket, refusal.status, refusal.code, refusal.message)
  const url = new URL(request.url ?? '/', 'http://host.invalid')
  const match = /^\/api\/sessions\/([^/]+)\/stream$/.exec(url.pathname)
  if (!match) return refuse(socket, 404, 'NOT_FOUND', `no stream at ${url.pathname}`)
  const id = decodeURIComponent(match[1]!)
  const sinceText = url.searchParams.get('since') ?? '-1'
  const since = Number(sinceText)
  if (!Number.isInteger(since) || since < -1)
    return refuse(
      socket,
      400,
      'INVALID_REQUEST',
      `since must be the last seq the client holds (a whole number ≥ -1), got ${JSON.stringify(sinceText)}`,
    )
  let channel: Awaited<ReturnType<WebSessions['channel']>>
  try {
    channel = await sessions.channel(id)
  } catch (error) {
    if (error instanceof RudderError && error.code === 'SESSION_NOT_FOUND')
      return refuse(socket, 404, error.code, error.message)
    throw error
  }
  if (since > channel.lastSeq())
    return refuse(
      socket,
      400,
      'INVALID_REQUEST',
      `since ${since} is past the end of session ${id} (its last seq is ${channel.lastSeq()}); resume from a seq you received`,
    )
  sockets.handleUpgrade(request, socket, head, (ws) => {
    ws.on('error', () => {
      // The close event follows; the channel forgets the client there.
    })
    channel.attach(ws, since, (forget) => ws.on('close', forget))
  })
}

function refuse(socket: Duplex, status: number, code: string, message: string) {
  const body = JSON.stringify({ error: { code, message } })
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }
  socket.end(
    `HTTP/1.1 ${status} ${reason[status as keyof typeof reason] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  )
}

function packageVersion(): string {
  try {
    const url = new URL('../../../package.json', import.meta.url)
    return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version
  } catch {
    // Not fatal: the version is only shown on the page.
    return 'unknown'
  }
}
