/**
 * Loading rudder's configuration: the user file (`~/.rudder/config.json`, or
 * `$RUDDER_HOME/config.json`), then the project file (`.rudder/config.json` in the working
 * directory), the project file overriding key by key. Everything is read from the arguments
 * (environment, home, working directory), never from process globals, so tests use temp dirs.
 *
 * Every problem is a `ConfigError` that names the file, the key and the fix.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { z } from 'zod'
import { ConfigError, messageOf } from '../core/index.js'
import { configSchema, knownKeysAt, type RudderConfig } from './config-schema.js'

export type { ProviderConfig, RudderConfig } from './config-schema.js'

/** The environment, as `process.env` has it. */
export type Environment = Readonly<Record<string, string | undefined>>

/** Where rudder looks; pass `process.env`, `os.homedir()` and `process.cwd()` from the CLI. */
export type ConfigLocation = {
  readonly env: Environment
  /** The user's home directory. */
  readonly home: string
  /** The project directory. */
  readonly cwd: string
}

/** The merged configuration and where each value came from. */
export type LoadedConfig = {
  readonly config: RudderConfig
  /** The user-level file (read if it exists). */
  readonly userFile: string
  /** The project-level file (read if it exists). */
  readonly projectFile: string
  /** The files that existed and were read, user first. */
  readonly filesRead: readonly string[]
  /** The file that set a key (`model`, `providers.deepseek.apiKeyEnv`), or undefined. */
  sourceOf(key: string): string | undefined
}

/** rudder's user directory: `$RUDDER_HOME` when set, else `~/.rudder`. */
export function rudderHome(location: Pick<ConfigLocation, 'env' | 'home' | 'cwd'>): string {
  const override = location.env.RUDDER_HOME
  if (override !== undefined && override.trim() !== '') return resolve(location.cwd, override)
  return join(location.home, '.rudder')
}

/**
 * Reads and merges the config files. A missing file is no configuration; an unreadable file,
 * malformed JSON or a value the schema rejects throws `ConfigError` naming the file and key.
 */
export function loadConfig(location: ConfigLocation): LoadedConfig {
  const userFile = join(rudderHome(location), 'config.json')
  const projectFile = resolve(location.cwd, '.rudder', 'config.json')
  const layers: { file: string; config: RudderConfig }[] = []
  for (const file of userFile === projectFile ? [userFile] : [userFile, projectFile]) {
    const text = readIfExists(file)
    if (text !== undefined) layers.push({ file, config: parseConfig(text, file) })
  }
  const sources = new Map<string, string>()
  let merged: Record<string, unknown> = {}
  for (const layer of layers) merged = mergeInto(merged, layer.config, layer.file, sources, '')
  return {
    config: merged as RudderConfig,
    userFile,
    projectFile,
    filesRead: layers.map((layer) => layer.file),
    sourceOf: (key) => sources.get(key),
  }
}

/** Parses one config file's text. Throws `ConfigError` naming `file`, each bad key and the fix. */
export function parseConfig(text: string, file: string): RudderConfig {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(
      `${file}: not valid JSON (${describeJsonError(error, text)}). Fix the syntax; the file must hold one JSON object such as {"model": "deepseek/deepseek-chat"}.`,
      { cause: error },
    )
  }
  const parsed = configSchema.safeParse(json)
  if (parsed.success) return parsed.data
  const problems = parsed.error.issues.map(describeIssue)
  throw new ConfigError(
    `${file}: invalid configuration:\n${problems.map((problem) => `- ${problem}`).join('\n')}`,
    { cause: parsed.error },
  )
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined
    throw new ConfigError(
      `${file}: cannot be read (${messageOf(error)}). Fix its permissions, or remove it to use no configuration from there.`,
      { cause: error },
    )
  }
}

/** JSON.parse names a character position; people look for a line and column. */
function describeJsonError(error: unknown, text: string): string {
  const message = messageOf(error)
  const position = /position (\d+)/.exec(message)
  if (!position) return message
  const before = text.slice(0, Number(position[1]))
  const line = before.split('\n').length
  const column = before.length - before.lastIndexOf('\n')
  return `${message}; line ${line}, column ${column}`
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const at = keyPath(issue.path)
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(issue.path)
    const where = at === '' ? 'at the top level' : `in ${at}`
    return issue.keys
      .map(
        (key) =>
          `unknown key "${key}" ${where}${known ? ` (known keys: ${known.join(', ')})` : ''}; remove it or fix its spelling`,
      )
      .join('\n- ')
  }
  if (issue.code === 'invalid_key')
    return `key "${at}": ${issue.issues[0]?.message ?? issue.message}`
  return `${at === '' ? 'the file' : `key "${at}"`}: ${issue.message}`
}

function keyPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.')
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Merges `layer` over `base`: objects key by key, anything else (strings, numbers, arrays)
 * replaced whole. Records which file set each key, objects included.
 */
function mergeInto(
  base: Record<string, unknown>,
  layer: Record<string, unknown>,
  file: string,
  sources: Map<string, string>,
  prefix: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue
    const path = prefix === '' ? key : `${prefix}.${key}`
    sources.set(path, file)
    const existing = out[key]
    out[key] = isPlainObject(value)
      ? mergeInto(isPlainObject(existing) ? existing : {}, value, file, sources, path)
      : value
  }
  return out
}
