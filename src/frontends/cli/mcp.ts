/** `rudder mcp list`: the MCP servers configured for a directory, their state and tools. */
import { join } from 'node:path'
import { rudderHome } from '../../runtime/config.js'
import { inspectMcpServers } from '../../runtime/mcp-servers.js'
import type { CliIo } from './io.js'

export async function listMcpServers(
  command: { readonly cwd: string; readonly json: boolean },
  io: CliIo,
): Promise<number> {
  const location = { cwd: command.cwd, env: io.env, home: io.home }
  const { servers, ignored } = await inspectMcpServers(location, {
    logDir: join(rudderHome(location), 'logs', 'mcp'),
  })
  if (command.json) {
    io.stdout.write(`${JSON.stringify({ servers, ignored })}\n`)
  } else {
    if (servers.length === 0 && ignored.length === 0)
      io.stdout.write(
        'No MCP servers are configured here. Add them under "mcpServers" in .mcp.json or .rudder/config.json.\n',
      )
    for (const server of servers) {
      const state =
        server.state.state === 'ready'
          ? `ready, ${server.tools.length} tools`
          : server.state.state === 'failed'
            ? `failed: ${server.state.message}`
            : server.state.state
      io.stdout.write(`${server.name} (${server.transport}, from ${server.file}): ${state}\n`)
      for (const tool of server.tools) io.stdout.write(`  ${tool}\n`)
    }
  }
  for (const skipped of ignored)
    io.stderr.write(
      `rudder: ${skipped.file}: not started (${skipped.names.join(', ')}): ${command.cwd} is not trusted. If you trust it, run: rudder trust ${command.cwd}\n`,
    )
  return servers.some((server) => server.state.state === 'failed') ? 1 : 0
}
