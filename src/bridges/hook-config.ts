/**
 * The `hooks` object of a settings file, in the shape Claude Code and Codex share:
 * event → matcher groups → handlers (docs/hooks.md, "Configuration"). Parsed with zod at this
 * trust boundary; structural mistakes and invalid matcher regexes are `ConfigError`s naming the
 * file and key. What rudder does not run (other handler types, unknown or unsupported events,
 * handler fields it ignores) is returned as `ignored`, to be reported once at load.
 */
import { ConfigError } from '../core/index.js'
import { type Zod, zodNow } from '../tools/lazy-zod.js'
import { compileMatcher } from './matcher.js'

/** Whose rules a hook was written for: they differ in decoding and payloads. */
export type Dialect = 'claude' | 'codex'

/** The events rudder runs, per dialect (the conformance report lists the others and why not). */
export const SUPPORTED_EVENTS: Readonly<Record<Dialect, readonly string[]>> = {
  claude: [
    'SessionStart',
    'UserPromptSubmit',
    'PreToolUse',
    'PermissionRequest',
    'PostToolUse',
    'PostToolUseFailure',
    'Notification',
    'Stop',
    'StopFailure',
    'SessionEnd',
  ],
  codex: [
    'SessionStart',
    'UserPromptSubmit',
    'PreToolUse',
    'PermissionRequest',
    'PostToolUse',
    'Stop',
  ],
}

/** Every event the dialect's documentation names (for telling "unsupported" from "unknown"). */
export const DOCUMENTED_EVENTS: Readonly<Record<Dialect, readonly string[]>> = {
  claude: [
    ...SUPPORTED_EVENTS.claude,
    'Setup',
    'InstructionsLoaded',
    'UserPromptExpansion',
    'MessageDisplay',
    'PermissionDenied',
    'PostToolBatch',
    'SubagentStart',
    'SubagentStop',
    'TaskCreated',
    'TaskCompleted',
    'TeammateIdle',
    'ConfigChange',
    'CwdChanged',
    'DirectoryAdded',
    'FileChanged',
    'WorktreeCreate',
    'WorktreeRemove',
    'PreCompact',
    'PostCompact',
    'PreModelSwitch',
    'PostModelSwitch',
    'Elicitation',
    'ElicitationResult',
  ],
  codex: [...SUPPORTED_EVENTS.codex, 'PreCompact', 'PostCompact', 'SubagentStart', 'SubagentStop'],
}

/** One command hook, ready to run. */
export type HookSpec = {
  readonly dialect: Dialect
  readonly event: string
  /** The file it was defined in, and where in it (`hooks.PreToolUse[0].hooks[1]`). */
  readonly file: string
  readonly key: string
  readonly matcher: string | undefined
  readonly matches: (value: string) => boolean
  /** A shell command (`bash -c`), or with `args` an executable run without a shell. */
  readonly command: string
  readonly args?: readonly string[]
  /** The configured timeout; absent: the documented default for the event. */
  readonly timeoutMs?: number
}

/** What one file's `hooks` gave: the hooks to run, and what is ignored (each a sentence). */
export type ParsedHooks = { readonly specs: HookSpec[]; readonly ignored: string[] }

/**
 * The schema of a `hooks` object, built on first use (a memo of an immutable construction,
 * as in decision 0141): most runs find no hooks, and building it at import was ~25 ms of
 * a headless run's CPU profile (bench B10).
 */
let hooksSchema: ReturnType<typeof buildHooksSchema> | undefined

function buildHooksSchema(z: Zod = zodNow()) {
  const handlerSchema = z
    .object({
      type: z.string({ error: 'must be a string such as "command"' }),
      command: z.string().min(1, 'must not be empty').optional(),
      args: z.array(z.string()).optional(),
      timeout: z.number().positive('must be a positive number of seconds').optional(),
    })
    .catchall(z.unknown())
  const groupSchema = z
    .object({
      matcher: z
        .string({ error: 'must be a string (a tool name, a list like "Edit|Write", or a regex)' })
        .optional(),
      hooks: z.array(handlerSchema, { error: 'must be an array of hook handlers' }),
    })
    .catchall(z.unknown())
  return z.record(
    z.string(),
    z.array(groupSchema, {
      error: 'must be an array of matcher groups { matcher?, hooks: [...] }',
    }),
    { error: 'must be an object mapping event names to arrays of matcher groups' },
  )
}

/** Handler fields rudder reads; any other field present is reported as ignored. */
const READ_FIELDS = new Set(['type', 'command', 'args', 'timeout'])
/** Handler fields that mean nothing for how rudder runs a command (reported all the same). */
const CODEX_OR_CLAUDE_ONLY = new Set([
  'statusMessage',
  'async',
  'asyncRewake',
  'once',
  'if',
  'shell',
  'commandWindows',
  'command_windows',
])

/**
 * Parses the `hooks` value of one file. `at` is how the value is reached in the file (`hooks`).
 * Throws `ConfigError` naming `file` and the key for a wrong shape or an invalid matcher.
 */
export function parseHooks(options: {
  readonly value: unknown
  readonly file: string
  readonly dialect: Dialect
  readonly at?: string
}): ParsedHooks {
  const { value, file, dialect } = options
  const at = options.at ?? 'hooks'
  // Codex's config.toml [hooks] table may also hold managed_dir and the like.
  const events =
    dialect === 'codex' && typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).filter(([, entry]) => Array.isArray(entry)))
      : value
  hooksSchema ??= buildHooksSchema()
  const parsed = hooksSchema.safeParse(events)
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `- key "${[at, ...issue.path.map(String)].join('.')}": ${issue.message}`,
    )
    throw new ConfigError(
      `${file}: invalid hooks configuration:\n${problems.join('\n')}\nThe shape is { "hooks": { "<Event>": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "…" } ] } ] } }.`,
    )
  }
  const specs: HookSpec[] = []
  const ignored: string[] = []
  for (const [event, groups] of Object.entries(parsed.data)) {
    if (!SUPPORTED_EVENTS[dialect].includes(event)) {
      ignored.push(
        DOCUMENTED_EVENTS[dialect].includes(event)
          ? `${at}.${event}: rudder does not run ${event} hooks (see docs/hooks-conformance.md)`
          : `${at}.${event}: unknown event; known events: ${SUPPORTED_EVENTS[dialect].join(', ')}`,
      )
      continue
    }
    groups.forEach((group, groupIndex) => {
      const groupKey = `${at}.${event}[${groupIndex}]`
      const matches = compileMatcher(dialect, group.matcher, `${file}: key "${groupKey}.matcher"`)
      for (const key of Object.keys(group))
        if (key !== 'matcher' && key !== 'hooks') ignored.push(`${groupKey}.${key}: ignored`)
      group.hooks.forEach((handler, handlerIndex) => {
        const key = `${groupKey}.hooks[${handlerIndex}]`
        if (handler.type !== 'command') {
          ignored.push(`${key}: "${handler.type}" hooks are not run by rudder (only "command")`)
          return
        }
        if (handler.command === undefined)
          throw new ConfigError(
            `${file}: key "${key}.command" is missing; a command hook needs the shell command to run.`,
          )
        if (handler.async === true || handler.asyncRewake === true) {
          ignored.push(
            `${key}: async hooks are not run by rudder (remove "async" to run it in line)`,
          )
          return
        }
        for (const field of Object.keys(handler))
          if (!READ_FIELDS.has(field))
            ignored.push(
              `${key}.${field}: ${CODEX_OR_CLAUDE_ONLY.has(field) ? 'not supported' : 'unknown field'}, ignored`,
            )
        specs.push({
          dialect,
          event,
          file,
          key,
          matcher: group.matcher,
          matches,
          command: handler.command,
          ...(handler.args === undefined ? {} : { args: handler.args }),
          ...(handler.timeout === undefined ? {} : { timeoutMs: handler.timeout * 1000 }),
        })
      })
    })
  }
  return { specs, ignored }
}
