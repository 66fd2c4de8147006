/**
 * Finds the command hooks that apply to one session's working directory (docs/hooks.md,
 * "Discovery"): Claude Code's settings files, Codex's `hooks.json` and `config.toml`, and the
 * `hooks` key of rudder's own config files (Claude Code's shape). User-level files always load;
 * project-level files load only when the caller says the directory is trusted, and otherwise are
 * reported once. Hooks from every file run (they merge, none replaces another), user level first.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { ConfigError, messageOf } from '../core/index.js'
import { type Dialect, type HookSpec, parseHooks } from './hook-config.js'

export type HookDiscoveryOptions = {
  /** The session's working directory: project files are looked up from here. */
  readonly cwd: string
  readonly home: string
  /** Read for `CODEX_HOME` (default `<home>/.codex`). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Whether project-level hooks may load (the user trusted `cwd`). */
  readonly isProjectTrusted: boolean
  /** rudder's user and project config files, whose `hooks` key uses Claude Code's shape. */
  readonly rudderUserFile?: string
  readonly rudderProjectFile?: string
}

export type DiscoveredHooks = {
  /** In config order: user level (Claude Code, rudder, Codex), then project level likewise. */
  readonly specs: readonly HookSpec[]
  /** Sentences for the person, each naming its file: ignored events and fields, untrusted files. */
  readonly notices: readonly string[]
  /** The files whose hooks were loaded. */
  readonly files: readonly string[]
}

type Source = {
  readonly file: string
  readonly dialect: Dialect
  readonly format: 'claude-settings' | 'rudder-config' | 'codex-json' | 'codex-toml'
  readonly level: 'user' | 'project'
}

/** Throws `ConfigError` naming the file and key of a broken config or an invalid matcher. */
export function discoverHooks(options: HookDiscoveryOptions): DiscoveredHooks {
  const cwd = resolve(options.cwd)
  const codexHome = options.env.CODEX_HOME?.trim()
    ? resolve(cwd, options.env.CODEX_HOME)
    : join(options.home, '.codex')
  const repo = repositoryRoot(cwd)
  const sources: Source[] = [
    user(join(options.home, '.claude', 'settings.json'), 'claude', 'claude-settings'),
    ...(options.rudderUserFile ? [user(options.rudderUserFile, 'claude', 'rudder-config')] : []),
    user(join(codexHome, 'hooks.json'), 'codex', 'codex-json'),
    user(join(codexHome, 'config.toml'), 'codex', 'codex-toml'),
    project(join(cwd, '.claude', 'settings.json'), 'claude', 'claude-settings'),
    project(join(cwd, '.claude', 'settings.local.json'), 'claude', 'claude-settings'),
    ...(options.rudderProjectFile
      ? [project(options.rudderProjectFile, 'claude', 'rudder-config')]
      : []),
    project(join(repo, '.codex', 'hooks.json'), 'codex', 'codex-json'),
    project(join(repo, '.codex', 'config.toml'), 'codex', 'codex-toml'),
  ]
  const seen = new Set<string>()
  const specs: HookSpec[] = []
  const notices: string[] = []
  const files: string[] = []
  const disabled: Record<Dialect, { value: boolean; file: string } | undefined> = {
    claude: undefined,
    codex: undefined,
  }
  for (const source of sources) {
    // The same file reached twice (cwd = home) is read once, at its user level.
    if (seen.has(source.file)) continue
    seen.add(source.file)
    const text = readIfExists(source.file)
    if (text === undefined) continue
    if (source.level === 'project' && !options.isProjectTrusted) {
      if (mentionsHooks(text, source.format))
        notices.push(
          `${source.file}: its hooks were not loaded because ${cwd} is not a trusted directory. Run \`rudder trust\` there to load them.`,
        )
      continue
    }
    const document = parseDocument(text, source)
    const switchOff = hooksSwitchedOff(document, source)
    if (switchOff !== undefined) disabled[source.dialect] = { value: switchOff, file: source.file }
    const value = document.hooks
    if (value === undefined) continue
    const parsed = parseHooks({ value, file: source.file, dialect: source.dialect })
    specs.push(...parsed.specs)
    notices.push(...parsed.ignored.map((sentence) => `${source.file}: ${sentence}`))
    files.push(source.file)
  }
  const kept = specs.filter((spec) => disabled[spec.dialect]?.value !== true)
  for (const dialect of ['claude', 'codex'] as const) {
    const off = disabled[dialect]
    if (off?.value && specs.some((spec) => spec.dialect === dialect))
      notices.push(
        `${off.file}: ${dialect === 'claude' ? '"disableAllHooks": true' : '[features] hooks = false'} turns off the ${dialect === 'claude' ? 'Claude Code' : 'Codex'} hooks found; none of them run.`,
      )
  }
  return { specs: kept, notices, files }
}

const user = (file: string, dialect: Dialect, format: Source['format']): Source => ({
  file,
  dialect,
  format,
  level: 'user',
})
const project = (file: string, dialect: Dialect, format: Source['format']): Source => ({
  file,
  dialect,
  format,
  level: 'project',
})

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw new ConfigError(
      `${file}: cannot be read (${messageOf(error)}). Fix its permissions, or remove it.`,
      { cause: error },
    )
  }
}

/**
 * smol-toml, required when a `config.toml` is found: discovery is synchronous, and most runs
 * have no such file, so they skip its nine ES modules (bench B10; the package's CommonJS
 * build is one file).
 */
function parseToml(text: string): unknown {
  const toml = createRequire(import.meta.url)('smol-toml') as typeof import('smol-toml')
  return toml.parse(text)
}

function parseDocument(text: string, source: Source): Record<string, unknown> {
  let value: unknown
  if (source.format === 'codex-toml') {
    try {
      value = parseToml(text)
    } catch (error) {
      throw new ConfigError(
        `${source.file}: not valid TOML (${messageOf(error).split('\n')[0]}). Fix the syntax.`,
        { cause: error },
      )
    }
  } else {
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new ConfigError(
        `${source.file}: not valid JSON (${messageOf(error)}). Fix the syntax; the file must hold one JSON object such as {"hooks": {}}.`,
        { cause: error },
      )
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(`${source.file}: must hold one object at the top level.`)
  return value as Record<string, unknown>
}

/** `disableAllHooks` (Claude Code) or `[features] hooks` / `codex_hooks` (Codex), if the file sets it. */
function hooksSwitchedOff(document: Record<string, unknown>, source: Source): boolean | undefined {
  if (source.format === 'claude-settings') {
    const value = document.disableAllHooks
    if (value === undefined) return undefined
    if (typeof value !== 'boolean')
      throw new ConfigError(`${source.file}: key "disableAllHooks" must be true or false.`)
    return value
  }
  if (source.format === 'codex-toml') {
    const features = document.features as Record<string, unknown> | undefined
    const value = features?.hooks ?? features?.codex_hooks
    return typeof value === 'boolean' ? !value : undefined
  }
  return undefined
}

/** Whether an untrusted file would have contributed hooks (a rough look, for the notice only). */
function mentionsHooks(text: string, format: Source['format']): boolean {
  if (format === 'codex-toml') return /^\s*\[{1,2}\s*hooks\b/m.test(text)
  return /"hooks"\s*:/.test(text)
}

/** The nearest ancestor of `cwd` (itself included) holding `.git`, else `cwd` itself. */
function repositoryRoot(cwd: string): string {
  for (let directory = cwd; ; directory = dirname(directory)) {
    if (existsSync(join(directory, '.git'))) return directory
    if (dirname(directory) === directory) return cwd
  }
}
