/**
 * One MCP server for one session: started once (with a deadline), its tools listed and kept
 * current on `tools/list_changed`, calls made with the turn's abort signal (so a cancel sends
 * `notifications/cancelled`) and a call deadline, and a crash turned into a clear failure. The
 * SDK's `Client` speaks the protocol; this module owns the lifecycle.
 */
import { pathToFileURL } from 'node:url'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type {
  CallToolResult,
  GetPromptResult,
  Tool as McpTool,
  Prompt,
  ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js'
import { messageOf } from '../core/index.js'
import type { McpServerConfig } from './server-config.js'

/** Where a server is in its life. */
export type McpServerState =
  | { readonly state: 'disabled' }
  | { readonly state: 'stopped' }
  | { readonly state: 'starting' }
  | { readonly state: 'ready'; readonly tools: number }
  | { readonly state: 'failed'; readonly message: string }
  | { readonly state: 'closed' }

/** A failure talking to a server, with the message a person and the model should see. */
export class McpServerError extends Error {
  override name = 'McpServerError'
}

export type McpConnectionOptions = {
  readonly server: McpServerConfig
  /** The session's workspace: the stdio server's default cwd and the root announced to it. */
  readonly workspace: string
  /** rudder's environment; a stdio server inherits only its basics (see `inheritedEnv`). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** The stdio server's stderr goes here. */
  readonly logFile: string
  readonly clientVersion: string
}

export interface McpConnection {
  readonly name: string
  readonly config: McpServerConfig
  readonly state: McpServerState
  readonly logFile: string
  /** Starts the server if it is not running (idempotent). Throws `McpServerError`. */
  start(): Promise<void>
  /** The tools from the latest `tools/list`. */
  readonly tools: readonly McpTool[]
  /** Called after the tool list changed (a `tools/list_changed` and a new list). */
  onToolsChanged(listener: () => void): () => void
  /** Called when the server stops on its own (crash, exit). */
  onFailure(listener: (message: string) => void): () => void
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      readonly signal: AbortSignal
      readonly onProgress?: (progress: ProgressInfo) => void
    },
  ): Promise<CallToolResult>
  readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult>
  listPrompts(signal?: AbortSignal): Promise<readonly Prompt[]>
  getPrompt(
    name: string,
    args: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<GetPromptResult>
  close(): Promise<void>
}

export type ProgressInfo = {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

const DEFAULT_START_TIMEOUT_MS = 30_000
const DEFAULT_CALL_TIMEOUT_MS = 600_000

export function createMcpConnection(options: McpConnectionOptions): McpConnection {
  const { server } = options
  let state: McpServerState =
    server.enabled === false ? { state: 'disabled' } : { state: 'stopped' }
  let client: Client | undefined
  let transport: Transport | undefined
  let starting: Promise<void> | undefined
  let tools: readonly McpTool[] = []
  let isClosing = false
  const toolListeners = new Set<() => void>()
  const failureListeners = new Set<(message: string) => void>()

  const describeServer = () =>
    server.transport === 'stdio'
      ? `${server.command}${server.args?.length ? ` ${server.args.join(' ')}` : ''}`
      : server.url

  async function connect(): Promise<void> {
    const [{ Client: ClientClass }, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ])
    const created = new ClientClass(
      { name: 'rudder', version: options.clientVersion },
      { capabilities: { roots: { listChanged: false } } },
    )
    created.setRequestHandler(types.ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(options.workspace).href, name: 'workspace' }],
    }))
    created.setNotificationHandler(types.ToolListChangedNotificationSchema, () => {
      void refreshTools()
    })
    created.onclose = () => {
      if (isClosing || state.state === 'closed') return
      const message = `the MCP server ${server.name} stopped (${describeServer()})${server.transport === 'stdio' ? `; its log is ${options.logFile}` : ''}`
      state = { state: 'failed', message }
      client = undefined
      for (const listener of [...failureListeners]) listener(message)
    }
    transport = await createTransport()
    client = created
    const deadline = server.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS
    await created.connect(transport, { timeout: deadline })
    tools = await listAllTools(created, deadline)
  }

  async function createTransport(): Promise<Transport> {
    if (server.transport === 'stdio') {
      // Loaded with the first server, like the SDK: a run without MCP servers never loads it.
      const { ProcessGroupStdioTransport } = await import('./stdio-transport.js')
      return new ProcessGroupStdioTransport({
        command: server.command,
        args: server.args ?? [],
        env: { ...inheritedEnv(options.env), ...server.env },
        cwd: server.cwd ?? options.workspace,
        logFile: options.logFile,
      })
    }
    const requestInit =
      server.headers === undefined ? {} : { requestInit: { headers: server.headers } }
    if (server.transport === 'sse') {
      const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js')
      return new SSEClientTransport(new URL(server.url), requestInit)
    }
    const { StreamableHTTPClientTransport } = await import(
      '@modelcontextprotocol/sdk/client/streamableHttp.js'
    )
    return new StreamableHTTPClientTransport(new URL(server.url), requestInit)
  }

  async function refreshTools(): Promise<void> {
    const current = client
    if (!current) return
    try {
      tools = await listAllTools(current, server.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS)
      state = { state: 'ready', tools: tools.length }
      for (const listener of [...toolListeners]) listener()
    } catch (error) {
      // The old list stays in use; a server that cannot list its tools will fail its calls.
      for (const listener of [...failureListeners])
        listener(
          `the MCP server ${server.name} changed its tools but listing them failed: ${messageOf(error)}`,
        )
    }
  }

  const ready = (): Client => {
    if (client && state.state === 'ready') return client
    throw new McpServerError(
      state.state === 'failed'
        ? state.message
        : `the MCP server ${server.name} is not running (${state.state})`,
    )
  }

  return {
    name: server.name,
    config: server,
    logFile: options.logFile,
    get state() {
      return state
    },
    get tools() {
      return tools
    },
    start() {
      if (state.state === 'disabled') return Promise.resolve()
      if (state.state === 'ready') return Promise.resolve()
      if (starting) return starting
      state = { state: 'starting' }
      starting = connect().then(
        () => {
          state = { state: 'ready', tools: tools.length }
          starting = undefined
        },
        async (error: unknown) => {
          const message = `the MCP server ${server.name} did not start (${describeServer()}): ${messageOf(error)}${server.transport === 'stdio' ? `; its log is ${options.logFile}` : ''}`
          state = { state: 'failed', message }
          starting = undefined
          isClosing = true
          await transport?.close().catch(() => {
            // Already gone: it failed to start.
          })
          isClosing = false
          client = undefined
          throw new McpServerError(message, { cause: error })
        },
      )
      return starting
    },
    onToolsChanged(listener) {
      toolListeners.add(listener)
      return () => {
        toolListeners.delete(listener)
      }
    },
    onFailure(listener) {
      failureListeners.add(listener)
      return () => {
        failureListeners.delete(listener)
      }
    },
    async callTool(name, args, { signal, onProgress }) {
      const result = await ready().callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: server.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
        ...(onProgress === undefined
          ? {}
          : {
              onprogress: (progress) =>
                onProgress({
                  progress: progress.progress,
                  ...(progress.total === undefined ? {} : { total: progress.total }),
                  ...(progress.message === undefined ? {} : { message: progress.message }),
                }),
            }),
      })
      return result as CallToolResult
    },
    readResource(uri, signal) {
      return ready().readResource({ uri }, signal === undefined ? {} : { signal })
    },
    async listPrompts(signal) {
      const current = ready()
      if (!current.getServerCapabilities()?.prompts) return []
      const prompts: Prompt[] = []
      let cursor: string | undefined
      do {
        const page = await current.listPrompts(
          cursor === undefined ? {} : { cursor },
          signal === undefined ? {} : { signal },
        )
        prompts.push(...page.prompts)
        cursor = page.nextCursor
      } while (cursor !== undefined)
      return prompts
    },
    getPrompt(name, args, signal) {
      return ready().getPrompt({ name, arguments: args }, signal === undefined ? {} : { signal })
    },
    async close() {
      if (state.state === 'closed') return
      isClosing = true
      await starting?.catch(() => {
        // A failed start has nothing left to close.
      })
      state = { state: 'closed' }
      const current = client
      client = undefined
      await (current ? current.close() : transport?.close())?.catch(() => {
        // The server may already be gone; closing is best effort.
      })
    },
  }
}

async function listAllTools(client: Client, timeout: number): Promise<McpTool[]> {
  if (!client.getServerCapabilities()?.tools) return []
  const all: McpTool[] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout })
    all.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return all
}

/**
 * What a stdio server inherits from rudder's environment: what a program needs to run, not the
 * user's keys (as the SDK's own transport does). Anything else goes in the entry's `env`.
 */
const INHERITED = [
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'TERM',
  'USER',
  'LANG',
  'TMPDIR',
  'NODE_EXTRA_CA_CERTS',
]

function inheritedEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const key of INHERITED) {
    const value = env[key]
    if (value !== undefined && !value.startsWith('()')) out[key] = value
  }
  return out
}
