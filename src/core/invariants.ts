/**
 * The log invariants of docs/spec.md §3.3 (rules 1–3), checked incrementally: `createLogChecker()`
 * costs O(size of the event) per event, so a live session can check every append.
 */
import { type CoreEvent, isCoreEvent, type SessionEvent } from './events.js'
import { EMPTY_LOG_STATE, foldEvent, type LogState, type OpenStep } from './log-fold.js'
import type { ToolCallBlock } from './values.js'

/** The rule a problem breaks. */
export type LogRule =
  | 'seq-contiguous'
  | 'turn-balance'
  | 'step-balance'
  | 'placement'
  | 'tool-pairing'
  | 'compaction'

/** One broken invariant, located by seq. */
export type LogProblem = { readonly seq: number; readonly rule: LogRule; readonly message: string }

export type LogCheckOptions = {
  /**
   * Accept a log whose last turn (or step) is still open: a live session mid-turn, or a
   * crashed log before repair. Default false: turns must be balanced.
   */
  readonly allowOpenTurn?: boolean
  /** Extension event types their plugin allows between turns (others must stand inside one). */
  readonly eventsAllowedBetweenTurns?: readonly string[]
}

/** Checks events one at a time, in order. */
export interface LogChecker {
  /** Problems the event would cause, without taking it in (call `record` to do that). */
  check(event: SessionEvent): LogProblem[]
  /** Problems the event causes; the state advances regardless, so one bad event is reported once. */
  record(event: SessionEvent): LogProblem[]
  /** Problems of the log as a whole once no more events follow (an open turn, say). */
  finish(): LogProblem[]
  /** The turn open after the events checked so far, or undefined. */
  readonly openTurn: number | undefined
  /** The number of the last turn started (0 if none). */
  readonly lastTurn: number
  /** The state after the events recorded so far, for a checkpoint (a copy: later records do not change it). */
  snapshot(): LogCheckerState
}

/**
 * What a checker knows after the events before `nextSeq`: the fold of the log's structure and
 * which seqs a compaction may keep from (`isBoundary`). A store keeps it in a projection
 * checkpoint so that opening a long log need not re-check the events it covers.
 */
export type LogCheckerState = {
  readonly nextSeq: number
  readonly fold: LogState
  /**
   * One bit per seq before `nextSeq` (bit `seq & 7` of byte `seq >> 3`): set where a
   * compaction's firstKeptSeq may point. Bits, not bytes: every open session and follower
   * holds it, a byte per event was 110 KB for a 100 MB log (decision 0166).
   */
  readonly boundaries: Uint8Array
}

/** Whether `seq` is marked in `boundaries` (`LogCheckerState`). */
export function isBoundary(boundaries: Uint8Array, seq: number): boolean {
  return ((boundaries[seq >> 3] ?? 0) & (1 << (seq & 7))) !== 0
}

/**
 * A copy of the boundaries of the seqs before `count`, in `(count + 7) >> 3` bytes, the bits of
 * later seqs cleared (none marked when `boundaries` is undefined).
 */
export function boundariesBefore(boundaries: Uint8Array | undefined, count: number): Uint8Array {
  const bytes = (count + 7) >> 3
  const copy = new Uint8Array(bytes)
  if (boundaries) copy.set(boundaries.subarray(0, bytes))
  if (count & 7) copy[bytes - 1]! &= (1 << (count & 7)) - 1
  return copy
}

/** Runs every invariant over a whole log. Returns no problems when the log is valid. */
export function checkLog(
  events: readonly SessionEvent[],
  options: LogCheckOptions = {},
): LogProblem[] {
  const checker = createLogChecker(options)
  const problems: LogProblem[] = []
  for (const event of events) problems.push(...checker.record(event))
  if (!options.allowOpenTurn) problems.push(...checker.finish())
  return problems
}

/**
 * Creates an incremental checker (see `checkLog`). `from` continues from a state taken with
 * `snapshot()` (a store's checkpoint) as if the events before `from.nextSeq` had been recorded;
 * the caller vouches that it is the state of those events.
 */
export function createLogChecker(
  options: LogCheckOptions = {},
  from?: LogCheckerState,
): LogChecker {
  return new IncrementalLogChecker(options, from)
}

/**
 * The index of the call `callId` among `calls`, or -1. A loop in a module function, not a
 * `findIndex` with an arrow: the arrow is a new closure at every `tool/call`, whose optimised code
 * V8 dropped at each full collection (bench B2, decision 0187).
 */
function indexOfCall(calls: readonly ToolCallBlock[], callId: string): number {
  for (let index = 0; index < calls.length; index++) if (calls[index]!.id === callId) return index
  return -1
}

/**
 * The checker as a class, not closures made per checker: a store makes one for every session it
 * opens or loads, and optimised code that calls a closure holds that very closure, so the check
 * was compiled again at every open (decision 0182). Methods are one function for every checker.
 */
class IncrementalLogChecker implements LogChecker {
  readonly #outOfTurnExtensions: ReadonlySet<string>
  #nextSeq: number
  // The turn/step/call structure, read through the one fold of the log (log-fold.ts).
  #state: LogState
  // Seqs that may be a compaction's firstKeptSeq (docs/spec.md §10), one bit per event. From a
  // checkpoint, room for 8k more events: a resumed session that is never used holds no more.
  #boundaries: Uint8Array
  // The problems of the event being checked, and that event (for `#fail`'s messages).
  #out: LogProblem[] = []
  #current: CoreEvent | undefined

  constructor(options: LogCheckOptions, from: LogCheckerState | undefined) {
    this.#outOfTurnExtensions = new Set(options.eventsAllowedBetweenTurns ?? [])
    this.#nextSeq = from?.nextSeq ?? 0
    this.#state = from?.fold ?? EMPTY_LOG_STATE
    this.#boundaries = new Uint8Array(((this.#nextSeq + 7) >> 3) + 1024)
    if (from) this.#boundaries.set(boundariesBefore(from.boundaries, this.#nextSeq))
  }

  check(event: SessionEvent): LogProblem[] {
    return this.#inspect(event, false)
  }

  record(event: SessionEvent): LogProblem[] {
    return this.#inspect(event, true)
  }

  finish(): LogProblem[] {
    const { openTurn, step } = this.#state
    const out: LogProblem[] = []
    if (step)
      out.push({
        seq: step.startSeq,
        rule: 'step-balance',
        message: `seq ${step.startSeq} (step/start): step ${step.step} of turn ${step.turn} is never closed`,
      })
    if (openTurn)
      out.push({
        seq: openTurn.seq,
        rule: 'turn-balance',
        message: `seq ${openTurn.seq} (turn/start): turn ${openTurn.turn} is never closed (a crashed log is repaired when a store opens it)`,
      })
    return out
  }

  get openTurn(): number | undefined {
    return this.#state.openTurn?.turn
  }

  get lastTurn(): number {
    return this.#state.lastTurn
  }

  snapshot(): LogCheckerState {
    // The fold is immutable (log-fold.ts), so it is shared; the boundaries are copied.
    return {
      nextSeq: this.#nextSeq,
      fold: this.#state,
      boundaries: boundariesBefore(this.#boundaries, this.#nextSeq),
    }
  }

  #markBoundary(seq: number): void {
    const byte = seq >> 3
    if (byte >= this.#boundaries.length) {
      const grown = new Uint8Array(Math.max(this.#boundaries.length * 2, byte + 1))
      grown.set(this.#boundaries)
      this.#boundaries = grown
    }
    this.#boundaries[byte]! |= 1 << (seq & 7)
  }

  #fail(rule: LogRule, message: string): void {
    const event = this.#current
    if (!event) return
    this.#out.push({
      seq: event.seq,
      rule,
      message: `seq ${event.seq} (${event.type}): ${message}`,
    })
  }

  #outsideStep(what: string): void {
    const { step } = this.#state
    if (step)
      this.#fail(
        'placement',
        `${what} may not stand inside a step (step ${step.step} of turn ${step.turn} is open since seq ${step.startSeq})`,
      )
  }

  #insideStep(): OpenStep | undefined {
    if (!this.#state.step)
      this.#fail('placement', 'execution events may only stand inside a step (no step is open)')
    return this.#state.step
  }

  #problemsOf(event: CoreEvent): LogProblem[] {
    const seq = event.seq
    const { lastTurn, openTurn, step } = this.#state
    this.#out = []
    this.#current = event
    switch (event.type) {
      case 'user/message':
        this.#outsideStep('a user message')
        break
      case 'steering/message':
        if (!openTurn)
          this.#fail('placement', 'steering may only stand inside a turn (no turn is open)')
        else if (event.data.turn !== openTurn.turn)
          this.#fail(
            'placement',
            `steering names turn ${event.data.turn} but turn ${openTurn.turn} is open`,
          )
        this.#outsideStep('steering')
        break
      case 'turn/start': {
        const expected = lastTurn + 1
        if (openTurn)
          this.#fail(
            'turn-balance',
            `turn ${event.data.turn} starts while turn ${openTurn.turn} (opened at seq ${openTurn.seq}) is still open`,
          )
        if (event.data.turn !== expected)
          this.#fail(
            'turn-balance',
            `turn ${event.data.turn} starts, but turns are numbered in order and the next is ${expected}`,
          )
        if (event.data.trigger !== 'prompt' && event.data.trigger !== 'continue')
          this.#fail('turn-balance', `unknown trigger ${JSON.stringify(event.data.trigger)}`)
        break
      }
      case 'turn/end':
        if (!openTurn)
          this.#fail('turn-balance', `turn ${event.data.turn} ends but no turn is open`)
        else if (event.data.turn !== openTurn.turn)
          this.#fail(
            'turn-balance',
            `turn/end names turn ${event.data.turn} but turn ${openTurn.turn} is open`,
          )
        if (step)
          this.#fail(
            'step-balance',
            `turn ends while step ${step.step} (opened at seq ${step.startSeq}) is still open`,
          )
        break
      case 'step/start':
        if (!openTurn)
          this.#fail('placement', 'a step may only start inside a turn (no turn is open)')
        else {
          if (event.data.turn !== openTurn.turn)
            this.#fail(
              'step-balance',
              `step/start names turn ${event.data.turn} but turn ${openTurn.turn} is open`,
            )
          if (event.data.step !== openTurn.lastStep + 1)
            this.#fail(
              'step-balance',
              `step ${event.data.step} starts, but steps count from 1 in each turn and the next is ${openTurn.lastStep + 1}`,
            )
        }
        if (step)
          this.#fail(
            'step-balance',
            `step ${event.data.step} starts while step ${step.step} (opened at seq ${step.startSeq}) is still open`,
          )
        break
      case 'step/end': {
        const open = this.#insideStep()
        if (open) {
          if (event.data.turn !== open.turn || event.data.step !== open.step)
            this.#fail(
              'step-balance',
              `step/end names turn ${event.data.turn} step ${event.data.step} but step ${open.step} of turn ${open.turn} is open`,
            )
          const missing = open.calls.slice(open.resultIndex).map((call) => call.id)
          if (missing.length > 0)
            this.#fail(
              'tool-pairing',
              `the step ends but tool call(s) ${missing.join(', ')} have no result`,
            )
        }
        break
      }
      case 'request/header': {
        const open = this.#insideStep()
        if (open && open.assistantSeq !== undefined)
          this.#fail(
            'placement',
            `the request header must come before the step's assistant message (seq ${open.assistantSeq})`,
          )
        break
      }
      case 'assistant/message': {
        const open = this.#insideStep()
        if (open && open.assistantSeq !== undefined)
          this.#fail(
            'placement',
            `a step holds at most one assistant message; this step has one at seq ${open.assistantSeq}`,
          )
        const ids = new Set<string>()
        for (const block of event.data.content ?? []) {
          if (block.type !== 'tool-call') continue
          if (ids.has(block.id))
            this.#fail('tool-pairing', `tool call id ${block.id} appears twice in one message`)
          ids.add(block.id)
        }
        break
      }
      case 'tool/call': {
        const open = this.#insideStep()
        if (!open) break
        const callId = event.data.callId
        const index = indexOfCall(open.calls, callId)
        if (open.assistantSeq === undefined)
          this.#fail(
            'tool-pairing',
            `tool/call ${callId} has no assistant message before it in its step`,
          )
        else if (index < 0)
          this.#fail(
            'tool-pairing',
            `tool/call ${callId} is not a call of the step's assistant message (seq ${open.assistantSeq})`,
          )
        else if (index < open.resultIndex)
          this.#fail('tool-pairing', `tool/call ${callId} comes after its own result`)
        else if (open.started.has(callId))
          this.#fail('tool-pairing', `tool/call ${callId} is logged twice`)
        else if (open.calls[index]?.name !== event.data.name)
          this.#fail(
            'tool-pairing',
            `tool/call ${callId} names tool ${JSON.stringify(event.data.name)} but the message called ${JSON.stringify(open.calls[index]?.name)}`,
          )
        break
      }
      case 'tool/result': {
        const open = this.#insideStep()
        if (!open) break
        const callId = event.data.callId
        const expected = open.calls[open.resultIndex]
        if (open.assistantSeq === undefined)
          this.#fail(
            'tool-pairing',
            `tool/result ${callId} has no assistant message before it in its step`,
          )
        else if (!expected)
          this.#fail(
            'tool-pairing',
            `tool/result ${callId} has no call waiting for a result (the message at seq ${open.assistantSeq} made ${open.calls.length} call(s), all answered)`,
          )
        else if (expected.id !== callId) {
          const known = indexOfCall(open.calls, callId) >= 0
          this.#fail(
            'tool-pairing',
            known
              ? `results must follow call order: expected the result of ${expected.id} before ${callId}`
              : `tool/result ${callId} answers no call of the message at seq ${open.assistantSeq}`,
          )
        } else if (expected.name !== event.data.name)
          this.#fail(
            'tool-pairing',
            `tool/result ${callId} names tool ${JSON.stringify(event.data.name)} but the call was to ${JSON.stringify(expected.name)}`,
          )
        break
      }
      case 'compaction': {
        this.#outsideStep('compaction')
        const kept = event.data.firstKeptSeq
        if (!Number.isInteger(kept) || kept < 0 || kept > seq)
          this.#fail(
            'compaction',
            `firstKeptSeq ${kept} must be a seq between 0 and the compaction's own seq ${seq}`,
          )
        else if (kept < seq && !isBoundary(this.#boundaries, kept))
          this.#fail(
            'compaction',
            `firstKeptSeq ${kept} must be the seq of a turn/start, a step/start, or a user or steering message outside a step, so no assistant message is cut from its tool results`,
          )
        break
      }
      default:
        assertNeverEvent(event)
    }
    return this.#out
  }

  /** Takes `event` in: the fold, and the seqs a compaction may keep from. */
  #advance(event: CoreEvent): void {
    this.#state = foldEvent(this.#state, event)
    if (
      event.type === 'user/message' ||
      event.type === 'steering/message' ||
      event.type === 'turn/start' ||
      event.type === 'step/start'
    )
      this.#markBoundary(event.seq)
  }

  #inspect(event: SessionEvent, takeIn: boolean): LogProblem[] {
    if (event.seq !== this.#nextSeq) {
      const problem: LogProblem = {
        seq: event.seq,
        rule: 'seq-contiguous',
        message: `seq ${event.seq} (${event.type}): seqs must be contiguous from 0; expected seq ${this.#nextSeq}`,
      }
      if (takeIn) this.#nextSeq = event.seq + 1
      return [problem]
    }
    if (!isCoreEvent(event)) {
      if (takeIn) this.#nextSeq++
      if (!this.#state.openTurn && !this.#outOfTurnExtensions.has(event.type)) {
        return [
          {
            seq: event.seq,
            rule: 'placement',
            message: `seq ${event.seq} (${event.type}): extension events must stand inside a turn unless their plugin allows them between turns`,
          },
        ]
      }
      return []
    }
    const problems = this.#problemsOf(event)
    if (takeIn) {
      this.#advance(event)
      this.#nextSeq++
    }
    return problems
  }
}

/**
 * A checker held for the life of the process, as `PROJECTION_SHAPES` holds a projector
 * (decision 0170): each field the constructor adds gives instances a new hidden class, which V8
 * holds only while an object has it. When the last session's checker was collected (as between
 * two opens of a long log), the optimised code of `record` and the checks it calls was discarded
 * for it and compiled again by the next open (decision 0182). Exported so that it is a module
 * binding: a constant nothing reads would live only while the module body runs.
 */
export const LOG_CHECKER_SHAPE: LogChecker = new IncrementalLogChecker({}, undefined)

function assertNeverEvent(event: never): never {
  throw new Error(`unhandled event type ${(event as { type: string }).type}`)
}
