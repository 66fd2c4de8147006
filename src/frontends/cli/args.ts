/**
 * Parses the `rudder` command line into a command. Usage mistakes throw `UsageError`
 * (exit code 2) with the fix.
 */
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'

/** A command-line mistake: exit code 2, with a message saying how to fix it. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** What the headless run prints on stdout (`--output-format`, `--json` = `stream-json`). */
export type OutputFormat = 'text' | 'json' | 'stream-json'

export const OUTPUT_FORMATS: readonly OutputFormat[] = ['text', 'json', 'stream-json']

/** The approval presets of `--approval` (the terminal UI's and ACP's modes). */
export type ApprovalPreset = 'ask' | 'auto-edit' | 'yolo'

export type RunOptions = {
  readonly provider?: string
  readonly model?: string
  readonly store?: string
  readonly resume?: string
  readonly continueLatest: boolean
  readonly cwd: string
  readonly yes: boolean
  readonly outputFormat: OutputFormat
  /** No progress, refusals or notices on stderr; errors still go there. */
  readonly quiet: boolean
  /** `-p` / `--print`: headless even with no task (never the interactive front end). */
  readonly print: boolean
  readonly system?: string
  readonly appendSystem?: string
  readonly maxSteps?: number
  readonly timeoutMs?: number
  readonly idleTimeoutMs?: number
  readonly maxRetries?: number
  /** `--allow` entries: tool names and bash patterns approved for this run. */
  readonly allow: readonly string[]
  readonly approval?: ApprovalPreset
  /** `--output-last-message <file>`: the final assistant text is also written there. */
  readonly outputLastMessage?: string
  /** `-c key=value` overrides, as one config object (checked like a config file). */
  readonly configOverrides: Readonly<Record<string, unknown>>
}

/**
 * Where the task comes from: the argument, stdin (`-`, or no argument and stdin not a
 * terminal), or both (an argument with piped input). Decided in main.ts (`runHeadless`).
 */
export type TaskArgument =
  | { readonly kind: 'none' }
  | { readonly kind: 'stdin' }
  | { readonly kind: 'text'; readonly text: string }

export type SessionsCommand =
  | {
      readonly action: 'list'
      readonly cwd?: string
      readonly limit: number
      readonly json: boolean
    }
  | {
      readonly action: 'show'
      readonly id: string
      readonly json: boolean
      /** Keep printing events as they are written, until Ctrl-C. */
      readonly follow: boolean
    }
  | { readonly action: 'export'; readonly id: string; readonly out?: string }
  | { readonly action: 'import'; readonly file: string; readonly asNew: boolean }
  | { readonly action: 'fork'; readonly id: string; readonly atSeq?: number }
  | { readonly action: 'repair'; readonly id: string }
  | { readonly action: 'delete'; readonly ids: readonly string[] }
  | {
      readonly action: 'prune'
      /** Sessions last written before now minus this many milliseconds. */
      readonly olderThanMs: number
      /** Only this directory's sessions, unless --all. */
      readonly cwd?: string
      readonly dryRun: boolean
    }
  | { readonly action: 'help' }

/** `rudder trust [dir]`, `rudder trust --list`, `rudder untrust [dir]`. */
export type TrustCommand =
  | { readonly action: 'trust' | 'untrust'; readonly directory: string }
  | { readonly action: 'list' }

/** `rudder acp`: an ACP agent on stdin/stdout (src/frontends/acp). */
export type AcpCommandOptions = {
  readonly provider?: string
  readonly model?: string
  readonly store?: string
  readonly system?: string
  readonly maxSteps?: number
}

export type CliCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'acp'; readonly options: AcpCommandOptions }
  | { readonly kind: 'trust'; readonly command: TrustCommand }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly task: TaskArgument; readonly options: RunOptions }
  | { readonly kind: 'models'; readonly cwd: string; readonly json: boolean }
  | { readonly kind: 'sessions'; readonly store?: string; readonly command: SessionsCommand }
  | { readonly kind: 'mcp'; readonly cwd: string; readonly json: boolean }
  /**
   * The terminal UI (src/frontends/tui): `rudder interactive`, `rudder -i ["task"]`, or no task
   * with stdin a terminal (`isExplicit` false: decided in main.ts's runHeadless).
   */
  | {
      readonly kind: 'interactive'
      readonly task?: string
      readonly options: RunOptions
      readonly isExplicit: boolean
    }
  /** `rudder serve …`: the web host parses its own arguments (src/frontends/web). */
  | { readonly kind: 'serve'; readonly args: readonly string[] }

const RUN_OPTIONS = {
  provider: { type: 'string' },
  model: { type: 'string', short: 'm' },
  store: { type: 'string' },
  resume: { type: 'string', short: 'r' },
  continue: { type: 'boolean', default: false },
  cwd: { type: 'string' },
  yes: { type: 'boolean', short: 'y', default: false },
  json: { type: 'boolean', default: false },
  print: { type: 'boolean', short: 'p', default: false },
  'output-format': { type: 'string' },
  'output-last-message': { type: 'string' },
  quiet: { type: 'boolean', short: 'q', default: false },
  system: { type: 'string' },
  'append-system-prompt': { type: 'string' },
  'max-steps': { type: 'string' },
  timeout: { type: 'string' },
  'idle-timeout': { type: 'string' },
  retries: { type: 'string' },
  allow: { type: 'string', multiple: true },
  approval: { type: 'string' },
  config: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
  interactive: { type: 'boolean', short: 'i', default: false },
} as const

/** Flags taking a number: `--retries -1` is a wrong number, not a missing one. */
const NUMBER_FLAGS = ['--max-steps', '--retries', '--timeout', '--idle-timeout']

/** The subcommands; anything else is a task (quoted, since a task has spaces). */
const SUBCOMMANDS = new Set([
  'sessions',
  'mcp',
  'trust',
  'untrust',
  'acp',
  'serve',
  'models',
  'interactive',
])

export function parseCommandLine(args: readonly string[], cwd: string): CliCommand {
  if (args[0] === 'sessions') return parseSessions(args.slice(1), cwd)
  if (args[0] === 'mcp') return parseMcp(args.slice(1), cwd)
  if (args[0] === 'trust' || args[0] === 'untrust') return parseTrust(args[0], args.slice(1), cwd)
  if (args[0] === 'acp') return parseAcp(args.slice(1))
  if (args[0] === 'serve') return { kind: 'serve', args: args.slice(1) }
  if (args[0] === 'models') return parseModels(args.slice(1), cwd)
  if (args[0] === 'interactive') return parseRun(args.slice(1), cwd, true)
  return parseRun(args, cwd, false)
}

function parseRun(args: readonly string[], cwd: string, isInteractiveCommand: boolean): CliCommand {
  const { values, positionals } = parse(
    NUMBER_FLAGS.reduce(joinNegativeValues, normalizeRunArgs(args)),
    RUN_OPTIONS,
    true,
  )
  if (values.version) return { kind: 'version' }
  if (values.help) return { kind: 'help' }
  if (positionals.length > 1)
    throw new UsageError(
      SUBCOMMANDS.has(positionals[0]!)
        ? `options of the task go after the subcommand: rudder ${positionals[0]} …`
        : `expected one task, got ${positionals.length} arguments; quote the task: rudder "${positionals.join(' ')}"`,
    )
  // `--resume` with no id (see normalizeRunArgs) means the newest session here: --continue.
  const resume = values.resume === '' ? undefined : values.resume
  const continueLatest = values.continue || values.resume === ''
  if (resume !== undefined && values.continue)
    throw new UsageError('use either --resume <id> or --continue, not both')
  const task = positionals[0]
  if (task !== undefined && task !== '-' && task.trim() === '')
    throw new UsageError(
      'the task is empty; say what rudder should do, e.g. rudder "fix the failing test"',
    )
  const maxSteps =
    values['max-steps'] === undefined
      ? undefined
      : wholeNumber(values['max-steps'], '--max-steps', 1)
  const outputFormat = outputFormatOf(values['output-format'], values.json)
  const approval = values.approval === undefined ? undefined : approvalPreset(values.approval)
  const retries =
    values.retries === undefined ? undefined : wholeNumber(values.retries, '--retries', 0)
  const isInteractive = isInteractiveCommand || values.interactive
  if (isInteractive && (values.json || values.print || values['output-format'] !== undefined))
    throw new UsageError(
      'output formats and -p are for one task headless: rudder -p "task"; the terminal UI is rudder -i',
    )
  if (isInteractive && task === '-')
    throw new UsageError('the terminal UI reads its input from you; pass the task as an argument')
  const options: RunOptions = {
    continueLatest,
    cwd: existingDirectory(resolve(cwd, values.cwd ?? '.'), values.cwd),
    yes: values.yes,
    outputFormat,
    quiet: values.quiet,
    print: values.print,
    allow: values.allow ?? [],
    configOverrides: configOverrides(values.config ?? []),
    ...optional('provider', values.provider),
    ...optional('model', values.model),
    ...optional('store', values.store),
    ...optional('resume', resume),
    ...optional('system', values.system),
    ...optional('appendSystem', values['append-system-prompt']),
    ...optional('maxSteps', maxSteps),
    ...optional('timeoutMs', duration(values.timeout, '--timeout')),
    ...optional('idleTimeoutMs', duration(values['idle-timeout'], '--idle-timeout')),
    ...optional('maxRetries', retries),
    ...optional('approval', approval),
    ...optional(
      'outputLastMessage',
      values['output-last-message'] === undefined
        ? undefined
        : resolve(cwd, values['output-last-message']),
    ),
  }
  if (isInteractive)
    return { kind: 'interactive', isExplicit: true, ...optional('task', task), options }
  return {
    kind: 'run',
    task:
      task === undefined
        ? { kind: 'none' }
        : task === '-'
          ? { kind: 'stdin' }
          : { kind: 'text', text: task },
    options,
  }
}

/**
 * Two short options are overloaded, as in the peers: `-c key=value` overrides a config key
 * (Codex) while a bare `-c` continues the newest session (Claude Code); `--resume` / `-r`
 * without an id (last, before another option, or before a task with spaces) is `--continue`.
 * Rewritten here into the unambiguous long forms (docs/decisions/0132-overloaded-short-options.md).
 */
function normalizeRunArgs(args: readonly string[]): string[] {
  const out: string[] = []
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    const next = args[index + 1]
    if (arg === '--') {
      out.push(...args.slice(index))
      break
    }
    if (arg === '-c') {
      // Anything shaped like `word=value` is an override (checked, with a message, later).
      if (next !== undefined && /^[^\s=-][^\s=]*=/.test(next)) {
        out.push(`--config=${next}`)
        index++
      } else out.push('--continue')
      continue
    }
    if (arg === '--resume' || arg === '-r') {
      const isId = next !== undefined && !next.startsWith('-') && !/\s/.test(next)
      if (isId) {
        out.push(`--resume=${next}`)
        index++
      } else out.push('--resume=')
      continue
    }
    out.push(arg)
  }
  return out
}

/** `key=value` where key is a dotted config path: `model=…`, `retry.maxRetries=2`. */
const CONFIG_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*=/s

/**
 * `-c key=value` pairs as one config object. A value that parses as JSON is that value
 * (`2`, `true`, `["a"]`, `{"x":1}`); anything else is a string (`model=openai/gpt-4.1`).
 */
export function configOverrides(assignments: readonly string[]): Record<string, unknown> {
  const root: Record<string, unknown> = {}
  for (const assignment of assignments) {
    if (!CONFIG_ASSIGNMENT.test(assignment))
      throw new UsageError(
        `-c takes key=value with a dotted config key, e.g. -c model=openai/gpt-4.1 or -c retry.maxRetries=2; got ${JSON.stringify(assignment)}`,
      )
    const equals = assignment.indexOf('=')
    const path = assignment.slice(0, equals).split('.')
    const text = assignment.slice(equals + 1)
    let value: unknown = text
    try {
      value = JSON.parse(text)
    } catch {
      // Not JSON: the text itself.
    }
    let target = root
    for (const key of path.slice(0, -1)) {
      const existing = target[key]
      if (typeof existing !== 'object' || existing === null || Array.isArray(existing))
        target[key] = {}
      target = target[key] as Record<string, unknown>
    }
    target[path.at(-1)!] = value
  }
  return root
}

function outputFormatOf(value: string | undefined, json: boolean): OutputFormat {
  if (value === undefined) return json ? 'stream-json' : 'text'
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value))
    throw new UsageError(
      `--output-format takes ${OUTPUT_FORMATS.join(', ')}; got ${JSON.stringify(value)}`,
    )
  if (json && value !== 'stream-json')
    throw new UsageError(
      `--json is --output-format stream-json; it cannot be combined with --output-format ${value}`,
    )
  return value as OutputFormat
}

function approvalPreset(value: string): ApprovalPreset {
  if (value === 'ask' || value === 'auto-edit' || value === 'yolo') return value
  throw new UsageError(
    `--approval takes ask (refuse what would ask), auto-edit (file edits run) or yolo (everything the policy does not deny runs); got ${JSON.stringify(value)}`,
  )
}

/** `90`, `90s`, `1500ms`, `2m`: a duration in milliseconds (bare numbers are seconds). */
export function duration(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim())
  const unit = match?.[2] ?? 's'
  const ms = match ? Number(match[1]) * (unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000) : NaN
  if (!Number.isFinite(ms) || ms < 1 || ms > 2_147_483_647)
    throw new UsageError(
      `${flag} takes a duration such as 30s, 1500ms or 2m (a bare number is seconds); got ${JSON.stringify(value)}`,
    )
  return Math.round(ms)
}

/** `--cwd` must name a directory that exists: otherwise every tool would fail later. */
function existingDirectory(path: string, given: string | undefined): string {
  let problem: string | undefined
  try {
    if (!statSync(path).isDirectory()) problem = 'is not a directory'
  } catch (error) {
    const code = (error as { code?: string }).code
    problem =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'cannot be read (permission denied)'
          : `cannot be used (${(error as Error).message})`
  }
  if (problem === undefined) return path
  throw new UsageError(
    given === undefined
      ? `the current directory ${path} ${problem}`
      : `--cwd ${JSON.stringify(given)}: ${path} ${problem}; pass an existing directory`,
  )
}

function parseModels(args: readonly string[], cwd: string): CliCommand {
  const { values } = parse(
    args,
    { json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
    false,
  )
  if (values.help) return { kind: 'help' }
  return { kind: 'models', cwd, json: values.json }
}

const TRUST_USAGE = 'rudder trust [dir] | rudder trust --list | rudder untrust [dir]'

function parseTrust(verb: 'trust' | 'untrust', args: readonly string[], cwd: string): CliCommand {
  const { values, positionals } = parse(
    args,
    verb === 'trust' ? { list: { type: 'boolean', default: false } } : {},
    true,
  )
  if (positionals.length > 1)
    throw new UsageError(`rudder ${verb} takes one directory at most; usage: ${TRUST_USAGE}`)
  if ((values as { list?: boolean }).list === true) {
    if (positionals.length > 0)
      throw new UsageError(`rudder trust --list takes no directory; usage: ${TRUST_USAGE}`)
    return { kind: 'trust', command: { action: 'list' } }
  }
  return {
    kind: 'trust',
    command: { action: verb, directory: resolve(cwd, positionals[0] ?? '.') },
  }
}

function parseAcp(args: readonly string[]): CliCommand {
  const { values } = parse(
    args,
    {
      provider: { type: 'string' },
      model: { type: 'string', short: 'm' },
      store: { type: 'string' },
      system: { type: 'string' },
      'max-steps': { type: 'string' },
    },
    false,
  )
  const maxSteps =
    values['max-steps'] === undefined
      ? undefined
      : wholeNumber(values['max-steps'], '--max-steps', 1)
  return {
    kind: 'acp',
    options: {
      ...optional('provider', values.provider),
      ...optional('model', values.model),
      ...optional('store', values.store),
      ...optional('system', values.system),
      ...optional('maxSteps', maxSteps),
    },
  }
}

export const SESSIONS_USAGE = `Usage:
  rudder sessions list [--all] [--limit N] [--json]
  rudder sessions show <id> [--json] [--follow]
  rudder sessions export <id> [--out file.jsonl]
  rudder sessions import <file.jsonl> [--as-new]
  rudder sessions fork <id> [--at seq]
  rudder sessions repair <id>
  rudder sessions delete <id>…
  rudder sessions prune --older-than 30d [--all] [--dry-run]
Every command takes --store url; an id may be any unambiguous prefix of one.`

function parseSessions(args: readonly string[], cwd: string): CliCommand {
  const { values, positionals } = parse(
    // `--at -1` would read as a flag; take it as the value so the message says what is wrong.
    ['--at', '--limit'].reduce(joinNegativeValues, [...args]),
    {
      store: { type: 'string' },
      cwd: { type: 'string' },
      all: { type: 'boolean', default: false },
      limit: { type: 'string' },
      out: { type: 'string', short: 'o' },
      at: { type: 'string' },
      json: { type: 'boolean', default: false },
      'as-new': { type: 'boolean', default: false },
      'older-than': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      follow: { type: 'boolean', short: 'f', default: false },
    },
    true,
  )
  const [action, target, ...rest] = positionals
  if (values.help || action === 'help' || action === undefined) {
    if (action === undefined && !values.help)
      throw new UsageError(`rudder sessions needs a command.\n${SESSIONS_USAGE}`)
    return { kind: 'sessions', command: { action: 'help' } }
  }
  if (rest.length > 0 && action !== 'delete')
    throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}.\n${SESSIONS_USAGE}`)
  const need = (what: string) => {
    if (target === undefined)
      throw new UsageError(`rudder sessions ${action} needs ${what}.\n${SESSIONS_USAGE}`)
    return target
  }
  const store = values.store === undefined ? {} : { store: values.store }
  const command = ((): SessionsCommand => {
    switch (action) {
      case 'list':
        return {
          action,
          limit: values.limit === undefined ? 20 : wholeNumber(values.limit, '--limit', 1),
          json: values.json,
          ...(values.all ? {} : { cwd: resolve(cwd, values.cwd ?? '.') }),
        }
      case 'show':
        return { action, id: need('a session id'), json: values.json, follow: values.follow }
      case 'export':
        return { action, id: need('a session id'), ...optional('out', values.out) }
      case 'import':
        return { action, file: resolve(cwd, need('a JSONL file')), asNew: values['as-new'] }
      case 'fork':
        return {
          action,
          id: need('a session id'),
          ...optional(
            'atSeq',
            values.at === undefined ? undefined : wholeNumber(values.at, '--at', 0),
          ),
        }
      case 'repair':
        return { action, id: need('a session id') }
      case 'delete':
        return { action, ids: [need('one or more session ids'), ...rest] }
      case 'prune': {
        if (values['older-than'] === undefined)
          throw new UsageError(
            `rudder sessions prune needs --older-than, e.g. --older-than 30d.\n${SESSIONS_USAGE}`,
          )
        if (target !== undefined)
          throw new UsageError(`rudder sessions prune takes no id.\n${SESSIONS_USAGE}`)
        return {
          action,
          olderThanMs: age(values['older-than']),
          dryRun: values['dry-run'],
          ...(values.all ? {} : { cwd: resolve(cwd, values.cwd ?? '.') }),
        }
      }
      default:
        throw new UsageError(
          `unknown sessions command ${JSON.stringify(action)}.\n${SESSIONS_USAGE}`,
        )
    }
  })()
  return { kind: 'sessions', ...store, command }
}

function joinNegativeValues(args: readonly string[], flag: string): string[] {
  const out: string[] = []
  for (let index = 0; index < args.length; index++) {
    const next = args[index + 1]
    if (args[index] === flag && next !== undefined && /^-\d/.test(next)) {
      out.push(`${flag}=${next}`)
      index++
    } else out.push(args[index]!)
  }
  return out
}

/** `30d`, `12h`, `90m`, `2w`: an age in milliseconds. */
function age(value: string): number {
  const match = /^(\d+)(m|h|d|w)$/.exec(value.trim())
  if (!match || Number(match[1]) < 1)
    throw new UsageError(
      `--older-than takes an age such as 30d, 12h, 90m or 2w; got ${JSON.stringify(value)}`,
    )
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 'm']
  return Number(match[1]) * unit
}

function parseMcp(args: readonly string[], cwd: string): CliCommand {
  const { values, positionals } = parse(
    args,
    { cwd: { type: 'string' }, json: { type: 'boolean', default: false } },
    true,
  )
  if (positionals.length !== 1 || positionals[0] !== 'list')
    throw new UsageError(
      `unknown mcp command ${JSON.stringify(positionals.join(' '))}; usage: rudder mcp list [--cwd dir] [--json]`,
    )
  return { kind: 'mcp', cwd: resolve(cwd, values.cwd ?? '.'), json: values.json }
}

type Spec = Parameters<typeof parseArgs>[0] extends infer T
  ? T extends { options?: infer O }
    ? O
    : never
  : never

function parse<O extends Spec>(args: readonly string[], options: O, allowPositionals: boolean) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true })
  } catch (error) {
    throw new UsageError(
      `${(error as Error).message.replace(/\. To specify a positional.*$/s, '').replace(/\.+$/, '')}. Run \`rudder --help\` for usage.`,
    )
  }
}

function wholeNumber(value: string, flag: string, min: number): number {
  const number = Number(value)
  if (!Number.isInteger(number) || number < min)
    throw new UsageError(
      `${flag} takes a whole number of at least ${min}, got ${JSON.stringify(value)}`,
    )
  return number
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
}
