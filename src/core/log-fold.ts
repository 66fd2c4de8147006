/**
 * One fold of the log's turn/step/call structure (docs/spec.md §3.3): which turn and step are
 * open, which calls the open step's assistant message made, and which have started and been
 * answered. The invariant checker and crash repair both read the log through `foldEvent`, so
 * the structure is worked out once. Pure: a state is never changed, a new one is returned.
 */
import { type CoreEvent, isCoreEvent, type SessionEvent } from './events.js'
import type { AssistantBlock, ToolCallBlock } from './values.js'

export type OpenTurn = {
  readonly turn: number
  /** The seq of its `turn/start`. */
  readonly seq: number
  /** The number of the last step started in it (0 before the first). */
  readonly lastStep: number
}
export type OpenStep = {
  readonly turn: number
  readonly step: number
  readonly startSeq: number
  /** The seq of the step's assistant message, once logged. */
  readonly assistantSeq: number | undefined
  /** The calls that message made, in call order. */
  readonly calls: readonly ToolCallBlock[]
  /** How many results were logged: the index in `calls` of the next result expected. */
  readonly resultIndex: number
  /** Calls whose `tool/call` (start of execution) was logged. */
  readonly started: ReadonlySet<string>
}
export type LogState = {
  /** The number of the last turn started (0 if none). */
  readonly lastTurn: number
  readonly openTurn: OpenTurn | undefined
  readonly step: OpenStep | undefined
}

export const EMPTY_LOG_STATE: LogState = Object.freeze({
  lastTurn: 0,
  openTurn: undefined,
  step: undefined,
})

/**
 * A module function, not an arrow at the call: an arrow there is a new closure at every call,
 * and V8 keeps a closure's optimised code only while one made at that place is alive, so it was
 * compiled again after each full collection (decision 0187).
 */
function isToolCall(block: AssistantBlock): block is ToolCallBlock {
  return block.type === 'tool-call'
}

/**
 * The state after `event`. Extension events change nothing. A log that breaks the invariants
 * still folds (the checker reports each problem once and reads on): a `turn/end` leaves a step
 * open if one is, and a step outside a turn is still tracked.
 */
export function foldEvent(state: LogState, event: SessionEvent): LogState {
  if (!isCoreEvent(event)) return state
  return foldCoreEvent(state, event)
}

function foldCoreEvent(state: LogState, event: CoreEvent): LogState {
  const { step } = state
  switch (event.type) {
    case 'turn/start':
      return {
        lastTurn: event.data.turn,
        openTurn: { turn: event.data.turn, seq: event.seq, lastStep: 0 },
        step: state.step,
      }
    case 'turn/end':
      return { ...state, openTurn: undefined }
    case 'step/start':
      return {
        lastTurn: state.lastTurn,
        openTurn: state.openTurn && { ...state.openTurn, lastStep: event.data.step },
        step: {
          turn: event.data.turn,
          step: event.data.step,
          startSeq: event.seq,
          assistantSeq: undefined,
          calls: [],
          resultIndex: 0,
          started: new Set(),
        },
      }
    case 'step/end':
      return { ...state, step: undefined }
    case 'assistant/message':
      if (!step) return state
      return {
        ...state,
        step: {
          ...step,
          assistantSeq: event.seq,
          calls: (event.data.content ?? []).filter(isToolCall),
        },
      }
    case 'tool/call':
      if (!step) return state
      return { ...state, step: { ...step, started: new Set(step.started).add(event.data.callId) } }
    case 'tool/result':
      if (!step) return state
      return { ...state, step: { ...step, resultIndex: step.resultIndex + 1 } }
    case 'user/message':
    case 'steering/message':
    case 'request/header':
    case 'compaction':
      return state
    default:
      return unknownEvent(event)
  }
}

/** Folds `events` from `state` (default: the empty log). */
export function foldLog(events: Iterable<SessionEvent>, state = EMPTY_LOG_STATE): LogState {
  let folded = state
  for (const event of events) folded = foldEvent(folded, event)
  return folded
}

/**
 * States of every kind the fold makes, held while the process lives, as the checker itself is
 * (`LOG_CHECKER_SHAPE`): the fold makes them by spreading, which gives them hidden classes
 * nothing else holds, so when the last session's states were collected the optimised code of
 * the checks that read them was discarded and compiled again by the next open (decision 0182).
 * Exported so that it is a module binding.
 */
export const LOG_STATE_SHAPES: readonly LogState[] = foldSpecimens()

/** The states of a small log that opens and closes a turn, a step and one tool call. */
function foldSpecimens(): LogState[] {
  const call = { type: 'tool-call', id: 'c', name: 't', args: {} } as const
  const log: readonly (readonly [string, unknown])[] = [
    ['turn/start', { turn: 1, trigger: 'prompt' }],
    ['step/start', { turn: 1, step: 1 }],
    ['assistant/message', { id: 'a', content: [call], stopReason: 'tool-calls' }],
    ['tool/call', { callId: 'c', name: 't', args: {} }],
    ['tool/result', { callId: 'c', name: 't', content: [], isError: false }],
    ['step/end', { turn: 1, step: 1 }],
    ['turn/end', { turn: 1, reason: { kind: 'completed' } }],
  ]
  const states: LogState[] = []
  let state = EMPTY_LOG_STATE
  for (let seq = 0; seq < log.length; seq++) {
    const [type, data] = log[seq]!
    state = foldCoreEvent(state, { seq, time: 0, type, data } as CoreEvent)
    states.push(state)
  }
  return states
}

function unknownEvent(event: never): never {
  throw new Error(`log-fold: unhandled event type ${(event as { type: string }).type}`)
}
