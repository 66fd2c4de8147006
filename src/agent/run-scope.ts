/**
 * A turn's context for one run: the agent's dependencies, the run's scope and the inbox as a
 * turn sees it (turn-context.ts). The run's signal decides what a canceled turn may still do.
 */
import type { UserMessageData } from '../core/index.js'
import type { CompactResult } from './compaction.js'
import { entries, type Inbox } from './inbox.js'
import type { AgentPhase, Run } from './phase.js'
import type { TurnContext, TurnDependencies } from './turn-context.js'

export function turnContextOf(options: {
  readonly run: Run
  readonly dependencies: TurnDependencies
  readonly inbox: Inbox
  readonly moveTo: (next: AgentPhase) => void
  readonly compact: (reason: 'auto' | 'overflow', signal: AbortSignal) => Promise<CompactResult>
}): TurnContext {
  const { run, inbox } = options
  const { signal } = run.controller
  return {
    ...options.dependencies,
    signal,
    cancelCause: () => run.cause,
    compact: (reason) => options.compact(reason, signal),
    stage(data: UserMessageData) {
      // A tool-post context of a canceled turn is dropped whenever its result is logged: it
      // must not land after `turn/end` nor join the next prompt (docs/spec.md §5.5).
      if (!signal.aborted) inbox.stage(entries.context(data, true))
    },
    drain(turn) {
      // After a cancel nothing joins the canceled turn (docs/spec.md §5.5).
      if (signal.aborted) return false
      const steering = inbox.drain(turn)
      if (steering.length === 0) return false
      run.carried.push(...steering)
      return true
    },
    closeWindow: () => options.moveTo({ kind: 'running', run, isWindowOpen: false }),
  }
}
