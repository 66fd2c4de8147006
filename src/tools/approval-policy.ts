/**
 * The approval policy: which tool calls run, which need a person's approval and which are
 * refused, as plain configuration. `decide` is a pure function whose result has the shape of
 * a `tool-pre` result (docs/spec.md §6.3), so an agent hook can return it as is.
 *
 * Bash rules match each simple command of a command line (split at `;`, `&&`, `||`, `|`, `&`,
 * newlines, parentheses and backticks, outside quotes), and the strictest outcome wins, so
 * that `git status && rm -rf /` is not allowed by a rule for `git status*`; a pipeline
 * cannot be matched as one unit. This is a seatbelt
 * against mistakes, not a sandbox: a command can always hide what it does (`sh -c "…"`,
 * scripts, aliases), so deny rules catch accidents, not adversaries.
 */
import { z } from 'zod'
import { ConfigError } from '../core/index.js'

/** What the policy says about a call. */
export type PolicyAction = 'allow' | 'ask' | 'deny'

/**
 * A rule for bash commands. `pattern` is glob-like by default, matched against a whole simple
 * command (leading `VAR=value` assignments removed, whitespace collapsed): `*` matches any
 * characters (spaces and `/` included), `?` one character, everything else itself, so
 * `git diff*` matches `git diff --stat`. Written as `/source/flags` it is a JavaScript regular
 * expression, tested with `RegExp.test` (anchor it yourself).
 */
export type BashRule = { readonly pattern: string; readonly action: PolicyAction }

/**
 * Tool-level actions fall back to `default` (itself `'ask'` when absent). For `bash`, the
 * first rule matching a simple command decides for it; an unmatched one falls back to
 * `tools.bash`, then `default`.
 */
export type ApprovalPolicy = {
  readonly default?: PolicyAction
  readonly tools?: Readonly<Record<string, PolicyAction>>
  readonly bash?: readonly BashRule[]
}

/** The outcome for one call, shaped like a `tool-pre` result. */
export type PolicyDecision =
  | { readonly action: 'run' }
  | { readonly action: 'ask'; readonly reason: string }
  | { readonly action: 'deny'; readonly reason: string }

/** A call as `tool-pre` sees it. */
export type PolicyCall = { readonly name: string; readonly args: unknown }

const action = z.enum(['allow', 'ask', 'deny'])

/** The zod schema of a policy, for config files. Unknown keys are errors (typos must not pass silently). */
export const approvalPolicySchema = z
  .object({
    default: action.optional(),
    tools: z.record(z.string(), action).optional(),
    bash: z
      .array(
        z
          .object({
            pattern: z
              .string()
              .min(1)
              .refine((pattern) => compileRule(pattern) !== undefined, {
                message:
                  'invalid regular expression; write /source/flags with a valid JavaScript RegExp, or use a glob-like pattern',
              }),
            action,
          })
          .strict(),
      )
      .optional(),
  })
  .strict()

/** A sensible starting policy: reading and searching run, everything else asks. */
export const DEFAULT_APPROVAL_POLICY: ApprovalPolicy = Object.freeze({
  default: 'ask',
  tools: Object.freeze({ read: 'allow', grep: 'allow', glob: 'allow', ls: 'allow' }),
})

/**
 * Validates a policy read from configuration. Throws `ConfigError` naming `where` (a file and
 * key, say) and each wrong field with what was expected.
 */
export function parseApprovalPolicy(value: unknown, where = 'approval policy'): ApprovalPolicy {
  const parsed = approvalPolicySchema.safeParse(value)
  if (parsed.success) return parsed.data as ApprovalPolicy
  const problems = parsed.error.issues.map((issue) => {
    const path = issue.path.length === 0 ? '(the policy)' : issue.path.map(String).join('.')
    return `  ${path}: ${issue.message}`
  })
  throw new ConfigError(
    `${where} is not valid:\n${problems.join('\n')}\nExpected { default?: "allow"|"ask"|"deny", tools?: { <tool>: action }, bash?: [{ pattern, action }] }.`,
  )
}

/**
 * A tool's own default when the policy names neither it nor a pattern matching it (an MCP
 * tool's annotations, say). The policy's `default` applies only when this says nothing.
 */
export type ToolDefault = (name: string) => PolicyAction | undefined

/**
 * Decides one call. Pure: the same policy and call always give the same decision. A tool's
 * action is its own entry in `tools`, else the first entry whose key has `*` wildcards and
 * matches it (`mcp__github__*`), else `toolDefault`, else `default`, else `ask`.
 */
export function decide(
  policy: ApprovalPolicy,
  call: PolicyCall,
  toolDefault?: ToolDefault,
): PolicyDecision {
  const toolAction =
    toolActionOf(policy.tools, call.name) ?? toolDefault?.(call.name) ?? policy.default ?? 'ask'
  const command = bashCommand(call)
  if (command === undefined) return toolDecision(call.name, toolAction)
  return bashDecision(policy.bash ?? [], toolAction, command)
}

function toolActionOf(tools: ApprovalPolicy['tools'], name: string): PolicyAction | undefined {
  if (!tools) return undefined
  if (Object.hasOwn(tools, name)) return tools[name]
  for (const [pattern, action] of Object.entries(tools))
    if (pattern.includes('*') && matchesWildcards(pattern, name)) return action
  return undefined
}

/** `*` matches any run of characters; everything else itself. Linear: no backtracking. */
export function matchesWildcards(pattern: string, text: string): boolean {
  const parts = pattern.split('*')
  const first = parts[0] ?? ''
  const last = parts.at(-1) ?? ''
  if (parts.length === 1) return pattern === text
  if (!text.startsWith(first) || text.length < first.length + last.length) return false
  if (!text.endsWith(last)) return false
  let at = first.length
  const end = text.length - last.length
  for (const part of parts.slice(1, -1)) {
    const found = text.indexOf(part, at)
    if (found < 0 || found + part.length > end) return false
    at = found + part.length
  }
  return true
}

function toolDecision(name: string, toolAction: PolicyAction): PolicyDecision {
  switch (toolAction) {
    case 'allow':
      return { action: 'run' }
    case 'ask':
      return { action: 'ask', reason: `${name} needs approval (the approval policy says ask)` }
    case 'deny':
      return {
        action: 'deny',
        reason: `The approval policy does not allow the ${name} tool. Do not call it again; if you need it, tell the user why so they can change the policy.`,
      }
  }
}

function bashCommand(call: PolicyCall): string | undefined {
  if (call.name !== 'bash' || typeof call.args !== 'object' || call.args === null) return undefined
  const command = (call.args as { command?: unknown }).command
  return typeof command === 'string' ? command : undefined
}

const SEVERITY: Record<PolicyAction, number> = { allow: 0, ask: 1, deny: 2 }

function bashDecision(
  rules: readonly BashRule[],
  fallback: PolicyAction,
  command: string,
): PolicyDecision {
  const { segments, hasSubstitution } = splitCommand(command)
  const compiled = rules.map((rule) => ({ rule, regex: compileRule(rule.pattern) }))
  let worst: { action: PolicyAction; segment: string; rule?: BashRule } | undefined
  for (const segment of segments.length === 0 ? [''] : segments) {
    const match = compiled.find(({ regex }) => regex?.test(segment) === true)
    const segmentAction = match?.rule.action ?? fallback
    if (worst === undefined || SEVERITY[segmentAction] > SEVERITY[worst.action]) {
      worst = {
        action: segmentAction,
        segment,
        ...(match === undefined ? {} : { rule: match.rule }),
      }
    }
  }
  if (worst === undefined) return { action: 'run' }
  const why =
    worst.rule === undefined
      ? `no bash rule matches "${worst.segment}"`
      : `"${worst.segment}" matches the rule ${JSON.stringify(worst.rule.pattern)}`
  if (worst.action === 'deny') {
    return {
      action: 'deny',
      reason: `The approval policy does not allow this command (${why}). Do not retry it in another form; if it is needed, tell the user why so they can run it or change the policy.`,
    }
  }
  if (worst.action === 'ask')
    return { action: 'ask', reason: `bash: ${abbreviate(command)} (${why})` }
  // A substitution inside double quotes runs a command the rules never saw; unless unmatched
  // commands are allowed anyway, an allowed line that has one still asks.
  if (hasSubstitution && fallback !== 'allow')
    return {
      action: 'ask',
      reason: `bash: ${abbreviate(command)} (it contains a command substitution the policy cannot check)`,
    }
  return { action: 'run' }
}

function abbreviate(command: string): string {
  return command.length <= 200 ? command : `${command.slice(0, 200)}…`
}

/** Compiles a rule's pattern; undefined for an invalid `/regex/`. */
function compileRule(pattern: string): RegExp | undefined {
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  if (regex !== null) {
    try {
      return new RegExp(regex[1]!, regex[2])
    } catch {
      // Reported by the schema as an invalid pattern; decide() treats it as matching nothing.
      return undefined
    }
  }
  const source = pattern
    .split('')
    .map((char) =>
      char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'),
    )
    .join('')
  return new RegExp(`^${source}$`, 's')
}

const KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'do',
  'while',
  'until',
  '!',
  'time',
  '{',
  '}',
])

/**
 * Splits a command line into simple commands outside quotes, collapsing whitespace, and notes
 * `$(…)`, backticks and process substitution. Not a full shell parser: enough to keep one
 * allowed command from carrying another.
 */
export function splitCommand(command: string): { segments: string[]; hasSubstitution: boolean } {
  const segments: string[] = []
  let current = ''
  let quote: "'" | '"' | undefined
  let hasSubstitution = false
  const cut = () => {
    segments.push(current)
    current = ''
  }
  for (let index = 0; index < command.length; index++) {
    const char = command[index]!
    const next = command[index + 1]
    if (quote === "'") {
      current += char
      if (char === "'") quote = undefined
      continue
    }
    if (char === '\\' && next !== undefined) {
      current += char + next
      index++
      continue
    }
    if (char === '`' || (char === '$' && next === '(')) hasSubstitution = true
    if (quote === '"') {
      current += char
      if (char === '"') quote = undefined
      continue
    }
    if (char === "'" || char === '"') {
      quote = char
      current += char
      continue
    }
    if ((char === '<' || char === '>') && next === '(') hasSubstitution = true
    const previous = command[index - 1]
    if (char === '&' && (previous === '>' || previous === '<' || next === '>')) {
      current += char // a redirection such as 2>&1 or &>file, not a control operator
      continue
    }
    // Parentheses and backticks also cut, so the commands inside `$(…)`, `(…)` and `…` are
    // checked as commands of their own.
    if (';&|\n()`'.includes(char)) {
      if ((char === '&' || char === '|') && next === char) index++
      cut()
      continue
    }
    if (/\s/.test(char)) {
      if (current !== '' && !current.endsWith(' ')) current += ' '
      continue
    }
    current += char
  }
  cut()
  return {
    segments: segments.map(cleanSegment).filter((segment) => segment !== ''),
    hasSubstitution,
  }
}

/** Drops leading shell keywords and `VAR=value` assignments, which do not name the command. */
function cleanSegment(segment: string): string {
  let words = segment.trim()
  for (;;) {
    const first = words.split(' ', 1)[0]!
    if (KEYWORDS.has(first)) words = words.slice(first.length).trimStart()
    else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) {
      const assignment = /^[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|\S)*\s*/.exec(words)
      words = words.slice(assignment?.[0].length ?? first.length)
    } else return words
  }
}
