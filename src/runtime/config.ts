/**
 * Loading rudder's configuration: the user file (`~/.rudder/config.json`, or
 * `$RUDDER_HOME/config.json`), then the project file (the nearest `.rudder/config.json` from
 * the working directory up to the repository root), the project file overriding key by key,
 * then a run's command-line overrides (`RUDDER_CONFIG_OVERRIDES`). The user file is trusted;
 * the project file applies in full only in a directory the user trusts (`trustedDirectories`, written by
 * `rudder trust`); otherwise it may only tighten approval, and what it tried beyond that is
 * set aside and reported as a notice (docs/spec.md §9.5). Everything is read from the
 * arguments (environment, home, working directory), never from process globals, so tests use
 * temp dirs.
 *
 * Every problem is a `ConfigError` that names the file, the key and the fix.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { z } from 'zod'
import { ConfigError, messageOf } from '../core/index.js'
import type { ApprovalPolicy } from '../tools/index.js'
import {
  getConfigSchemas,
  knownKeysAt,
  type RudderConfig,
  USER_ONLY_KEYS,
} from './config-schema.js'
import {
  type ConfigNotice,
  ignoredNotice,
  isTrustedDirectory,
  splitUntrusted,
} from './config-trust.js'

export type { ProviderConfig, RudderConfig } from './config-schema.js'
export type { ConfigNotice } from './config-trust.js'

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
  /**
   * The project-level file (read if it exists): the nearest `.rudder/config.json` from the
   * cwd up to the repository root, else the cwd's.
   */
  readonly projectFile: string
  /** The directory holding the project's `.rudder/`: what `rudder trust` must name. */
  readonly projectDir: string
  /** The files that existed and were read, user first. */
  readonly filesRead: readonly string[]
  /** The file that set a key (`model`, `providers.deepseek.apiKeyEnv`), or undefined. */
  sourceOf(key: string): string | undefined
  /** Whether the project file applies in full (its directory is trusted, or there is none). */
  readonly isProjectTrusted: boolean
  /**
   * An untrusted project's approval rules that tighten the user's: apply them as a second
   * policy whose decision counts only when it is stricter. Undefined when trusted or none.
   */
  readonly projectRestrictions?: ApprovalPolicy
  /** What the user should hear once: settings of an untrusted project that were set aside. */
  readonly notices: readonly ConfigNotice[]
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
  const projectDir = findProjectDir(resolve(location.cwd), location.home)
  const projectFile = join(projectDir, '.rudder', 'config.json')
  const layers: { file: string; config: RudderConfig }[] = []
  const userText = readConfigText(userFile)
  const user = userText === undefined ? undefined : parseConfig(userText, userFile)
  if (user !== undefined) layers.push({ file: userFile, config: user })
  const projectText = userFile === projectFile ? undefined : readConfigText(projectFile)
  const notices: ConfigNotice[] = []
  let isProjectTrusted = true
  let projectRestrictions: ApprovalPolicy | undefined
  if (projectText !== undefined) {
    const project = parseConfig(projectText, projectFile)
    isProjectTrusted = isTrustedDirectory(user?.trustedDirectories, projectDir)
    if (isProjectTrusted) {
      const ignored = USER_ONLY_KEYS.filter((key) => key in project)
      for (const key of ignored) delete (project as Record<string, unknown>)[key]
      layers.push({ file: projectFile, config: project })
      const notice = ignoredNotice(projectFile, projectDir, ignored, true)
      if (notice !== undefined) notices.push(notice)
    } else {
      const split = splitUntrusted(project)
      layers.push({ file: projectFile, config: split.kept })
      projectRestrictions = split.restrictions
      const notice = ignoredNotice(projectFile, projectDir, split.ignored, false)
      if (notice !== undefined) notices.push(notice)
    }
  }
  const filesRead = layers.map((layer) => layer.file)
  const overrides = commandLineOverrides(location.env, layers)
  if (overrides !== undefined) layers.push({ file: COMMAND_LINE, config: overrides })
  const sources = new Map<string, string>()
  let merged: Record<string, unknown> = {}
  for (const layer of layers) merged = mergeInto(merged, layer.config, layer.file, sources, '')
  return {
    config: merged as RudderConfig,
    userFile,
    projectFile,
    projectDir,
    filesRead,
    sourceOf: (key) => sources.get(key),
    isProjectTrusted,
    ...(projectRestrictions === undefined ? {} : { projectRestrictions }),
    notices,
  }
}

/**
 * The environment variable through which a front end passes settings given for one run
 * (`rudder -c key=value`, `--allow`): a JSON object checked like a config file and applied
 * last, as the user's own (docs/decisions/0131-command-line-config-overrides.md).
 */
export const CONFIG_OVERRIDES_ENV = 'RUDDER_CONFIG_OVERRIDES'

/** How messages name the overrides' layer. */
const COMMAND_LINE = `the command line (-c, --allow or ${CONFIG_OVERRIDES_ENV})`

/**
 * The command line's layer. Its bash rules go before the files' rules instead of replacing
 * them (arrays otherwise replace whole): `--allow 'bash:npm test*'` adds one rule.
 */
function commandLineOverrides(
  env: Environment,
  layers: readonly { readonly config: RudderConfig }[],
): RudderConfig | undefined {
  const text = env[CONFIG_OVERRIDES_ENV]
  if (text === undefined || text.trim() === '') return undefined
  const overrides = parseConfig(text, COMMAND_LINE)
  const added = overrides.approval?.bash
  if (added === undefined) return overrides
  const earlier = layers.findLast((layer) => layer.config.approval?.bash)?.config.approval?.bash
  return {
    ...overrides,
    approval: { ...overrides.approval, bash: [...added, ...(earlier ?? [])] },
  }
}

/**
 * The directory whose `.rudder/config.json` is the project's: the nearest one holding such a
 * file from `cwd` up to the repository root (a directory with `.git`), never the home
 * directory (its `.rudder` is the user's). Outside a repository, only `cwd` is looked at:
 * a stray file above an unrelated directory must not apply.
 */
export function findProjectDir(cwd: string, home: string): string {
  const visited: string[] = []
  for (let directory = cwd; ; directory = dirname(directory)) {
    if (directory !== resolve(home) && existsSync(join(directory, '.rudder', 'config.json')))
      visited.push(directory)
    if (existsSync(join(directory, '.git'))) return visited[0] ?? cwd
    if (dirname(directory) === directory) return cwd
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
  const parsed = getConfigSchemas().configSchema.safeParse(json)
  if (parsed.success) return parsed.data
  const problems = parsed.error.issues.map(describeIssue)
  throw new ConfigError(
    `${file}: invalid configuration:\n${problems.map((problem) => `- ${problem}`).join('\n')}`,
    { cause: parsed.error },
  )
}

/**
 * A config file's text; undefined when there is none. Throws `ConfigError` naming the file
 * when it exists but cannot be read.
 */
export function readConfigText(file: string): string | undefined {
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
