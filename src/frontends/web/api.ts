/**
 * The HTTP side of the web host (Hono): the token gate, the JSON API of docs/web-api.md and
 * the page's built files. The session stream (WebSocket) is upgraded in web-server.ts.
 *
 * Every answer that is not a success is `{ error: { code, message } }` with a message meant for
 * a person; an unexpected failure is logged on the host with an id and answered with that id,
 * never with a stack trace.
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { type Context, Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { z } from 'zod'
import { type MessageSource, RudderError, type RudderErrorCode } from '../../index.js'
import type { Host } from '../../runtime/host.js'
import {
  approvalBody,
  approvalModeBody,
  cancelBody,
  compactBody,
  continueBody,
  createBody,
  describeIssue,
  forkBody,
  injectBody,
  listQuery,
  messageBody,
  searchQuery,
  toUserMessage,
} from './api-schemas.js'
import type { Guard } from './security.js'
import type { Asset } from './static-assets.js'
import type { InputKind, WebSession } from './web-session.js'
import type { WebSessions } from './web-sessions.js'
import type { DeliveryAnswer, SessionSummary } from './wire.js'

export type ApiOptions = {
  readonly host: Host
  readonly sessions: WebSessions
  /** Set once the server listens (the guard needs the port). */
  readonly guard: () => Guard
  readonly assets: ReadonlyMap<string, Asset>
  readonly bodyLimitBytes: number
  readonly version: string
  /** Where unexpected failures are written, with their id (the host's stderr). */
  readonly log: (line: string) => void
}

/** A refusal the API answers with. */
class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

const STATUS_OF: Partial<Record<RudderErrorCode, ContentfulStatusCode>> = {
  INVALID_INPUT: 400,
  CONFIG: 400,
  TOOL_ARGUMENTS: 400,
  SESSION_NOT_FOUND: 404,
  SESSION_BUSY: 409,
  OPEN_TURN: 409,
  WRONG_STATE: 409,
  DISPOSED: 409,
  LOG_CORRUPT: 422,
  FORMAT_TOO_NEW: 422,
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

export function createApi(options: ApiOptions): Hono {
  const { sessions, host } = options
  const app = new Hono()

  app.use('*', async (c, next) => {
    await next()
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value)
  })

  // 1. The gate: own Host, same Origin, then the token (the token URL trades it for a cookie).
  app.use('*', async (c, next) => {
    const guard = options.guard()
    const refusal = guard.checkRequest((name) => c.req.header(name))
    const queryToken = c.req.query('token')
    if (queryToken !== undefined && (refusal === undefined || refusal.code === 'UNAUTHORIZED')) {
      if (!guard.isToken(queryToken))
        throw new ApiError(401, 'UNAUTHORIZED', 'the token in the URL is not this server’s token')
      const url = new URL(c.req.url)
      url.searchParams.delete('token')
      c.header('set-cookie', guard.cookie())
      c.header('cache-control', 'no-store')
      return c.redirect(`${url.pathname}${url.search}`, 303)
    }
    if (refusal) throw new ApiError(refusal.status, refusal.code, refusal.message)
    return next()
  })

  app.use(
    '/api/*',
    bodyLimit({
      maxSize: options.bodyLimitBytes,
      onError: () => {
        throw new ApiError(
          413,
          'BODY_TOO_LARGE',
          `the request body is larger than ${options.bodyLimitBytes} bytes; send less (large files belong in the workspace, not in a message)`,
        )
      },
    }),
  )
  app.use('/api/*', async (c, next) => {
    c.header('cache-control', 'no-store')
    await next()
  })

  // 2. The host and its sessions.
  app.get('/api/host', (c) =>
    c.json({
      name: 'rudder',
      version: options.version,
      cwd: host.cwd,
      hostName: hostname(),
      pid: process.pid,
      store: redactedStoreUrl(host.store.url),
    }),
  )
  app.get('/api/sessions', async (c) => {
    const query = parse(listQuery, c.req.query())
    const rows = await host.store.list({
      limit: query.limit ?? 50,
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      ...(query.cwd === undefined ? {} : { cwd: query.cwd }),
    })
    const summaries: SessionSummary[] = rows.map(({ cursor: _cursor, ...row }) => {
      const web = sessions.live(row.id)
      return {
        ...row,
        live: web !== undefined,
        ...(web ? { status: web.runtime.agent.status } : {}),
      }
    })
    const last = rows.at(-1)
    return c.json({ sessions: summaries, ...(last ? { cursor: last.cursor } : {}) })
  })
  app.get('/api/search', async (c) => {
    const query = parse(searchQuery, c.req.query())
    const hits = await host.store.search(query.q, { limit: query.limit ?? 50 })
    return c.json({ hits })
  })
  app.post('/api/sessions', async (c) => {
    const body = await readBody(c, createBody)
    const web = await sessions.create({
      ...(body.title === undefined ? {} : { title: body.title }),
      ...(body.cwd === undefined ? {} : { cwd: body.cwd }),
    })
    return c.json(describeLive(web), 201)
  })
  app.get('/api/sessions/:id', async (c) => {
    const id = c.req.param('id')
    const web = sessions.live(id)
    if (web) return c.json(describeLive(web))
    const stat = await host.store.stat(id)
    return c.json({
      header: stat.header,
      mode: { kind: 'follow' },
      lastSeq: stat.nextSeq - 1,
      ...(stat.openTurn === undefined ? {} : { openTurn: stat.openTurn }),
    })
  })
  app.post('/api/sessions/:id/open', async (c) => {
    await readBody(c, continueBody)
    return c.json(describeLive(await sessions.open(c.req.param('id'))))
  })
  app.post('/api/sessions/:id/fork', async (c) => {
    const body = await readBody(c, forkBody)
    return c.json(describeLive(await sessions.fork(c.req.param('id'), body.atSeq)), 201)
  })
  app.post('/api/sessions/:id/close', async (c) => {
    await readBody(c, continueBody)
    return c.json({ closed: await sessions.close(c.req.param('id')) })
  })

  // 3. Inputs: each answers with its delivery id (202), or with the result (200) given ?wait=true.
  const input = (kind: InputKind) => async (c: Context) => {
    const body = kind === 'context' ? await readBody(c, injectBody) : await readBody(c, messageBody)
    const web = await sessions.ensureLive(c.req.param('id')!)
    const data = toUserMessage(
      body,
      'source' in body ? (body.source as MessageSource) : { kind: 'user' },
    )
    return answerDelivery(c, web, web.give(kind, data))
  }
  app.post('/api/sessions/:id/send', input('prompt'))
  app.post('/api/sessions/:id/steer', input('steering'))
  app.post('/api/sessions/:id/inject', input('context'))
  app.post('/api/sessions/:id/continue', async (c) => {
    await readBody(c, continueBody)
    const web = await sessions.ensureLive(c.req.param('id'))
    return answerDelivery(c, web, web.continueTurn())
  })
  app.post('/api/sessions/:id/compact', async (c) => {
    const body = await readBody(c, compactBody)
    const web = await sessions.ensureLive(c.req.param('id'))
    return answerDelivery(c, web, web.compact(body.instructions))
  })
  app.post('/api/sessions/:id/cancel', async (c) => {
    const body = await readBody(c, cancelBody)
    const web = liveOr404(sessions, c.req.param('id'))
    const discarded = web.cancel(body.keepQueue ?? false)
    return c.json({ discarded })
  })
  app.get('/api/sessions/:id/deliveries/:deliveryId', async (c) => {
    const web = liveOr404(sessions, c.req.param('id'))
    const deliveryId = c.req.param('deliveryId')
    const found =
      c.req.query('wait') === 'true'
        ? await web.settled(deliveryId, c.req.raw.signal)
        : web.delivery(deliveryId)
    if (!found)
      throw new ApiError(
        404,
        'DELIVERY_NOT_FOUND',
        `no delivery ${deliveryId} was made through this host for session ${web.id}`,
      )
    return c.json(found)
  })
  app.post('/api/sessions/:id/approvals/:approvalId', async (c) => {
    const body = await readBody(c, approvalBody)
    const web = liveOr404(sessions, c.req.param('id'))
    const approvalId = c.req.param('approvalId')
    const answered = web.answerApproval(
      approvalId,
      body.answer === 'allow'
        ? { kind: 'allow', ...(body.always === undefined ? {} : { always: body.always }) }
        : {
            kind: 'deny',
            ...(body.always === undefined ? {} : { always: body.always }),
            ...(body.reason === undefined ? {} : { reason: body.reason }),
          },
    )
    if (!answered)
      throw new ApiError(
        404,
        'APPROVAL_NOT_FOUND',
        `approval ${approvalId} is not waiting (already answered, or its turn was canceled)`,
      )
    return c.json({ answered: true })
  })
  app.post('/api/sessions/:id/approval-mode', async (c) => {
    const body = await readBody(c, approvalModeBody)
    const web = await sessions.ensureLive(c.req.param('id'))
    web.runtime.approval.setMode(body.mode)
    return c.json({ mode: web.runtime.approval.mode })
  })
  app.get('/api/sessions/:id/export', async (c) => {
    const id = c.req.param('id')
    const iterator = host.store.exportJsonl(id)[Symbol.asyncIterator]()
    // The first chunk is read before answering, so a missing session is a 404, not a cut stream.
    const first = await iterator.next()
    const encoder = new TextEncoder()
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        if (!first.done) controller.enqueue(encoder.encode(first.value))
        else controller.close()
      },
      async pull(controller) {
        const next = await iterator.next()
        if (next.done) controller.close()
        else controller.enqueue(encoder.encode(next.value))
      },
      async cancel() {
        await iterator.return?.()
      },
    })
    c.header('content-type', 'application/x-ndjson; charset=utf-8')
    c.header('content-disposition', `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.jsonl"`)
    return c.body(stream)
  })
  app.get('/api/sessions/:id/stream', () => {
    throw new ApiError(
      426,
      'UPGRADE_REQUIRED',
      'the session stream is a WebSocket: connect with ws:// to this URL',
    )
  })
  app.all('/api/*', (c) => {
    throw new ApiError(
      404,
      'NOT_FOUND',
      `no API endpoint ${c.req.method} ${c.req.path}; see docs/web-api.md`,
    )
  })

  // 4. The page: only the files the build produced (looked up, never joined onto a directory).
  app.get('*', (c) => {
    const asset = options.assets.get(c.req.path)
    if (!asset) throw new ApiError(404, 'NOT_FOUND', `no such page: ${c.req.path}`)
    c.header('content-type', asset.type)
    c.header('cache-control', asset.isHashed ? 'public, max-age=31536000, immutable' : 'no-cache')
    return c.body(new Uint8Array(asset.body))
  })

  app.onError((error, c) => {
    if (error instanceof ApiError) return c.json(errorBody(error.code, error.message), error.status)
    if (error instanceof RudderError)
      return c.json(errorBody(error.code, error.message), STATUS_OF[error.code] ?? 500)
    const reference = randomUUID().slice(0, 8)
    options.log(
      `rudder serve: unexpected failure ${reference} on ${c.req.method} ${c.req.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    )
    return c.json(
      errorBody(
        'INTERNAL',
        `the host failed unexpectedly (reference ${reference}); its terminal shows the details`,
      ),
      500,
    )
  })
  return app
}

function errorBody(code: string, message: string) {
  return { error: { code, message } }
}

function describeLive(web: WebSession) {
  const { session, agent } = web.runtime
  return {
    header: session.header,
    mode: { kind: 'live' },
    status: agent.status,
    label: web.runtime.label,
    approvalMode: web.runtime.approval.mode,
    lastSeq: session.nextSeq - 1,
  }
}

function liveOr404(sessions: WebSessions, id: string): WebSession {
  const web = sessions.live(id)
  if (!web)
    throw new ApiError(
      404,
      'NOT_RUNNING',
      `session ${id} is not running on this host; open it first (POST /api/sessions/${id}/open)`,
    )
  return web
}

async function answerDelivery(c: Context, web: WebSession, answer: DeliveryAnswer) {
  if (c.req.query('wait') !== 'true') return c.json(answer, 202)
  return c.json((await web.settled(answer.id, c.req.raw.signal)) ?? answer, 200)
}

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new ApiError(400, 'INVALID_REQUEST', describeIssue(parsed.error))
  return parsed.data
}

async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text()
  if (text.trim() === '') return parse(schema, {})
  if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
    throw new ApiError(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'send the body as JSON with Content-Type: application/json',
    )
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ApiError(
      400,
      'INVALID_JSON',
      `the body is not valid JSON: ${(error as Error).message}`,
    )
  }
  return parse(schema, value)
}

/** A store URL without credentials (a PostgreSQL URL may carry a password). */
function redactedStoreUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}
