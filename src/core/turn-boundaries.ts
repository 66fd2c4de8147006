/**
 * Turn boundaries of a stored log: closing a turn left open by a crash (docs/spec.md §9.3) and where a
 * fork may cut (docs/spec.md §9.4). Pure functions of the events; they look back only as far as the
 * last turn boundary.
 */
import { RudderError } from './errors.js'
import type { EventMap, EventType, SessionEvent } from './events.js'
import { EMPTY_LOG_STATE, foldEvent, type LogState } from './log-fold.js'

/** An append the repair makes, in order. */
export type RepairAppend = { [K in EventType]: readonly [K, EventMap[K]] }[EventType]

/** What closing an open turn appends, and which calls got which result. */
export type CrashRepairPlan = {
  readonly turn: number
  readonly appends: readonly RepairAppend[]
  readonly results: readonly { callId: string; code: 'interrupted' | 'outcome-unknown' }[]
}

/** The seq of the `turn/start` of the turn open after `events[0..throughSeq]`, if any. */
export function openTurnStart(
  events: readonly SessionEvent[],
  throughSeq = events.length - 1,
): number | undefined {
  for (let seq = throughSeq; seq >= 0; seq--) {
    const type = events[seq]?.type
    if (type === 'turn/end') return undefined
    if (type === 'turn/start') return seq
  }
  return undefined
}

/**
 * The seq a fork cuts at (docs/spec.md §9.4): `atSeq`, or by default the last seq not inside an open
 * turn (−1 if there is none). Throws `INVALID_INPUT` past the end and `OPEN_TURN` for a cut
 * that leaves a turn open.
 */
export function forkCut(
  id: string,
  events: readonly SessionEvent[],
  atSeq: number | undefined,
): number {
  if (atSeq === undefined) return defaultCut(events)
  if (atSeq >= events.length)
    throw new RudderError(
      'INVALID_INPUT',
      `cannot fork session ${id} at seq ${atSeq}: its last durable seq is ${events.length - 1}`,
    )
  const start = openTurnStart(events, atSeq)
  if (start !== undefined)
    throw new RudderError(
      'OPEN_TURN',
      `cannot fork session ${id} at seq ${atSeq}: it is inside turn ${(events[start]?.data as { turn?: number } | undefined)?.turn} (open from seq ${start}); fork at seq ${start - 1} (before the turn) or at the seq of a later turn/end`,
    )
  return atSeq
}

/** The default fork cut: the last seq not inside an open turn (−1 if there is none). */
export function defaultCut(events: readonly SessionEvent[]): number {
  const start = openTurnStart(events)
  return start === undefined ? events.length - 1 : start - 1
}

/** The text of the result a crashed tool call gets. */
export function crashResultText(name: string, code: 'interrupted' | 'outcome-unknown'): string {
  return code === 'outcome-unknown'
    ? `The tool call ${name} started, but rudder stopped (a crash or kill) before its result was recorded, so its outcome is unknown: it may have finished, partly run, or not run at all. Do not retry side-effecting work blindly: first check its effects (read the file, list the state it changes), then decide.`
    : `The tool call ${name} never started: rudder stopped (a crash or kill) before running it, so it had no effect. Call it again if it is still needed.`
}

/**
 * The events that close a turn left open at the end of `events`: a result for each tool call
 * of the open step that has none (`outcome-unknown` if its `tool/call` was logged, else
 * `interrupted`), then `step/end` if a step is open, then `turn/end {interrupted}`.
 * Undefined when no turn is open. Reads the open turn through `foldEvent`.
 */
export function crashRepairOf(events: readonly SessionEvent[]): CrashRepairPlan | undefined {
  const start = openTurnStart(events)
  if (start === undefined) return undefined
  let state = EMPTY_LOG_STATE
  for (let seq = start; seq < events.length; seq++)
    state = foldEvent(state, events[seq] as SessionEvent)
  return crashRepairOfState(state)
}

/**
 * `crashRepairOf` from the fold of the log (`Session.state()`), which a session keeps without
 * holding the events of the open turn.
 */
export function crashRepairOfState(state: LogState): CrashRepairPlan | undefined {
  if (!state.openTurn) return undefined
  const turn = state.openTurn.turn
  const { step } = state
  const appends: RepairAppend[] = []
  const results: { callId: string; code: 'interrupted' | 'outcome-unknown' }[] = []
  if (step) {
    for (const call of step.calls.slice(step.resultIndex)) {
      const code = step.started.has(call.id) ? 'outcome-unknown' : 'interrupted'
      const message = crashResultText(call.name, code)
      results.push({ callId: call.id, code })
      appends.push([
        'tool/result',
        {
          callId: call.id,
          name: call.name,
          content: [{ type: 'text', text: message }],
          isError: true,
          error: { code, message },
        },
      ])
    }
    appends.push(['step/end', { turn, step: step.step }])
  }
  appends.push(['turn/end', { turn, reason: { kind: 'interrupted' } }])
  return { turn, appends, results }
}

/** The former name of `crashRepairOf`, kept for callers not yet moved. */
export const planCrashRepair = crashRepairOf

/**
 * Appends a repair plan to `session`, in order. Throws what `append` throws (a session that no
 * longer takes appends); the caller decides whether that is fatal.
 */
export function applyCrashRepair(
  session: { append<K extends EventType>(type: K, data: EventMap[K]): unknown },
  plan: CrashRepairPlan,
): void {
  for (const append of plan.appends) appendOne(session, append)
}

function appendOne<K extends EventType>(
  session: { append<T extends EventType>(type: T, data: EventMap[T]): unknown },
  [type, data]: readonly [K, EventMap[K]],
): void {
  session.append(type, data)
}
