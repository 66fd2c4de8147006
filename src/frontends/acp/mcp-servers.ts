/**
 * The MCP servers an editor sends with `session/new` / `load` / `resume`, as rudder's server
 * entries: stdio servers with their arguments and environment, HTTP and SSE servers with
 * their headers. The editor is the person's own tool, so its servers are trusted like the
 * user's config (docs/decisions/0094-acp-mcp-servers.md).
 */
import type * as acp from '@agentclientprotocol/sdk/unstable'
import type { McpServerConfig } from '../../runtime/mcp-servers.js'

const SAFE_NAME = /[^a-zA-Z0-9_-]/g

/** The servers rudder can start, and the names of those it cannot (MCP over ACP). */
export function mcpServersFromAcp(servers: readonly acp.McpServer[] | undefined): {
  readonly servers: McpServerConfig[]
  readonly unsupported: string[]
} {
  const unsupported: string[] = []
  const supported = (servers ?? []).flatMap((server): McpServerConfig[] => {
    if (!('command' in server) && !('url' in server)) {
      unsupported.push(server.name)
      return []
    }
    // Names become part of tool names (`mcp__<name>__<tool>`), so they must be provider-safe.
    const name = server.name.replace(SAFE_NAME, '_').slice(0, 64) || 'server'
    const file = 'the editor (ACP session/new)'
    if ('command' in server)
      return [
        {
          transport: 'stdio',
          name,
          file,
          command: server.command,
          args: [...server.args],
          env: Object.fromEntries(server.env.map((variable) => [variable.name, variable.value])),
        },
      ]
    return [
      {
        transport: server.type === 'sse' ? 'sse' : 'http',
        name,
        file,
        url: server.url,
        headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])),
      },
    ]
  })
  return { servers: supported, unsupported }
}
