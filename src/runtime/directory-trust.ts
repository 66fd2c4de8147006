/**
 * Whether the user trusted a directory, so its project-level hooks may load (docs/spec.md §9.5).
 *
 * PLACEHOLDER until the trust model (`rudder trust`, trusted directories recorded in user
 * config) lands: this reads a `trustedDirectories` array from the user's own config file, if it
 * has one, and never from the project file (a project must not be able to trust itself). The
 * lead replaces this function with the trust model's at merge; it is the only caller-facing
 * decision the hook bridges depend on.
 */
import { readFileSync } from 'node:fs'
import { isAbsolute, relative, resolve } from 'node:path'
import type { LoadedConfig } from './config.js'

/** True when `cwd` is, or is inside, a directory listed in the user config's `trustedDirectories`. */
export function isDirectoryTrusted(config: LoadedConfig, cwd: string): boolean {
  let listed: unknown
  try {
    listed = (JSON.parse(readFileSync(config.userFile, 'utf8')) as { trustedDirectories?: unknown })
      .trustedDirectories
  } catch {
    // No user config (or an unreadable one, which loadConfig has already reported): nothing is trusted.
    return false
  }
  if (!Array.isArray(listed)) return false
  const target = resolve(cwd)
  return listed.some((entry) => {
    if (typeof entry !== 'string' || !isAbsolute(entry)) return false
    const inside = relative(resolve(entry), target)
    return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))
  })
}
