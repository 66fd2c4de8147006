/**
 * What a project's `.rudder/config.json` may do before the user trusts its directory
 * (docs/spec.md §9.5, docs/decisions/0044): it may add restrictions, nothing else that changes
 * who gets the user's keys or what runs unasked. The rest is set aside and reported once.
 */
import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { isRegexPattern } from '../tools/approval-policy.js'
import type { ApprovalPolicy, BashRule } from '../tools/index.js'
import { type RudderConfig, TRUSTED_ONLY_KEYS, USER_ONLY_KEYS } from './config-schema.js'

/** Something about the configuration the user should hear once (front ends print it). */
export type ConfigNotice = {
  readonly kind: 'project-config-ignored'
  /** The project file. */
  readonly file: string
  /** The directory to trust for the settings to apply. */
  readonly directory: string
  /** The keys set aside, as paths (`providers.deepseek.baseURL`, `approval.tools.edit (allow)`). */
  readonly keys: readonly string[]
  /** The command that trusts the directory (absent when it is trusted already). */
  readonly command?: string
  /** One sentence naming the file, the keys and the command. */
  readonly message: string
}

/** A project layer split into what applies and what waits for trust. */
export type UntrustedLayer = {
  /** Merged like any layer (never holds `approval`). */
  readonly kept: RudderConfig
  /** The project's approval rules that only tighten: deny and ask, no `/regex/` patterns. */
  readonly restrictions: ApprovalPolicy | undefined
  /** What was set aside. */
  readonly ignored: readonly string[]
}

/**
 * Splits an untrusted project's config. Trusted-only keys (provider endpoints and keys, store,
 * hooks, MCP servers) and user-only keys are dropped; `approval` becomes restrictions: every
 * `allow` is dropped (a project may not loosen), and so are `/regex/` bash patterns (a
 * repository's regex could be built to backtrack on the model's commands).
 */
export function splitUntrusted(layer: RudderConfig): UntrustedLayer {
  const ignored: string[] = []
  const kept = dropKeys(layer as Record<string, unknown>, '', ignored) as RudderConfig
  const approval = (kept as { approval?: ApprovalPolicy }).approval
  delete (kept as { approval?: unknown }).approval
  return { kept, restrictions: approval && tighteningOnly(approval, ignored), ignored }
}

/** Whether `directory` (resolved to its real path) is one of `trusted`. */
export function isTrustedDirectory(
  trusted: readonly string[] | undefined,
  directory: string,
): boolean {
  if (trusted === undefined || trusted.length === 0) return false
  const real = realOrResolved(directory)
  return trusted.some((entry) => realOrResolved(entry) === real)
}

/**
 * The notice for what a project file tried and did not get; undefined when it got everything.
 * In a trusted directory only user-only keys can be set aside.
 */
export function ignoredNotice(
  file: string,
  directory: string,
  ignored: readonly string[],
  isTrusted: boolean,
): ConfigNotice | undefined {
  if (ignored.length === 0) return undefined
  const real = realOrResolved(directory)
  if (isTrusted) {
    return {
      kind: 'project-config-ignored',
      file,
      directory: real,
      keys: ignored,
      message: `ignored ${ignored.join(', ')} in ${file}: only your own config file may set it.`,
    }
  }
  const command = `rudder trust ${shellQuote(real)}`
  return {
    kind: 'project-config-ignored',
    file,
    directory: real,
    keys: ignored,
    command,
    message: `ignored settings in ${file} that only a trusted project may set: ${ignored.join(', ')}. If you trust this project, run: ${command}`,
  }
}

/** The real path of a directory, or the path resolved when it does not exist. */
export function realOrResolved(directory: string): string {
  try {
    return realpathSync(directory)
  } catch {
    return resolve(directory)
  }
}

function dropKeys(
  value: Record<string, unknown>,
  prefix: string,
  ignored: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    const path = prefix === '' ? key : `${prefix}.${key}`
    if (matchesAny(TRUSTED_ONLY_KEYS, path) || matchesAny(USER_ONLY_KEYS, path)) {
      ignored.push(path)
      continue
    }
    out[key] =
      key !== 'approval' && prefix !== 'approval' && isPlainObject(child)
        ? dropKeys(child, path, ignored)
        : child
  }
  return out
}

function tighteningOnly(policy: ApprovalPolicy, ignored: string[]): ApprovalPolicy | undefined {
  const tools: Record<string, 'ask' | 'deny'> = {}
  const bash: BashRule[] = []
  if (policy.default === 'allow') ignored.push('approval.default (allow)')
  for (const [tool, action] of Object.entries(policy.tools ?? {})) {
    if (action === 'allow') ignored.push(`approval.tools.${tool} (allow)`)
    else tools[tool] = action
  }
  ;(policy.bash ?? []).forEach((rule, index) => {
    const where = `approval.bash[${index}] ${JSON.stringify(rule.pattern)}`
    if (rule.action === 'allow') ignored.push(`${where} (allow)`)
    else if (isRegexPattern(rule.pattern)) ignored.push(`${where} (a regular expression)`)
    else bash.push(rule)
  })
  const out: ApprovalPolicy = {
    ...(policy.default === undefined || policy.default === 'allow'
      ? {}
      : { default: policy.default }),
    ...(Object.keys(tools).length === 0 ? {} : { tools }),
    ...(bash.length === 0 ? {} : { bash }),
  }
  return Object.keys(out).length === 0 ? undefined : out
}

/** Whether `path` (`providers.lab.baseURL`) matches one of the patterns (`providers.*.baseURL`). */
function matchesAny(patterns: readonly string[], path: string): boolean {
  const parts = path.split('.')
  return patterns.some((pattern) => {
    const expected = pattern.split('.')
    return (
      expected.length === parts.length &&
      expected.every((part, index) => part === '*' || part === parts[index])
    )
  })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Quotes a path for a POSIX shell when it needs it. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`
}
