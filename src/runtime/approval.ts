/**
 * The approval wiring of a runtime: the policy as the agent's outermost `tool-pre` listener,
 * and the approve callback that answers its `ask`s. Changes to protected files (rudder's, git's,
 * agents' configuration) always ask, and nothing approves them unasked: not `--yes`, not a
 * policy; a headless run refuses them and says so (docs/spec.md §9.5, docs/decisions/0043).
 */
import type { ApproveCallback, HookListeners } from '../agent/index.js'
import {
  type ApprovalPolicy,
  decideStrictest,
  type PolicyDecision,
  type ProtectedPaths,
} from '../tools/index.js'
import type { RuntimeNotice } from './notices.js'

export type ApprovalWiringOptions = {
  /**
   * Every policy that applies; the strictest decision wins. The first is the user's policy
   * (defaults refined by trusted config); more only tighten it (an untrusted project's).
   */
  readonly policies: readonly ApprovalPolicy[]
  readonly protectedPaths: ProtectedPaths
  /** Approve every ask except changes to protected files (`--yes`). */
  readonly yes: boolean
  /** The user's config file, named when a refusal says where approvals are configured. */
  readonly userConfigFile: string
  /** Told about each protected change refused because nobody was there to approve it. */
  readonly onNotice?: (notice: RuntimeNotice) => void
}

export type ApprovalWiring = {
  readonly toolPre: HookListeners['tool-pre']
  readonly approve: ApproveCallback
}

/** Builds the listener and the callback; they share which calls touch protected files. */
export function approvalWiring(options: ApprovalWiringOptions): ApprovalWiring {
  const protectedCalls = new Map<string, Extract<PolicyDecision, { action: 'ask' }>>()
  const decideCall = (call: { name: string; args: unknown }) =>
    decideStrictest(options.policies, call, { protectedPaths: options.protectedPaths })
  return {
    // The policy runs outermost, so a later hook can only narrow what it allows; arguments a
    // later hook replaces are judged again.
    toolPre: async ({ call }, next) => {
      const decision = decideCall(call)
      if (decision.action === 'run') {
        const result = await next()
        if (result.action !== 'run' || result.args === undefined) return result
        const again = decideCall({ name: call.name, args: result.args })
        if (again.action === 'run') return result
        if (again.action === 'ask' && again.protectedTargets) protectedCalls.set(call.id, again)
        return again.action === 'ask' ? { action: 'ask', reason: again.reason } : again
      }
      if (decision.action === 'deny') return decision
      if (decision.protectedTargets) protectedCalls.set(call.id, decision)
      return { action: 'ask', reason: decision.reason }
    },
    approve: ({ call, reason }) => {
      const guarded = protectedCalls.get(call.id)
      if (guarded !== undefined) {
        protectedCalls.delete(call.id)
        const targets = guarded.protectedTargets ?? []
        const names = targets.map((target) => target.path).join(', ')
        const what = targets.map((target) => target.what).join(', ')
        options.onNotice?.({
          kind: 'protected-change-refused',
          tool: call.name,
          targets,
          message: `refused ${call.name} of ${names} (${what}): changes to these always need a person's approval, and --yes does not give it. Make the change yourself if you want it.`,
        })
        return {
          approved: false,
          reason: `Not run: ${call.name} would change ${names} (${what}). Changes to these always need the user's approval, and nobody is there to give it in this run (--yes does not cover them). Do not try another way to change them; tell the user what you wanted to change and why, so they can do it themselves.`,
        }
      }
      if (options.yes) return true
      return {
        approved: false,
        reason: `Not run: ${reason ?? `${call.name} needs approval`}, and nobody was there to approve it. The user can allow it with --yes or in the "approval" section of ${options.userConfigFile}.`,
      }
    },
  }
}
