/**
 * The states an agent can be in, each with the run state it owns, and the one table of moves
 * between them (docs/spec.md §5.2–§5.5). An illegal move is a bug in the agent: it throws.
 */
import { assertNever, RudderError } from '../core/index.js'
import type { CarriedEntry, PromptEntry } from './inbox.js'
import type { AgentStatus } from './notifications.js'

/** One admission, turn or compaction taken from the queue, until the agent moves on. */
export type Run = {
  readonly controller: AbortController
  /** Why the run was aborted: `cancel` until a dispose says otherwise. */
  cause: 'cancel' | 'dispose'
  /** The prompt and steering this run's turn carries: they end with the turn. */
  readonly carried: CarriedEntry[]
  /** Delivery outcomes, settled once the agent has moved on (so a caller sees the new status). */
  readonly settlements: (() => void)[]
}

export type AgentPhase =
  /** Nothing runs; the window is closed. */
  | { readonly kind: 'idle' }
  /**
   * A queued prompt's `prompt-submit` listeners run with the window open; `prompt` is gone once
   * a cancel discarded it. A blocked admission closes the window until the agent moves on.
   */
  | {
      readonly kind: 'admitting'
      readonly run: Run
      readonly prompt: PromptEntry | undefined
      readonly isWindowOpen: boolean
    }
  /** A turn (or a continuation about to open one). The window closes just before `turn/end`. */
  | { readonly kind: 'running'; readonly run: Run; readonly isWindowOpen: boolean }
  /** A manual compaction between turns; the window is closed. */
  | { readonly kind: 'compacting'; readonly run: Run }
  /** A failure the agent cannot recover from (a store that cannot write); every call throws. */
  | { readonly kind: 'stopped'; readonly error: RudderError }
  /** `dispose()` finished; every call throws. */
  | { readonly kind: 'disposed' }

export type PhaseKind = AgentPhase['kind']

const RUNNING: readonly PhaseKind[] = ['admitting', 'running', 'compacting']

/** Where each phase may go. A run's phase may follow another's directly: the queue drives on. */
const MOVES: { readonly [From in PhaseKind]: readonly PhaseKind[] } = {
  // A run's failure is noticed after the agent went idle when settling its deliveries throws.
  idle: [...RUNNING, 'stopped', 'disposed'],
  admitting: [...RUNNING, 'idle', 'stopped'],
  running: [...RUNNING, 'idle', 'stopped'],
  compacting: [...RUNNING, 'idle', 'stopped'],
  stopped: ['disposed'],
  disposed: [],
}

/** Whether `from` may move to `to`. */
export function isLegalMove(from: PhaseKind, to: PhaseKind): boolean {
  return MOVES[from].includes(to)
}

/** The next phase, checked against the table; an illegal move throws `INTERNAL`. */
export function move(from: AgentPhase, to: AgentPhase): AgentPhase {
  if (!isLegalMove(from.kind, to.kind))
    throw new RudderError(
      'INTERNAL',
      `agent: illegal phase change ${from.kind} → ${to.kind}; this is a bug in rudder, please report it with the session log`,
    )
  return to
}

/** The run of a phase that has one. */
export function runOf(phase: AgentPhase): Run | undefined {
  switch (phase.kind) {
    case 'admitting':
    case 'running':
    case 'compacting':
      return phase.run
    case 'idle':
    case 'stopped':
    case 'disposed':
      return undefined
    default:
      return assertNever(phase, 'agent phase')
  }
}

/**
 * Whether the acceptance window is open and takes steering (docs/spec.md §5.2): while admitting
 * or inside a turn, and not after a cancel (input then is new input, §5.5).
 */
export function takesSteering(phase: AgentPhase): boolean {
  switch (phase.kind) {
    case 'admitting':
    case 'running':
      return phase.isWindowOpen && !phase.run.controller.signal.aborted
    case 'compacting':
    case 'idle':
    case 'stopped':
    case 'disposed':
      return false
    default:
      return assertNever(phase, 'agent phase')
  }
}

/** Whether the window is open at all (a context is then staged, not appended at once). */
export function isWindowOpen(phase: AgentPhase): boolean {
  return (phase.kind === 'admitting' || phase.kind === 'running') && phase.isWindowOpen
}

/** The public status of a phase. */
export function statusOf(phase: AgentPhase): AgentStatus {
  switch (phase.kind) {
    case 'admitting':
      return 'admitting'
    case 'running':
    case 'compacting':
      return 'running'
    case 'idle':
    case 'stopped':
    case 'disposed':
      return 'idle'
    default:
      return assertNever(phase, 'agent phase')
  }
}

/**
 * Throws unless a caller may use the agent: `DISPOSED` once `dispose()` was called, the fatal
 * error's code once the agent stopped. Nothing has changed when it throws.
 */
export function assertUsablePhase(phase: AgentPhase, isDisposing: boolean, call: string): void {
  if (isDisposing || phase.kind === 'disposed')
    throw new RudderError(
      'DISPOSED',
      `agent.${call}(): this agent was disposed; create a new one with createAgent()`,
    )
  if (phase.kind === 'stopped')
    throw new RudderError(
      phase.error.code,
      `agent.${call}(): the agent stopped after an error (${phase.error.message}); create a new agent over a reopened session`,
      { cause: phase.error },
    )
}

export function newRun(): Run {
  return { controller: new AbortController(), cause: 'cancel', carried: [], settlements: [] }
}
