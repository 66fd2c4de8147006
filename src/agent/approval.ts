/**
 * Asking the approver about a call a `tool-pre` listener answered `ask` (docs/spec.md §6.3).
 * The approver may answer in several friendly forms; they become one `ApprovalDecision` here,
 * at the edge, and nothing past this file sees the other forms.
 */
import { messageOf, optional } from '../core/index.js'
import { raceAbort } from './deferred.js'
import type { ToolCallInfo } from './hooks.js'

/** Asked when a `tool-pre` listener answers `ask`. */
export type ApprovalRequest = {
  readonly call: ToolCallInfo
  readonly reason?: string
  readonly signal: AbortSignal
}
/** The approver's decision; `reason` is what the model is told on refusal. */
export type ApprovalDecision = { readonly approved: boolean; readonly reason?: string }
/**
 * What an approver may answer: a decision, `true` / `false`, or the words a `tool-pre` listener
 * uses (`'allow'` / `'run'` approve, `'deny'` refuses, bare or as `{ action, reason? }`).
 */
export type ApprovalReply =
  | ApprovalDecision
  | boolean
  | 'allow'
  | 'run'
  | 'deny'
  | { readonly action: 'allow' | 'run' | 'deny'; readonly reason?: string }
export type ApproveCallback = (request: ApprovalRequest) => ApprovalReply | Promise<ApprovalReply>

/** The default approver: refuses, saying how to allow. */
export const refuseWithoutApprover: ApproveCallback = ({ call }) => ({
  approved: false,
  reason: `The tool ${call.name} needs approval and no approver is configured, so the call was refused. The user can allow it with an approval policy, by answering 'run' in a tool-pre hook, or by giving the agent an approve callback.`,
})

/**
 * Asks `approve` about `call`; a cancel answers "not approved" at once (the approver is left to
 * notice its signal). An approver that throws refuses, and is reported.
 */
export async function askApproval(options: {
  readonly approve: ApproveCallback
  readonly call: ToolCallInfo
  readonly reason: string | undefined
  readonly signal: AbortSignal
  readonly reportError: (source: string, error: unknown) => void
}): Promise<{ readonly approved: boolean; readonly reason: string }> {
  const { call, signal } = options
  try {
    const asked = Promise.resolve(
      options.approve({ call, ...optional('reason', options.reason), signal }),
    )
    const answer = await raceAbort<ApprovalReply>(asked, signal, () => false)
    const decision = toApprovalDecision(answer)
    const refusal = `The user did not approve this call to ${call.name}.`
    if (decision) return { approved: decision.approved, reason: decision.reason ?? refusal }
    return {
      approved: false,
      reason: `${refusal} (the approver answered ${JSON.stringify(answer)}; expected true or false)`,
    }
  } catch (error) {
    options.reportError('approve', error)
    return {
      approved: false,
      reason: `Approval for ${call.name} failed (${messageOf(error)}); the tool did not run.`,
    }
  }
}

/** The one decision an answer means (an unknown word or object refuses); undefined for no answer at all. */
export function toApprovalDecision(answer: unknown): ApprovalDecision | undefined {
  if (typeof answer === 'boolean') return { approved: answer }
  if (typeof answer === 'string') return { approved: answer === 'allow' || answer === 'run' }
  if (typeof answer !== 'object' || answer === null) return undefined
  const { approved, action, reason } = answer as {
    approved?: unknown
    action?: unknown
    reason?: unknown
  }
  const why = optional('reason', typeof reason === 'string' ? reason : undefined)
  if ('approved' in answer) return { approved: approved === true, ...why }
  return { approved: action === 'allow' || action === 'run', ...why }
}
