/**
 * Decodes what a hook process said, by the rules of its dialect (docs/hooks.md, "Decoding"):
 *
 * - Claude Code reads JSON (stdout starting with `{`) on every exit code; exit 2 blocks whatever
 *   the JSON says, with the JSON's blocking reason or else stderr; another non-zero code is a
 *   non-blocking error unless valid JSON answered; plain stdout is context only for
 *   `SessionStart` and `UserPromptSubmit`.
 * - Codex reads stdout only on exit 0 (JSON-looking text that does not parse is an error); exit 2
 *   blocks with stderr, and without stderr is an error; other codes are errors; some fields are
 *   "parsed but not supported" and make the run an error that lets the action go on.
 *
 * The result is a dialect-free `HookReply` for the bridge to map onto rudder's extension points.
 */
import { z } from 'zod'
import type { JsonValue } from '../core/index.js'
import type { Dialect } from './hook-config.js'
import type { HookProcessResult } from './hook-process.js'

/** What one hook run means, whichever dialect it was written for. */
export type HookReply = {
  /** `ok`: it answered (maybe nothing); `error`: a non-blocking error; `canceled`: the turn was. */
  readonly status: 'ok' | 'error' | 'canceled'
  /** For `error`: what went wrong, one line, for the person. */
  readonly error?: string
  /** `block` (exit 2 or `decision: "block"`), or a permission decision. */
  readonly decision?: 'allow' | 'deny' | 'ask' | 'block'
  /** Why, for `deny` / `block` / `ask` (where it goes depends on the event). */
  readonly reason?: string
  /** `additionalContext`, or plain stdout where the event takes it. */
  readonly contexts: readonly string[]
  /** For the person, never the model. */
  readonly systemMessage?: string
  /** `continue: false`, with its `stopReason`. */
  readonly stop?: { readonly reason?: string }
  readonly updatedInput?: JsonValue
  /** PostToolUse `updatedToolOutput`, when it is text. */
  readonly updatedOutput?: string
  /** Output fields rudder reads but does not act on, to report once. */
  readonly ignored: readonly string[]
}

const specificSchema = z
  .object({
    hookEventName: z.string(),
    additionalContext: z.string().optional(),
    permissionDecision: z.enum(['allow', 'deny', 'ask', 'defer']).optional(),
    permissionDecisionReason: z.string().optional(),
    updatedInput: z.json().optional(),
    decision: z
      .object({
        behavior: z.enum(['allow', 'deny']),
        message: z.string().optional(),
        updatedInput: z.json().optional(),
        updatedPermissions: z.json().optional(),
        interrupt: z.boolean().optional(),
      })
      .optional(),
    updatedToolOutput: z.json().optional(),
  })
  .catchall(z.unknown())
const outputSchema = z
  .object({
    continue: z.boolean().optional(),
    stopReason: z.string().optional(),
    suppressOutput: z.boolean().optional(),
    systemMessage: z.string().optional(),
    decision: z.enum(['block', 'approve']).optional(),
    reason: z.string().optional(),
    hookSpecificOutput: specificSchema.optional(),
  })
  .catchall(z.unknown())
type Output = z.infer<typeof outputSchema>

/** Top-level and hook-specific fields Codex's schemas allow (they refuse any other). */
const CODEX_TOP = new Set([
  'continue',
  'stopReason',
  'suppressOutput',
  'systemMessage',
  'decision',
  'reason',
  'hookSpecificOutput',
])
const CODEX_SPECIFIC = new Set([
  'hookEventName',
  'additionalContext',
  'permissionDecision',
  'permissionDecisionReason',
  'updatedInput',
  'decision',
])
/** Claude Code fields rudder accepts without acting on them (reported once). */
const CLAUDE_IGNORED_TOP = ['terminalSequence']
const CLAUDE_IGNORED_SPECIFIC = [
  'sessionTitle',
  'initialUserMessage',
  'watchPaths',
  'reloadSkills',
  'suppressOriginalPrompt',
  'classifierContext',
  'updatedMCPToolOutput',
  'retry',
]
/** Events whose plain stdout is context for the model. */
const PLAIN_TEXT_CONTEXT = new Set(['SessionStart', 'UserPromptSubmit'])

type Parsed =
  | { readonly kind: 'none' }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'json'; readonly output: Output }
  | { readonly kind: 'invalid'; readonly message: string }

/** Decodes one run of a hook of `dialect` for `event`. */
export function decodeHookRun(dialect: Dialect, event: string, run: HookProcessResult): HookReply {
  switch (run.outcome) {
    case 'canceled':
      return { status: 'canceled', contexts: [], ignored: [] }
    case 'timed-out':
      return failure(
        `timed out after ${Math.round(run.durationMs / 100) / 10}s; its output was discarded`,
      )
    case 'failed-to-start':
      return failure(`could not be started: ${run.message ?? 'unknown error'}`)
    case 'exited':
      return dialect === 'claude' ? decodeClaude(event, run) : decodeCodex(event, run)
  }
}

function decodeClaude(event: string, run: HookProcessResult): HookReply {
  const parsed = parseStdout(run.stdout, event)
  const stderr = run.stderr.trim()
  if (run.exitCode === 2) {
    // Exit 2 blocks whatever the JSON says; the JSON still adds its other fields.
    const reply = parsed.kind === 'json' ? interpretClaude(event, parsed.output) : emptyReply()
    const blockingReason =
      reply.decision === 'block' || reply.decision === 'deny' ? reply.reason : undefined
    return {
      ...reply,
      status: 'ok',
      decision: event === 'PreToolUse' ? 'deny' : 'block',
      reason: blockingReason ?? (stderr || 'blocked by a hook (exit code 2, nothing on stderr)'),
    }
  }
  if (parsed.kind === 'invalid') return failure(parsed.message)
  if (parsed.kind === 'json') return interpretClaude(event, parsed.output)
  if (run.exitCode !== 0)
    return failure(
      `Failed with non-blocking status code ${run.exitCode ?? run.signal}: ${firstLine(stderr) || 'no stderr'}`,
    )
  if (parsed.kind === 'text' && PLAIN_TEXT_CONTEXT.has(event))
    return { ...emptyReply(), contexts: [parsed.text] }
  return emptyReply()
}

function interpretClaude(event: string, output: Output): HookReply {
  const specific = output.hookSpecificOutput
  if (specific && specific.hookEventName !== event)
    return failure(
      `hookSpecificOutput.hookEventName is ${JSON.stringify(specific.hookEventName)}; expected "${event}"`,
    )
  const ignored = [
    ...CLAUDE_IGNORED_TOP.filter((field) => field in output),
    ...CLAUDE_IGNORED_SPECIFIC.filter((field) => specific && field in specific).map(
      (field) => `hookSpecificOutput.${field}`,
    ),
  ]
  const base: Mutable<HookReply> = {
    status: 'ok',
    contexts: specific?.additionalContext === undefined ? [] : [specific.additionalContext],
    ignored,
    ...(output.systemMessage === undefined ? {} : { systemMessage: output.systemMessage }),
  }
  if (output.continue === false)
    base.stop = output.stopReason === undefined ? {} : { reason: output.stopReason }
  switch (event) {
    case 'PreToolUse': {
      const decision =
        specific?.permissionDecision ??
        (output.decision === 'approve' ? 'allow' : output.decision === 'block' ? 'deny' : undefined)
      if (decision === 'defer') base.ignored = [...ignored, 'permissionDecision "defer"']
      else if (decision !== undefined) base.decision = decision
      const reason = specific?.permissionDecisionReason ?? output.reason
      if (reason !== undefined) base.reason = reason
      if (specific?.updatedInput !== undefined && decision !== 'defer')
        base.updatedInput = specific.updatedInput
      return base
    }
    case 'PermissionRequest': {
      const decision = specific?.decision
      if (decision) {
        base.decision = decision.behavior
        if (decision.message !== undefined) base.reason = decision.message
        for (const field of ['updatedInput', 'updatedPermissions', 'interrupt'] as const)
          if (decision[field] !== undefined) base.ignored = [...base.ignored, `decision.${field}`]
      }
      return base
    }
    case 'PostToolUse':
      if (specific?.updatedToolOutput !== undefined) {
        if (typeof specific.updatedToolOutput === 'string')
          base.updatedOutput = specific.updatedToolOutput
        else base.ignored = [...base.ignored, 'hookSpecificOutput.updatedToolOutput (not text)']
      }
      return withTopLevelBlock(base, output)
    case 'UserPromptSubmit':
    case 'PostToolUseFailure':
    case 'Stop':
      return withTopLevelBlock(base, output)
    default:
      return base
  }
}

function withTopLevelBlock(reply: Mutable<HookReply>, output: Output): HookReply {
  if (output.decision === 'block') {
    reply.decision = 'block'
    if (output.reason !== undefined) reply.reason = output.reason
  }
  return reply
}

function decodeCodex(event: string, run: HookProcessResult): HookReply {
  if (run.exitCode === 2) {
    const reason = run.stderr.trim()
    if (reason === '')
      return failure(
        `${event} hook exited with code 2 but did not write a blocking reason to stderr`,
      )
    return {
      ...emptyReply(),
      decision: event === 'PreToolUse' ? 'deny' : 'block',
      reason,
    }
  }
  if (run.exitCode !== 0)
    return failure(
      run.exitCode === null
        ? `hook was killed by ${run.signal ?? 'a signal'}`
        : `hook exited with code ${run.exitCode}`,
    )
  const parsed = parseStdout(run.stdout, event)
  if (parsed.kind === 'none') return emptyReply()
  if (parsed.kind === 'invalid' || (parsed.kind === 'text' && /^\s*[[{]/.test(run.stdout)))
    return failure(`hook returned invalid ${event} JSON output`)
  if (parsed.kind === 'text') {
    if (PLAIN_TEXT_CONTEXT.has(event)) return { ...emptyReply(), contexts: [parsed.text] }
    if (event === 'Stop') return failure('Stop hooks must answer with JSON; plain text is invalid')
    return emptyReply()
  }
  return interpretCodex(event, parsed.output)
}

function interpretCodex(event: string, output: Output): HookReply {
  const specific = output.hookSpecificOutput
  const unknown = [
    ...Object.keys(output).filter((key) => !CODEX_TOP.has(key)),
    ...Object.keys(specific ?? {})
      .filter((key) => !CODEX_SPECIFIC.has(key))
      .map((key) => `hookSpecificOutput.${key}`),
  ]
  if (unknown.length > 0) return failure(`hook returned unknown field(s) ${unknown.join(', ')}`)
  if (specific && specific.hookEventName !== event)
    return failure(`hookSpecificOutput.hookEventName must be "${event}"`)
  const base: Mutable<HookReply> = {
    status: 'ok',
    contexts: specific?.additionalContext === undefined ? [] : [specific.additionalContext],
    ignored: [],
    ...(output.systemMessage === undefined ? {} : { systemMessage: output.systemMessage }),
  }
  switch (event) {
    case 'PreToolUse': {
      // Parsed by Codex but not supported: the run fails and the tool call goes on.
      for (const field of ['continue', 'stopReason', 'suppressOutput'] as const)
        if (output[field] !== undefined)
          return failure(`PreToolUse hook returned unsupported ${field}`)
      if (output.decision === 'approve')
        return failure('PreToolUse hook returned unsupported decision:approve')
      const decision = specific?.permissionDecision
      if (decision === 'ask' || decision === 'defer')
        return failure(`PreToolUse hook returned unsupported permissionDecision:${decision}`)
      if (specific?.updatedInput !== undefined) {
        if (decision !== 'allow')
          return failure(
            'PreToolUse updatedInput is only supported with permissionDecision "allow"',
          )
        base.updatedInput = specific.updatedInput
      }
      if (decision === 'deny' || output.decision === 'block') {
        base.decision = 'deny'
        const reason = specific?.permissionDecisionReason ?? output.reason
        if (reason !== undefined) base.reason = reason
      } else if (decision === 'allow') base.decision = 'allow'
      return base
    }
    case 'PermissionRequest': {
      for (const field of ['continue', 'stopReason', 'suppressOutput'] as const)
        if (output[field] !== undefined)
          return failure(`PermissionRequest hook returned unsupported ${field}`)
      const decision = specific?.decision
      if (!decision) return base
      // Reserved fields fail closed.
      const reserved = (['updatedInput', 'updatedPermissions'] as const).find(
        (field) => decision[field] !== undefined,
      )
      if (reserved !== undefined || decision.interrupt === true)
        return {
          ...base,
          decision: 'deny',
          reason: `PermissionRequest hook returned reserved field ${reserved ?? 'interrupt'}; denied`,
        }
      base.decision = decision.behavior
      if (decision.message !== undefined) base.reason = decision.message
      return base
    }
    default:
      if (output.continue === false)
        base.stop = output.stopReason === undefined ? {} : { reason: output.stopReason }
      if (output.suppressOutput !== undefined && event === 'PostToolUse')
        return failure('PostToolUse hook returned unsupported suppressOutput')
      return withTopLevelBlock(base, output)
  }
}

function parseStdout(stdout: string, event: string): Parsed {
  const trimmed = stdout.trim()
  if (trimmed === '') return { kind: 'none' }
  if (!trimmed.startsWith('{')) return { kind: 'text', text: stdout.replace(/\n$/, '') }
  let json: unknown
  try {
    json = JSON.parse(trimmed)
  } catch {
    // Not JSON after all: Claude Code takes it as plain text (Codex as an error, decided by its caller).
    return { kind: 'text', text: stdout.replace(/\n$/, '') }
  }
  const checked = outputSchema.safeParse(json)
  if (!checked.success) {
    const issue = checked.error.issues[0]
    const where = issue?.path.length ? issue.path.map(String).join('.') : 'the output'
    return {
      kind: 'invalid',
      message: `${event} hook output does not match the schema: ${where}: ${issue?.message ?? 'invalid'}`,
    }
  }
  return { kind: 'json', output: checked.data }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const emptyReply = (): Mutable<HookReply> => ({ status: 'ok', contexts: [], ignored: [] })
const failure = (error: string): HookReply => ({
  status: 'error',
  error,
  contexts: [],
  ignored: [],
})
const firstLine = (text: string) => text.split('\n', 1)[0] ?? ''
