/**
 * The MCP servers of one session: started eagerly or before the first step, their tools kept
 * current, their failures reported once to the person, resources and prompts on request, and
 * every server closed (in parallel) with the session. A server that fails leaves the session
 * working with the others.
 */
import { join } from 'node:path'
import { messageOf, type UserMessageData } from '../core/index.js'
import type { Tool } from '../tools/tool.js'
import { createMcpConnection, type McpConnection, type McpServerState } from './connection.js'
import { mcpToolName, mcpTools } from './mcp-tools.js'
import type { McpServerConfig } from './server-config.js'

export type McpManagerOptions = {
  readonly servers: readonly McpServerConfig[]
  readonly workspace: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Where the stdio servers' stderr logs go, one file per server. */
  readonly logDir: string
  readonly clientVersion: string
  /** Told of failures a person should know about (never shown to the model). */
  readonly onNotice: (notice: { readonly server: string; readonly message: string }) => void
}

export type McpServerSummary = {
  readonly name: string
  readonly file: string
  readonly transport: McpServerConfig['transport']
  readonly state: McpServerState
  readonly tools: readonly string[]
  readonly logFile?: string
}

export type McpPromptSummary = {
  readonly server: string
  readonly name: string
  readonly description?: string
  readonly arguments: readonly { readonly name: string; readonly required: boolean }[]
}

export interface McpManager {
  /** Every configured server's tools that are known now, as rudder tools. */
  tools(): Tool[]
  /**
   * The approval default of an MCP tool the policy does not name: `allow` for a tool its server
   * marks read-only and not destructive, `ask` for the others, undefined for other tools.
   */
  toolDefault(name: string): 'allow' | 'ask' | undefined
  /** Called when the set of tools changed (a server started, changed its list, or stopped). */
  onToolsChanged(listener: () => void): () => void
  /** Starts the servers whose `startup` is `eager` (or all, with `everything`); never throws. */
  start(options?: { readonly everything?: boolean }): Promise<void>
  summaries(): McpServerSummary[]
  /** A resource as a context whose source names the server (`plugin`, `mcp:<server>`). */
  resourceContext(server: string, uri: string, signal?: AbortSignal): Promise<UserMessageData>
  /** Every prompt the running servers offer (front ends show them as slash commands). */
  prompts(signal?: AbortSignal): Promise<McpPromptSummary[]>
  /**
   * A server prompt filled in with `args`, as a person's message: its messages' text in order.
   * Throws when the server or prompt is unknown or the server refuses.
   */
  promptMessage(
    server: string,
    name: string,
    args: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ): Promise<UserMessageData>
  connection(server: string): McpConnection | undefined
  close(): Promise<void>
}

export function createMcpManager(options: McpManagerOptions): McpManager {
  const connections = new Map<string, McpConnection>()
  const listeners = new Set<() => void>()
  const changed = () => {
    for (const listener of [...listeners]) listener()
  }
  for (const server of options.servers) {
    const connection = createMcpConnection({
      server,
      workspace: options.workspace,
      env: options.env,
      logFile: join(options.logDir, `${server.name}.log`),
      clientVersion: options.clientVersion,
    })
    connection.onToolsChanged(changed)
    connection.onFailure((message) => {
      options.onNotice({ server: server.name, message })
      changed()
    })
    connections.set(server.name, connection)
  }

  async function startOne(connection: McpConnection): Promise<void> {
    try {
      await connection.start()
      changed()
    } catch (error) {
      options.onNotice({ server: connection.name, message: messageOf(error) })
    }
  }

  return {
    tools() {
      const tools: Tool[] = []
      for (const connection of connections.values())
        if (connection.state.state === 'ready') tools.push(...(mcpTools(connection) as Tool[]))
      return tools
    },
    toolDefault(name) {
      for (const connection of connections.values()) {
        for (const tool of connection.tools) {
          if (mcpToolName(connection.name, tool.name) !== name) continue
          const hints = tool.annotations
          return hints?.readOnlyHint === true && hints.destructiveHint !== true ? 'allow' : 'ask'
        }
      }
      return undefined
    },
    onToolsChanged(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    async start(startOptions = {}) {
      const wanted = [...connections.values()].filter(
        (connection) =>
          connection.state.state === 'stopped' &&
          (startOptions.everything || connection.config.startup === 'eager'),
      )
      await Promise.all(wanted.map(startOne))
    },
    summaries() {
      return [...connections.values()].map((connection) => ({
        name: connection.name,
        file: connection.config.file,
        transport: connection.config.transport,
        state: connection.state,
        tools: connection.tools.map((tool) => tool.name),
        ...(connection.config.transport === 'stdio' ? { logFile: connection.logFile } : {}),
      }))
    },
    async resourceContext(server, uri, signal) {
      const connection = connections.get(server)
      if (!connection)
        throw new Error(
          `there is no MCP server named ${JSON.stringify(server)}; configured: ${[...connections.keys()].join(', ') || 'none'}`,
        )
      await connection.start()
      const result = await connection.readResource(uri, signal)
      const content = result.contents.map((part) =>
        'text' in part && typeof part.text === 'string'
          ? { type: 'text' as const, text: part.text }
          : 'blob' in part && typeof part.blob === 'string' && part.mimeType?.startsWith('image/')
            ? { type: 'image' as const, mediaType: part.mimeType, data: part.blob }
            : { type: 'text' as const, text: `[resource ${part.uri}, binary, not shown]` },
      )
      return {
        content,
        source: { kind: 'plugin', name: `mcp:${server}` },
        meta: { uri },
      }
    },
    async prompts(signal) {
      const all: McpPromptSummary[] = []
      for (const connection of connections.values()) {
        if (connection.state.state !== 'ready') continue
        try {
          for (const prompt of await connection.listPrompts(signal))
            all.push({
              server: connection.name,
              name: prompt.name,
              ...(prompt.description === undefined ? {} : { description: prompt.description }),
              arguments: (prompt.arguments ?? []).map((argument) => ({
                name: argument.name,
                required: argument.required === true,
              })),
            })
        } catch (error) {
          options.onNotice({
            server: connection.name,
            message: `listing prompts failed: ${messageOf(error)}`,
          })
        }
      }
      return all
    },
    async promptMessage(server, name, args, signal) {
      const connection = connections.get(server)
      if (!connection) throw new Error(`there is no MCP server named ${JSON.stringify(server)}`)
      await connection.start()
      const prompt = await connection.getPrompt(name, { ...args }, signal)
      const content = prompt.messages.map((message) =>
        message.content.type === 'text'
          ? { type: 'text' as const, text: message.content.text }
          : message.content.type === 'image'
            ? {
                type: 'image' as const,
                mediaType: message.content.mimeType,
                data: message.content.data,
              }
            : {
                type: 'text' as const,
                text: `[${message.content.type} content from the prompt ${name}, not shown]`,
              },
      )
      return { content, source: { kind: 'user' } }
    },
    connection: (server) => connections.get(server),
    async close() {
      await Promise.all([...connections.values()].map((connection) => connection.close()))
    },
  }
}
