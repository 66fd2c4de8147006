/**
 * Whether the user trusts a project directory (docs/spec.md §9.5): project-level settings that
 * can run programs or redirect keys (MCP servers, hooks, base URLs) take effect only there.
 * The user's own config file lists the trusted directories (`trustedDirectories`); a directory
 * is trusted when it or one of its parents is listed.
 */
import { readFileSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import type { ConfigLocation } from './config.js'
import { rudderHome } from './config.js'

export function isDirectoryTrusted(location: ConfigLocation, directory: string): boolean {
  let listed: unknown
  try {
    const text = readFileSync(join(rudderHome(location), 'config.json'), 'utf8')
    listed = (JSON.parse(text) as { trustedDirectories?: unknown }).trustedDirectories
  } catch {
    // No user config (or an unreadable one, reported by loadConfig): nothing is trusted.
    return false
  }
  if (!Array.isArray(listed)) return false
  const target = resolve(directory)
  return listed.some((entry) => {
    if (typeof entry !== 'string') return false
    const path = relative(resolve(entry), target)
    return path === '' || (!path.startsWith(`..${sep}`) && path !== '..' && !path.startsWith(sep))
  })
}
