/**
 * The user's list of trusted project directories (`trustedDirectories` in the user config
 * file), for `rudder trust` / `rudder untrust` and front ends that ask once (docs/decisions/0044).
 * The file is rewritten atomically (temporary file + rename), keeping its other settings and
 * its mode (0600 for a new file: it may hold API keys).
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ConfigError, messageOf } from '../core/index.js'
import { type ConfigLocation, parseConfig, readConfigText, rudderHome } from './config.js'
import { isTrustedDirectory, realOrResolved } from './config-trust.js'

/** The outcome of a change to the list. */
export type TrustChange = {
  /** The directory, as its real path. */
  readonly directory: string
  /** The user config file that holds the list. */
  readonly file: string
  /** Whether the list changed (false: it was already trusted, or already not). */
  readonly isChanged: boolean
}

/** The trusted directories, as written in the user config file. */
export function trustedDirectories(location: ConfigLocation): readonly string[] {
  const file = userConfigFile(location)
  const text = readConfigText(file)
  return text === undefined ? [] : (parseConfig(text, file).trustedDirectories ?? [])
}

/**
 * Adds `directory` (resolved to its real path; it must exist) to the trusted list. Throws
 * `ConfigError` when it is not a directory or the user file cannot be read or written.
 */
export function trustDirectory(location: ConfigLocation, directory: string): TrustChange {
  const real = existingDirectory(directory)
  return editList(location, real, (list) => (list.includes(real) ? list : [...list, real]))
}

/** Removes `directory` (and any entry with the same real path) from the trusted list. */
export function untrustDirectory(location: ConfigLocation, directory: string): TrustChange {
  const real = realOrResolved(directory)
  return editList(location, real, (list) =>
    list.filter((entry) => entry !== real && realOrResolved(entry) !== real),
  )
}

function userConfigFile(location: ConfigLocation): string {
  return join(rudderHome(location), 'config.json')
}

function existingDirectory(directory: string): string {
  const real = realOrResolved(directory)
  let isDirectory = false
  try {
    isDirectory = statSync(real).isDirectory()
  } catch {
    // Reported below, with the path.
  }
  if (!isDirectory)
    throw new ConfigError(
      `${directory} is not a directory; give the project directory to trust (the one holding .rudder/config.json).`,
    )
  return real
}

function editList(
  location: ConfigLocation,
  directory: string,
  change: (list: readonly string[]) => readonly string[],
): TrustChange {
  const file = userConfigFile(location)
  const text = readConfigText(file)
  // Validated first: a broken file is reported, never overwritten.
  if (text !== undefined) parseConfig(text, file)
  const raw = text === undefined ? {} : (JSON.parse(text) as Record<string, unknown>)
  const before = (raw.trustedDirectories as string[] | undefined) ?? []
  const after = change(before)
  if (after.length === before.length && after.every((entry, index) => entry === before[index]))
    return { directory, file, isChanged: false }
  const next = { ...raw, trustedDirectories: after }
  if (after.length === 0) delete (next as Record<string, unknown>).trustedDirectories
  writeAtomically(file, `${JSON.stringify(next, null, 2)}\n`)
  return { directory, file, isChanged: true }
}

function writeAtomically(file: string, content: string): void {
  const temporary = join(dirname(file), `.config-${randomBytes(6).toString('hex')}.tmp`)
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    const mode = (() => {
      try {
        return statSync(file).mode & 0o777
      } catch {
        return 0o600
      }
    })()
    writeFileSync(temporary, content, { mode, flag: 'wx' })
    renameSync(temporary, file)
  } catch (error) {
    try {
      unlinkSync(temporary)
    } catch {
      // Not created, or already renamed: nothing to clean up.
    }
    throw new ConfigError(
      `${file}: cannot be written (${messageOf(error)}). Check its permissions, then try again.`,
      { cause: error },
    )
  }
}

/**
 * Whether the user trusts `directory` (its real path is in the user config's
 * `trustedDirectories`): project-level hooks, MCP servers, base URLs and loosened approval
 * apply only there (docs/spec.md §9.5).
 */
export function isDirectoryTrusted(location: ConfigLocation, directory: string): boolean {
  return isTrustedDirectory(trustedDirectories(location), directory)
}
