/**
 * Parses the `rudder` command line into a command. Usage mistakes throw `UsageError`
 * (exit code 2) with the fix.
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'

/** A command-line mistake: exit code 2, with a message saying how to fix it. */
export class UsageError extends Error {
  override name = 'UsageError'
}

export type RunOptions = {
  readonly provider?: string
  readonly model?: string
  readonly store?: string
  readonly resume?: string
  readonly continueLatest: boolean
  readonly cwd: string
  readonly yes: boolean
  readonly json: boolean
  readonly system?: string
  readonly maxSteps?: number
}

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
  | { readonly action: 'import'; readonly file: string }
  | { readonly action: 'fork'; readonly id: string; readonly atSeq?: number }
  | { readonly action: 'repair'; readonly id: string }

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
  | { readonly kind: 'run'; readonly task: string; readonly options: RunOptions }
  | { readonly kind: 'sessions'; readonly store?: string; readonly command: SessionsCommand }
  | { readonly kind: 'mcp'; readonly cwd: string; readonly json: boolean }
  /** `rudder serve …`: the web host parses its own arguments (src/frontends/web). */
  | { readonly kind: 'serve'; readonly args: readonly string[] }

const RUN_OPTIONS = {
  provider: { type: 'string' },
  model: { type: 'string', short: 'm' },
  store: { type: 'string' },
  resume: { type: 'string', short: 'r' },
  continue: { type: 'boolean', short: 'c', default: false },
  cwd: { type: 'string' },
  yes: { type: 'boolean', short: 'y', default: false },
  json: { type: 'boolean', default: false },
  system: { type: 'string' },
  'max-steps': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const

export function parseCommandLine(args: readonly string[], cwd: string): CliCommand {
  if (args[0] === 'sessions') return parseSessions(args.slice(1), cwd)
  if (args[0] === 'mcp') return parseMcp(args.slice(1), cwd)
  if (args[0] === 'trust' || args[0] === 'untrust') return parseTrust(args[0], args.slice(1), cwd)
  if (args[0] === 'acp') return parseAcp(args.slice(1))
  if (args[0] === 'serve') return { kind: 'serve', args: args.slice(1) }
  const { values, positionals } = parse(args, RUN_OPTIONS, true)
  if (values.version) return { kind: 'version' }
  if (values.help) return { kind: 'help' }
  if (positionals.length === 0) {
    if (values.resume !== undefined || values.continue)
      throw new UsageError(
        '--resume and --continue need a task to run, e.g. rudder --continue "keep going"',
      )
    return { kind: 'help' }
  }
  if (positionals.length > 1)
    throw new UsageError(
      `expected one task, got ${positionals.length} arguments; quote the task: rudder "${positionals.join(' ')}"`,
    )
  if (values.resume !== undefined && values.continue)
    throw new UsageError('use either --resume <id> or --continue, not both')
  const task = positionals[0]!
  if (task.trim() === '')
    throw new UsageError(
      'the task is empty; say what rudder should do, e.g. rudder "fix the failing test"',
    )
  const maxSteps =
    values['max-steps'] === undefined
      ? undefined
      : wholeNumber(values['max-steps'], '--max-steps', 1)
  return {
    kind: 'run',
    task,
    options: {
      continueLatest: values.continue,
      cwd: resolve(cwd, values.cwd ?? '.'),
      yes: values.yes,
      json: values.json,
      ...optional('provider', values.provider),
      ...optional('model', values.model),
      ...optional('store', values.store),
      ...optional('resume', values.resume),
      ...optional('system', values.system),
      ...optional('maxSteps', maxSteps),
    },
  }
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

const SESSIONS_USAGE =
  'rudder sessions list|show <id> [--follow]|export <id> [--out file]|import <file>|fork <id> [--at seq]|repair <id> [--store url]'

function parseSessions(args: readonly string[], cwd: string): CliCommand {
  const { values, positionals } = parse(
    args,
    {
      store: { type: 'string' },
      cwd: { type: 'string' },
      all: { type: 'boolean', default: false },
      limit: { type: 'string' },
      out: { type: 'string', short: 'o' },
      at: { type: 'string' },
      json: { type: 'boolean', default: false },
      follow: { type: 'boolean', short: 'f', default: false },
    },
    true,
  )
  const [action, target, ...rest] = positionals
  if (rest.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}; usage: ${SESSIONS_USAGE}`)
  const need = (what: string) => {
    if (target === undefined)
      throw new UsageError(`rudder sessions ${action} needs ${what}; usage: ${SESSIONS_USAGE}`)
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
        return { action, file: resolve(cwd, need('a JSONL file')) }
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
      default:
        throw new UsageError(
          `unknown sessions command ${JSON.stringify(action ?? '')}; usage: ${SESSIONS_USAGE}`,
        )
    }
  })()
  return { kind: 'sessions', ...store, command }
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
      `${(error as Error).message.replace(/\. To specify a positional.*$/s, '')}. Run \`rudder --help\` for usage.`,
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
