/**
 * Approval as a front end offers it: a mode (`ask`, `auto-edit`, `yolo`), rules a person added
 * during the session ("allow always", "reject always"), and the question put to whoever is
 * there to answer (a terminal prompt, an editor's permission dialog, a web page). The
 * configured policy decides first; the mode and session rules only settle what it left as
 * `ask`, so a `deny` rule is never overridden, and a change to a protected file (rudder's, git's
 * or an agent's configuration) is approved only by a person asked about it
 * (docs/decisions/0036-approval-modes-and-session-rules.md, 0043).
 */
import type {
  ApprovalReply,
  ApproveCallback,
  ToolCallInfo,
  ToolPreEvent,
  ToolPreResult,
  WaterfallListener,
} from '../agent/index.js'
import type { JsonValue } from '../core/index.js'
import type { ToolDefault } from '../tools/approval-policy.js'
import {
  type ApprovalPolicy,
  decideStrictest,
  type ProtectedPaths,
  type ProtectedTarget,
} from '../tools/index.js'

/** How much runs without asking, on top of the policy. */
export type ApprovalMode = 'ask' | 'auto-edit' | 'yolo'

/** The modes with what a front end shows for them. */
export const APPROVAL_MODES: readonly {
  readonly id: ApprovalMode
  readonly name: string
  readonly description: string
}[] = [
  { id: 'ask', name: 'Ask', description: 'Reading and searching run; everything else asks first.' },
  {
    id: 'auto-edit',
    name: 'Auto-edit',
    description: 'File edits in the workspace run without asking; commands still ask.',
  },
  {
    id: 'yolo',
    name: 'Yolo',
    description: 'Everything the policy does not deny runs without asking.',
  },
]

/** Tools whose calls `auto-edit` lets through. */
const EDIT_TOOLS: ReadonlySet<string> = new Set(['write', 'edit'])

/**
 * A rule a person added for this session. For `bash` it covers exactly one command line; for
 * any other tool, every call of that tool.
 */
export type SessionRule = {
  readonly tool: string
  readonly command?: string
  readonly action: 'allow' | 'deny'
}

/** What a person is asked. `rule` is what "always" would remember. */
export type ApprovalQuestion = {
  readonly call: ToolCallInfo
  readonly reason: string
  readonly rule: { readonly tool: string; readonly command?: string }
  readonly signal: AbortSignal
}

/** A person's answer. `always` remembers the answer for this session as a rule. */
export type ApprovalAnswer =
  | { readonly kind: 'allow'; readonly always?: boolean }
  | { readonly kind: 'deny'; readonly always?: boolean; readonly reason?: string }

/**
 * Puts a question to a person. It may throw or be aborted by `signal`: the call is then
 * refused (fail closed) and the model is told why.
 */
export type Asker = (question: ApprovalQuestion) => Promise<ApprovalAnswer>

/** Approval for one session: mode, session rules, and who answers. */
export interface ApprovalControl {
  readonly mode: ApprovalMode
  setMode(mode: ApprovalMode): void
  readonly rules: readonly SessionRule[]
  addRule(rule: SessionRule): void
  /** Who answers `ask`; `undefined` for nobody (headless). Returns the previous asker. */
  setAsker(asker: Asker | undefined): Asker | undefined
  /** The agent's outermost `tool-pre` listener. */
  readonly toolPre: WaterfallListener<ToolPreEvent, ToolPreResult>
  /** The agent's `approve` callback. */
  readonly approve: ApproveCallback
}

export type ApprovalControlOptions = {
  /**
   * Every policy that applies; the strictest decision wins. The first is the user's (defaults
   * refined by trusted config); more only tighten it (an untrusted project's restrictions).
   */
  readonly policies: readonly ApprovalPolicy[]
  /** Changes to these always ask, and only a person asked this time approves them. */
  readonly protectedPaths?: ProtectedPaths
  /** Told of each protected change refused because nobody was there to approve it. */
  readonly onNotice?: (message: string) => void
  /** A tool's default when the policy does not name it (MCP tools' annotations). */
  readonly toolDefault?: ToolDefault
  readonly mode?: ApprovalMode
  readonly asker?: Asker
  /** With nobody to answer, approve what is asked (`--yes`); otherwise refuse it. */
  readonly approveUnattended?: boolean
  /** What to tell the model when nobody is there to answer (headless), naming how to allow. */
  readonly unattendedHint?: string
}

export function createApprovalControl(options: ApprovalControlOptions): ApprovalControl {
  let mode = options.mode ?? 'ask'
  let asker = options.asker
  const rules: SessionRule[] = []
  const hint =
    options.unattendedHint ??
    'The user can allow it in the "approval" section of .rudder/config.json.'

  const ruleFor = (call: ToolCallInfo): { tool: string; command?: string } => {
    const command = bashCommand(call.args)
    return call.name === 'bash' && command !== undefined
      ? { tool: 'bash', command }
      : { tool: call.name }
  }
  const matching = (call: ToolCallInfo): SessionRule | undefined => {
    const wanted = ruleFor(call)
    // The latest answer wins: a person may change their mind.
    return rules.findLast(
      (rule) => rule.tool === wanted.tool && (rule.command ?? undefined) === wanted.command,
    )
  }

  // Calls that would change protected files: they ask whatever the mode, rules or --yes say.
  const protectedCalls = new Map<string, readonly ProtectedTarget[]>()

  /** The policy's decision with the mode and session rules applied to what it left as `ask`. */
  const settle = (call: ToolCallInfo): ToolPreResult => {
    const decision = decideStrictest(options.policies, call, {
      ...(options.protectedPaths === undefined ? {} : { protectedPaths: options.protectedPaths }),
      ...(options.toolDefault === undefined ? {} : { toolDefault: options.toolDefault }),
    })
    if (decision.action !== 'ask') return decision
    if (decision.protectedTargets) {
      protectedCalls.set(call.id, decision.protectedTargets)
      return { action: 'ask', reason: decision.reason }
    }
    const rule = matching(call)
    if (rule?.action === 'deny')
      return { action: 'deny', reason: 'The user refused this call for the rest of the session.' }
    const isLetThrough =
      rule?.action === 'allow' ||
      mode === 'yolo' ||
      (mode === 'auto-edit' && EDIT_TOOLS.has(call.name))
    return isLetThrough ? { action: 'run' } : decision
  }

  /** Only a person, asked this time, approves a change to a protected file. */
  async function approveProtected(
    call: ToolCallInfo,
    why: string,
    targets: readonly ProtectedTarget[],
    signal: AbortSignal,
  ): Promise<ApprovalReply> {
    const names = targets.map((target) => target.path).join(', ')
    const what = targets.map((target) => target.what).join(', ')
    if (!asker) {
      options.onNotice?.(
        `refused ${call.name} of ${names} (${what}): changes to these always need a person's approval, and --yes does not give it. Make the change yourself if you want it.`,
      )
      return {
        approved: false,
        reason: `Not run: ${call.name} would change ${names} (${what}). Changes to these always need the user's approval, and nobody is there to give it in this run (--yes does not cover them). Do not try another way to change them; tell the user what you wanted to change and why, so they can do it themselves.`,
      }
    }
    // "Always" is not remembered: each change to these files is asked about.
    const answer = await asker({ call, reason: why, rule: ruleFor(call), signal })
    if (answer.kind === 'allow') return true
    return { approved: false, reason: refusal(call, answer.reason) }
  }

  const control: ApprovalControl = {
    get mode() {
      return mode
    },
    setMode(next) {
      if (!APPROVAL_MODES.some((known) => known.id === next))
        throw new TypeError(
          `unknown approval mode ${JSON.stringify(next)}; expected ask, auto-edit or yolo`,
        )
      mode = next
    },
    get rules() {
      return [...rules]
    },
    addRule(rule) {
      rules.push(Object.freeze({ ...rule }))
    },
    setAsker(next) {
      const previous = asker
      asker = next
      return previous
    },
    async toolPre({ call }, next) {
      // The policy first: a deny never reaches the hooks inside it.
      const first = settle(call)
      if (first.action === 'deny') return first
      // Hooks inside (command-hook bridges) run even when the policy asks, as Claude Code's
      // PreToolUse runs before its permission prompt: they may deny, ask, or rewrite the call.
      const downstream = await next()
      if (downstream.action === 'deny') return downstream
      const args = downstream.args
      // Replaced arguments are judged again, so a rewrite cannot slip past a deny or ask rule.
      const decision = args === undefined ? first : settle({ ...call, args })
      if (decision.action === 'deny') return decision
      const withArgs = args === undefined ? {} : { args }
      if (downstream.action === 'ask') {
        const reason =
          downstream.reason ?? (decision.action === 'ask' ? decision.reason : undefined)
        return { action: 'ask', ...(reason === undefined ? {} : { reason }), ...withArgs }
      }
      if (decision.action === 'ask') return { ...decision, ...withArgs }
      return downstream
    },
    async approve({ call, reason, signal }) {
      const why = reason ?? `${call.name} needs approval`
      const targets = protectedCalls.get(call.id)
      if (targets !== undefined) {
        protectedCalls.delete(call.id)
        return approveProtected(call, why, targets, signal)
      }
      const rule = matching(call)
      if (rule) return rule.action === 'allow'
      if (!asker && options.approveUnattended) return true
      if (!asker)
        return {
          approved: false,
          reason: `Not run: ${why}, and nobody was there to approve it. ${hint}`,
        }
      const answer = await asker({ call, reason: why, rule: ruleFor(call), signal })
      if (answer.always) control.addRule({ ...ruleFor(call), action: answer.kind })
      if (answer.kind === 'allow') return true
      return { approved: false, reason: refusal(call, answer.reason) }
    },
  }
  return control
}

function refusal(call: ToolCallInfo, reason: string | undefined): string {
  return reason === undefined || reason.trim() === ''
    ? `The user did not approve this call to ${call.name}.`
    : `The user did not approve this call to ${call.name}: ${reason}`
}

function bashCommand(args: JsonValue): string | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined
  const command = (args as { command?: unknown }).command
  return typeof command === 'string' ? command : undefined
}
