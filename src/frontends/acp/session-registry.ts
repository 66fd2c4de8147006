/**
 * The sessions one connection serves: `session/new`, `load`, `resume`, `fork`, `close` and
 * `list` over the host's store. Each open session is an `AcpSession`; many run at once.
 */
import { statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { SessionListing } from '../../index.js'
import type { Host, SessionChoice } from '../../runtime/host.js'
import { type AcpSession, type ClientFeatures, createAcpSession } from './acp-session.js'
import type { Arrivals } from './arrivals.js'
import { invalidParams, sessionNotFound } from './errors.js'
import { mcpServersFromAcp } from './mcp-servers.js'
import { permissionAsker } from './permissions.js'
import { configOptions, modeState } from './session-config.js'

/** Rows per `session/list` page. */
export const LIST_PAGE_SIZE = 50

export type RegistryOptions = {
  readonly host: Host
  readonly client: acp.AgentContext
  /** What the client said it can show; known once `initialize` was answered. */
  readonly features: () => ClientFeatures
  readonly arrivals: Arrivals
  readonly log: (message: string) => void
}

/** What `session/new`, `load`, `resume` and `fork` answer besides the id. */
type SessionState = {
  modes: acp.SessionModeState
  configOptions: acp.SessionConfigOption[]
  _meta?: { rudder: Record<string, unknown> }
}

export interface SessionRegistry {
  /** The open session with this id; -32002 when it is not open on this connection. */
  get(sessionId: string): AcpSession
  create(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse>
  load(params: acp.LoadSessionRequest): Promise<acp.LoadSessionResponse>
  resume(params: acp.ResumeSessionRequest): Promise<acp.ResumeSessionResponse>
  fork(params: acp.ForkSessionRequest): Promise<acp.ForkSessionResponse>
  close(sessionId: string): Promise<void>
  list(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse>
  /** Closes every session (the connection ended). */
  closeAll(): Promise<void>
}

export function createSessionRegistry(options: RegistryOptions): SessionRegistry {
  const { host, log } = options
  const sessions = new Map<string, AcpSession>()
  const opening = new Map<string, Promise<AcpSession>>()

  const stopNotices = host.notices.subscribe((notice) => {
    const session = notice.sessionId === undefined ? undefined : sessions.get(notice.sessionId)
    if (session) session.notice(notice)
    else log(`${notice.source}: ${notice.message}`)
  })

  async function open(
    cwd: string,
    choice: SessionChoice,
    mcpServers: readonly acp.McpServer[] | undefined,
  ): Promise<{ session: AcpSession; state: SessionState }> {
    checkWorkspace(cwd)
    const fromEditor = mcpServersFromAcp(mcpServers)
    const runtime = await host.openSession({ cwd, choice, mcpServers: fromEditor.servers })
    const id = runtime.session.header.id
    runtime.approval.setAsker(permissionAsker({ client: options.client, sessionId: id, cwd }))
    const session = createAcpSession({
      runtime,
      client: options.client,
      features: options.features(),
      arrivals: options.arrivals,
      log: (message) => log(`session ${id}: ${message}`),
    })
    sessions.set(id, session)
    // Notices published while the session was being opened.
    for (const notice of host.notices.all) if (notice.sessionId === id) session.notice(notice)
    if (fromEditor.unsupported.length > 0)
      host.notices.publish({
        level: 'warning',
        source: 'mcp',
        sessionId: id,
        message: `MCP servers over ACP are not supported, so ${fromEditor.unsupported.join(', ')} were not started; give them as stdio or HTTP servers`,
      })
    return {
      session,
      state: stateOf(session),
    }
  }

  /** An open session, or the one being opened by a concurrent request, or a newly opened one. */
  async function openExisting(
    sessionId: string,
    cwd: string,
    mcpServers: readonly acp.McpServer[] | undefined,
  ): Promise<{ session: AcpSession; state: SessionState; isNew: boolean }> {
    const present =
      sessions.get(sessionId) ?? (await opening.get(sessionId)?.catch(() => undefined))
    if (present) return { session: present, state: stateOf(present), isNew: false }
    const pending = open(cwd, { kind: 'resume', id: sessionId }, mcpServers)
    opening.set(
      sessionId,
      pending.then((opened) => opened.session),
    )
    try {
      return { ...(await pending), isNew: true }
    } finally {
      opening.delete(sessionId)
    }
  }

  return {
    get(sessionId) {
      const session = sessions.get(sessionId)
      if (!session) throw sessionNotFound(sessionId)
      return session
    },
    async create(params) {
      const { session, state } = await open(params.cwd, { kind: 'new' }, params.mcpServers)
      // Updates wait until the response that names the session is on the wire.
      setImmediate(() => session.announce())
      return { sessionId: session.id, ...state }
    },
    async load(params) {
      const { session, state } = await openExisting(params.sessionId, params.cwd, params.mcpServers)
      await session.replay()
      return state
    },
    async resume(params) {
      const { session, state } = await openExisting(params.sessionId, params.cwd, params.mcpServers)
      setImmediate(() => session.announce())
      return state
    },
    async fork(params) {
      // The child copies what is durable: flush the source if it runs here.
      await sessions.get(params.sessionId)?.runtime.session.flush()
      const { session, state } = await open(
        params.cwd,
        { kind: 'fork', id: params.sessionId },
        params.mcpServers,
      )
      setImmediate(() => session.announce())
      return { sessionId: session.id, ...state }
    },
    async close(sessionId) {
      const session = sessions.get(sessionId)
      if (!session) throw sessionNotFound(sessionId)
      sessions.delete(sessionId)
      await session.close()
    },
    async list(params) {
      const cwd = params.cwd ?? undefined
      if (cwd !== undefined && !isAbsolute(cwd))
        throw invalidParams(`cwd must be an absolute path, got ${JSON.stringify(cwd)}`)
      const rows = await host.store.list({
        limit: LIST_PAGE_SIZE + 1,
        ...(cwd === undefined ? {} : { cwd }),
        ...(params.cursor == null ? {} : { cursor: params.cursor }),
      })
      const page = rows.slice(0, LIST_PAGE_SIZE)
      const last = page.at(-1)
      return {
        sessions: page.map((row) => sessionInfo(row, host.cwd)),
        ...(rows.length > LIST_PAGE_SIZE && last ? { nextCursor: last.cursor } : {}),
      }
    },
    async closeAll() {
      stopNotices()
      const open = [...sessions.values()]
      sessions.clear()
      await Promise.allSettled(open.map((session) => session.close()))
    },
  }
}

function stateOf(session: AcpSession): SessionState {
  return { modes: modeState(session.runtime), configOptions: configOptions(session.runtime) }
}

function sessionInfo(row: SessionListing, fallbackCwd: string): acp.SessionInfo {
  return {
    sessionId: row.id,
    cwd: row.cwd ?? fallbackCwd,
    updatedAt: new Date(row.updatedAt).toISOString(),
    ...(row.title === undefined ? {} : { title: row.title }),
    _meta: {
      rudder: {
        createdAt: new Date(row.createdAt).toISOString(),
        eventCount: row.eventCount,
        ...(row.cwd === undefined ? { isCwdUnknown: true } : {}),
        ...(row.parent === undefined ? {} : { parent: row.parent }),
      },
    },
  }
}

/** ACP's schema takes any string; a session's workspace must be an absolute directory. */
function checkWorkspace(cwd: string): void {
  if (!isAbsolute(cwd))
    throw invalidParams(
      `cwd must be an absolute path, got ${JSON.stringify(cwd)}; send the workspace root, e.g. "/home/me/project"`,
      { cwd },
    )
  let isDirectory = false
  try {
    isDirectory = statSync(cwd).isDirectory()
  } catch {
    // Missing or unreadable: reported just below, naming the path.
  }
  if (!isDirectory)
    throw invalidParams(`cwd ${JSON.stringify(cwd)} is not a directory that exists`, { cwd })
}
