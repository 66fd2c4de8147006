/**
 * The approval policy: which tool calls run, which need a person's approval and which are
 * refused, as plain configuration. `decide` is a pure function whose result has the shape of
 * a `tool-pre` result (docs/spec.md §6.3), so an agent hook can return it as is.
 *
 * Bash rules match each command a line runs, however it is spelled or nested (see
 * `shell-commands.ts`), and the strictest outcome wins, so that `git status && rm -rf /` is not
 * allowed by a rule for `git status*` and `\\rm`, `/bin/rm`, `env rm` and `echo "$(rm x)"` meet
 * a rule for `rm`. This is a seatbelt against mistakes, not a sandbox: a script, an alias or
 * an interpreter (`python -c`) can still hide what runs.
 */
import { ConfigError } from '../core/index.js'
import { compileWildcard } from './glob-match.js'
import { type Zod, zodNow } from './lazy-zod.js'
import type { ProtectedPaths, ProtectedTarget } from './protected-paths.js'
import { commandsToCheck } from './shell-commands.js'

/** What the policy says about a call. */
export type PolicyAction = 'allow' | 'ask' | 'deny'

/**
 * A rule for bash commands. `pattern` is glob-like by default, matched against a whole command
 * (its words with quoting removed, leading `VAR=value` assignments and wrappers such as `env`
 * or `nice` removed, then its redirections, single spaces between): `*` matches any characters
 * (spaces and `/` included), `?` one character, everything else itself, so `git diff*` matches
 * `git diff --stat` and `echo * > *` matches `echo hi > out.txt`. Written as `/source/flags` it
 * is a JavaScript regular expression, tested with `RegExp.test` (anchor it yourself).
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

/**
 * The outcome for one call, shaped like a `tool-pre` result. An `ask` with `protectedTargets`
 * is about rudder's, git's or an agent's own configuration: it must be put to a person, and
 * nothing may approve it unasked (not `--yes`, not a policy).
 */
export type PolicyDecision =
  | { readonly action: 'run' }
  | {
      readonly action: 'ask'
      readonly reason: string
      readonly protectedTargets?: readonly ProtectedTarget[]
    }
  | { readonly action: 'deny'; readonly reason: string }

/** What `decide` may take into account besides the policy. */
export type DecideOptions = {
  /** Writes to these always ask (docs/spec.md §9.5); without it nothing is protected. */
  readonly protectedPaths?: ProtectedPaths
  /** A tool's default when a policy does not name it (see `ToolDefault`). */
  readonly toolDefault?: ToolDefault
}

/** A call as `tool-pre` sees it. */
export type PolicyCall = { readonly name: string; readonly args: unknown }

function buildApprovalPolicySchema(z: Zod = zodNow()) {
  const action = z.enum(['allow', 'ask', 'deny'])

  const policy = z
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
  return policy
}

let approvalPolicySchema: ReturnType<typeof buildApprovalPolicySchema> | undefined

/**
 * The zod schema of a policy, for config files. Unknown keys are errors (typos must not pass
 * silently). Built on first use rather than at import (bench B10), then shared.
 */
export function getApprovalPolicySchema(): ReturnType<typeof buildApprovalPolicySchema> {
  approvalPolicySchema ??= buildApprovalPolicySchema()
  return approvalPolicySchema
}

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
  const parsed = getApprovalPolicySchema().safeParse(value)
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
 * matches it (`mcp__github__*`), else `options.toolDefault`, else `default`, else `ask`. A call
 * that would change a protected path asks (unless the policy denies it), whatever the policy says.
 */
export function decide(
  policy: ApprovalPolicy,
  call: PolicyCall,
  options: DecideOptions = {},
): PolicyDecision {
  return decideStrictest([policy], call, options)
}

/**
 * Decides a call under several policies at once: the strictest decision wins (deny over ask
 * over run; the first among equals). Used to let a policy only tighten another one.
 */
export function decideStrictest(
  policies: readonly ApprovalPolicy[],
  call: PolicyCall,
  options: DecideOptions = {},
): PolicyDecision {
  let strictest: PolicyDecision = { action: 'run' }
  for (const policy of policies) {
    const decision = decideOne(policy, call, options.toolDefault)
    if (SEVERITY[actionOf(decision)] > SEVERITY[actionOf(strictest)]) strictest = decision
  }
  if (strictest.action === 'deny' || options.protectedPaths === undefined) return strictest
  const targets = options.protectedPaths.targetsOf(call)
  if (targets.length === 0) return strictest
  const named = targets.map((target) => `${target.path} (${target.what})`).join(', ')
  return {
    action: 'ask',
    reason: `${call.name} would change ${named}; changes to these always need a person's approval, whatever the approval policy or --yes says`,
    protectedTargets: targets,
  }
}

function actionOf(decision: PolicyDecision): PolicyAction {
  return decision.action === 'run' ? 'allow' : decision.action
}

function decideOne(
  policy: ApprovalPolicy,
  call: PolicyCall,
  toolDefault: ToolDefault | undefined,
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
    if (pattern.includes('*') && compileWildcard(pattern).test(name)) return action
  return undefined
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

/** The stricter of two actions. */
export function stricterAction(a: PolicyAction, b: PolicyAction): PolicyAction {
  return SEVERITY[b] > SEVERITY[a] ? b : a
}

type Verdict = { action: PolicyAction; why: string }

/**
 * Judges every command the line runs (docs/decisions/0042): for each, the first rule matching
 * it decides, else `fallback`. Views (`rm` for `/bin/rm`, the line of a wrapper) count only
 * when a deny or ask rule matches them. A command whose program is computed when the line runs
 * cannot be vouched for by an allow rule. The strictest verdict wins.
 */
function bashDecision(
  rules: readonly BashRule[],
  fallback: PolicyAction,
  command: string,
): PolicyDecision {
  const { commands, isTooDeep } = commandsToCheck(command)
  const compiled = rules.map((rule) => ({ rule, matcher: compileRule(rule.pattern) }))
  let worst: Verdict | undefined
  const consider = (verdict: Verdict) => {
    if (worst === undefined || SEVERITY[verdict.action] > SEVERITY[worst.action]) worst = verdict
  }
  if (isTooDeep && fallback !== 'allow')
    consider({ action: 'ask', why: 'it nests substitutions too deeply for the policy to read' })
  for (const checked of commands) {
    const match = compiled.find(({ matcher }) => matcher?.test(checked.text) === true)
    if (checked.isView) {
      if (match !== undefined && match.rule.action !== 'allow')
        consider({ action: match.rule.action, why: matched(checked.text, match.rule) })
      continue
    }
    const action = match?.rule.action ?? fallback
    if (checked.isOpaque && action === 'allow' && fallback !== 'allow') {
      consider({
        action: 'ask',
        why: `"${checked.text}" runs a program that is only known when the line runs`,
      })
    } else
      consider({
        action,
        why:
          match === undefined
            ? `no bash rule matches "${checked.text}"`
            : matched(checked.text, match.rule),
      })
  }
  if (worst === undefined) {
    // Nothing runs (an empty line, or only assignments): the tool's own action decides.
    worst = { action: fallback, why: 'it runs no command' }
  }
  if (worst.action === 'deny') {
    return {
      action: 'deny',
      reason: `The approval policy does not allow this command (${worst.why}). Do not retry it in another form; if it is needed, tell the user why so they can run it or change the policy.`,
    }
  }
  if (worst.action === 'ask')
    return { action: 'ask', reason: `bash: ${abbreviate(command)} (${worst.why})` }
  return { action: 'run' }
}

function matched(text: string, rule: BashRule): string {
  return `"${text}" matches the rule ${JSON.stringify(rule.pattern)}`
}

function abbreviate(command: string): string {
  return command.length <= 200 ? command : `${command.slice(0, 200)}…`
}

/** Compiles a rule's pattern; undefined for an invalid `/regex/`. */
function compileRule(pattern: string): { test(text: string): boolean } | undefined {
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  if (regex !== null) {
    try {
      return new RegExp(regex[1]!, regex[2])
    } catch {
      // Reported by the schema as an invalid pattern; decide() treats it as matching nothing.
      return undefined
    }
  }
  return compileWildcard(pattern)
}

/** Whether a bash pattern is a `/regex/` (a JavaScript regular expression, which can backtrack). */
export function isRegexPattern(pattern: string): boolean {
  return /^\/(.*)\/([a-z]*)$/s.test(pattern)
}
