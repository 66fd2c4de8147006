/** Real MCP servers for tests: the published everything and filesystem servers, and a fixture. */
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { onTestFinished } from 'vitest'
import { createMcpManager, type McpManager } from '../../src/mcp/manager.js'
import type { McpServerConfig } from '../../src/mcp/server-config.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
export const EVERYTHING = join(
  root,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
)
export const FILESYSTEM = join(
  root,
  'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
)
export const CHANGING = join(root, 'test/fixtures/mcp/changing-server.mjs')

export async function tempDir(prefix = 'rudder-mcp-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  return dir
}

export function stdioServer(
  name: string,
  script: string,
  args: string[] = [],
  extra: Partial<Extract<McpServerConfig, { transport: 'stdio' }>> = {},
): McpServerConfig {
  return {
    transport: 'stdio',
    name,
    file: 'test',
    command: process.execPath,
    args: [script, ...args],
    ...extra,
  }
}

export type Notices = { server: string; message: string }[]

/** A manager closed after the test, with the notices it gave. */
export async function manager(servers: McpServerConfig[], workspace?: string) {
  const dir = workspace ?? (await tempDir())
  const notices: Notices = []
  const created: McpManager = createMcpManager({
    servers,
    workspace: dir,
    env: process.env,
    logDir: join(dir, '.logs'),
    clientVersion: '0.0.0-test',
    onNotice: (notice) => notices.push(notice),
  })
  onTestFinished(() => created.close())
  return { manager: created, notices, dir }
}
