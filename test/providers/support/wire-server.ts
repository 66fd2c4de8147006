/**
 * A local HTTP server on 127.0.0.1 that answers like a provider's API: recorded server-sent
 * event streams, JSON error bodies with status codes and headers. Each request takes the next
 * queued reply; the request (method, path, headers, parsed body) is recorded for assertions.
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** What the server does with one request. */
export type Reply =
  /** A 200 event stream, written one event at a time. */
  | {
      readonly kind: 'sse'
      readonly text: string
      readonly headers?: Readonly<Record<string, string>>
      /** Keep the connection open after the text until this settles (or the client leaves). */
      readonly hold?: Promise<unknown>
      /** Destroy the socket after the text instead of ending the response cleanly. */
      readonly destroy?: boolean
    }
  /** A JSON body with a status (an API error, say). */
  | {
      readonly kind: 'json'
      readonly status: number
      readonly body: unknown
      readonly headers?: Readonly<Record<string, string>>
    }
  /**
   * A 200 event stream that sends `text`, then stalls: only `keepAlive` (an SSE comment, or a
   * ping event) every `everyMs`, until the client leaves.
   */
  | {
      readonly kind: 'stall'
      readonly text?: string
      readonly keepAlive: string
      readonly everyMs: number
    }
  /** A 200 event stream that sends `text`, then `event` again and again until the client leaves. */
  | { readonly kind: 'endless'; readonly text?: string; readonly event: string }
  /** Reads the request and never answers (no status line) until the client leaves. */
  | { readonly kind: 'silent' }

/** One request as the server received it. */
export type RecordedRequest = {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The parsed JSON body. */
  readonly body: Record<string, unknown>
  /** Settles when the client closes the connection before the reply ended. */
  readonly clientGone: Promise<void>
}

export interface WireServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly requests: RecordedRequest[]
  /** Queues replies for the next requests, in order. */
  reply(...replies: Reply[]): void
  close(): Promise<void>
}

/** A fixture from test/fixtures/providers/, as text. */
export function fixture(path: string): string {
  return readFileSync(new URL(`../../fixtures/providers/${path}`, import.meta.url), 'utf8')
}

/** A fixture from test/fixtures/providers/, parsed as JSON. */
export function jsonFixture(path: string): unknown {
  return JSON.parse(fixture(path))
}

/** Starts a server on an ephemeral loopback port. */
export async function startWireServer(): Promise<WireServer> {
  const queue: Reply[] = []
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()

  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    let settleGone: () => void = () => {}
    const clientGone = new Promise<void>((resolve) => {
      settleGone = resolve
    })
    response.on('close', () => {
      if (!response.writableFinished) settleGone()
    })
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
        clientGone,
      })
      const reply = queue.shift()
      if (!reply) {
        send(response, 500, { error: { message: 'wire-server: no reply queued for this request' } })
        return
      }
      void answer(response, reply)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => {
      queue.push(...replies)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers })
  response.end(JSON.stringify(body))
}

async function answer(response: ServerResponse, reply: Reply): Promise<void> {
  if (reply.kind === 'json') return send(response, reply.status, reply.body, reply.headers)
  const gone = new Promise<void>((resolve) => response.on('close', resolve))
  if (reply.kind === 'silent') return gone
  if (reply.kind === 'stall' || reply.kind === 'endless') return repeat(response, reply, gone)
  response.writeHead(200, { ...SSE_HEADERS, ...reply.headers })
  // One write per event, as a server flushes them while the model generates.
  for (const event of reply.text.split(/(?<=\n\n)/)) {
    if (response.destroyed) return
    await new Promise<void>((resolve) => response.write(event, () => resolve()))
  }
  if (reply.hold) {
    await Promise.race([reply.hold, new Promise((resolve) => response.on('close', resolve))])
  }
  if (reply.destroy) response.destroy()
  else if (!response.destroyed) response.end()
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
}

/** Writes `text`, then a repeated piece until the client leaves (`gone`). */
async function repeat(
  response: ServerResponse,
  reply: Extract<Reply, { kind: 'stall' | 'endless' }>,
  gone: Promise<void>,
): Promise<void> {
  let isGone = false
  void gone.then(() => {
    isGone = true
  })
  response.writeHead(200, SSE_HEADERS)
  if (reply.text) response.write(reply.text)
  const piece = reply.kind === 'stall' ? reply.keepAlive : reply.event
  while (!isGone && !response.destroyed) {
    if (reply.kind === 'stall') {
      // The timer is the server's pace, not the test's: the test waits on the client's outcome.
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, reply.everyMs))])
      if (isGone) return
      response.write(piece)
    } else if (!response.write(piece)) {
      // Honour backpressure, so an endless stream is as fast as the client reads, no faster.
      await Promise.race([gone, new Promise((resolve) => response.once('drain', resolve))])
    }
  }
}
