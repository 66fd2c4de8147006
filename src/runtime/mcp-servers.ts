/**
 * Which MCP servers a session uses: `mcpServers` in the user's config (trusted), then, only in
 * a directory the user trusted, `mcpServers` in the project's `.rudder/config.json` and the
 * project's `.mcp.json` (Claude Code's file, used unchanged). A later source replaces an
 * earlier server of the same name. Untrusted project servers are reported, never started.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ConfigError, messageOf } from '../core/index.js'
import { createMcpManager, type McpServerSummary } from '../mcp/manager.js'
import { type McpServerConfig, parseMcpServers } from '../mcp/server-config.js'
import { type ConfigLocation, type LoadedConfig, loadConfig } from './config.js'
import { packageVersion } from './package-version.js'
import { isDirectoryTrusted } from './trust.js'

export type { McpServerConfig } from '../mcp/server-config.js'

export type McpServerChoice = {
  readonly servers: readonly McpServerConfig[]
  /** Files whose servers were ignored because the project is not trusted. */
  readonly ignored: readonly { readonly file: string; readonly names: readonly string[] }[]
}

export function chooseMcpServers(
  location: ConfigLocation,
  config: LoadedConfig,
  isTrusted: boolean,
): McpServerChoice {
  const byName = new Map<string, McpServerConfig>()
  const ignored: { file: string; names: string[] }[] = []
  const layers: { file: string; value: unknown; isProject: boolean }[] = []
  for (const file of config.filesRead) {
    const value = readJson(file).mcpServers
    if (value !== undefined) layers.push({ file, value, isProject: file !== config.userFile })
  }
  const mcpJson = findMcpJson(location.cwd, location.home)
  if (mcpJson) {
    const value = readJson(mcpJson).mcpServers
    if (value !== undefined) layers.push({ file: mcpJson, value, isProject: true })
  }
  for (const layer of layers) {
    if (layer.isProject && !isTrusted) {
      const names =
        typeof layer.value === 'object' && layer.value !== null ? Object.keys(layer.value) : []
      // The project's .rudder/config.json is reported by loadConfig with its other keys.
      if (names.length > 0 && layer.file !== config.projectFile)
        ignored.push({ file: layer.file, names })
      continue
    }
    for (const server of parseMcpServers(layer.value, layer.file, location.env))
      byName.set(server.name, server)
  }
  return { servers: [...byName.values()], ignored }
}

/** The nearest `.mcp.json` from `cwd` up to the repository root (a `.git`), never above home. */
function findMcpJson(cwd: string, home: string): string | undefined {
  for (let directory = cwd; ; directory = dirname(directory)) {
    const candidate = join(directory, '.mcp.json')
    if (existsSync(candidate)) return candidate
    if (
      existsSync(join(directory, '.git')) ||
      directory === home ||
      dirname(directory) === directory
    )
      return undefined
  }
}

function readJson(file: string): { mcpServers?: unknown } {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError(
      `${file}: cannot be read (${messageOf(error)}); fix its permissions or remove it.`,
      { cause: error },
    )
  }
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as { mcpServers?: unknown })
      : {}
  } catch (error) {
    throw new ConfigError(
      `${file}: not valid JSON (${messageOf(error)}); it must hold one object such as { "mcpServers": { … } }.`,
      { cause: error },
    )
  }
}

/**
 * Starts every MCP server configured for `location.cwd`, lists what each offers, and closes
 * them (`rudder mcp list`). Failures are part of the answer, never thrown.
 */
export async function inspectMcpServers(
  location: ConfigLocation,
  options: { readonly logDir: string },
): Promise<{
  readonly servers: readonly McpServerSummary[]
  readonly ignored: McpServerChoice['ignored']
}> {
  const config = loadConfig(location)
  const choice = chooseMcpServers(location, config, isDirectoryTrusted(location, config.projectDir))
  const manager = createMcpManager({
    servers: choice.servers,
    workspace: location.cwd,
    env: location.env,
    logDir: options.logDir,
    clientVersion: packageVersion(),
    onNotice: () => {
      // Failures show in each server's state.
    },
  })
  try {
    await manager.start({ everything: true })
    return { servers: manager.summaries(), ignored: choice.ignored }
  } finally {
    await manager.close()
  }
}
