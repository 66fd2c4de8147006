/**
 * The one fold of the log (src/core/log-fold.ts) against the invariant checker: on random logs,
 * valid or cut at any point, the fold and the checker agree on the open turn and the last turn,
 * and closing the fold's open turn with crash repair always leaves a log the checker accepts.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  applyCrashRepair,
  checkLog,
  crashRepairOf,
  createLogChecker,
  createSession,
  EMPTY_LOG_STATE,
  foldEvent,
  foldLog,
  type SessionEvent,
} from '../../src/core/index.js'
import { validLog, validLogWithTurn } from '../support/arbitraries.js'
import {
  assistant,
  buildLog,
  stepStart,
  toolCall,
  toolResult,
  turnStart,
  user,
} from '../support/log-builder.js'

/** A random valid log cut after any event: a crashed log, or a live one mid-turn. */
const cutLog = fc
  .tuple(validLogWithTurn(), fc.nat())
  .map(([log, at]) => log.slice(0, (at % log.length) + 1))

describe('foldEvent', () => {
  it('agrees with the checker on the open turn and the last turn (property)', () => {
    fc.assert(
      fc.property(fc.oneof(validLog(), cutLog), (log) => {
        const checker = createLogChecker({ allowOpenTurn: true })
        let state = EMPTY_LOG_STATE
        for (const event of log) {
          expect(checker.record(event)).toEqual([])
          state = foldEvent(state, event)
          expect(state.openTurn?.turn).toBe(checker.openTurn)
          expect(state.lastTurn).toBe(checker.lastTurn)
        }
        expect(checkLog(log).length === 0).toBe(state.openTurn === undefined)
      }),
      { numRuns: 300 },
    )
  })

  it('crash repair of the folded state always gives a valid log (property)', () => {
    fc.assert(
      fc.property(cutLog, (log) => {
        const session = createSession()
        for (const event of log) session.append(event.type as never, event.data as never)
        const plan = crashRepairOf(session.residentEvents)
        expect(plan === undefined).toBe(foldLog(log).openTurn === undefined)
        if (plan) applyCrashRepair(session, plan)
        expect(checkLog(session.residentEvents)).toEqual([])
        expect(foldLog(session.residentEvents).openTurn).toBeUndefined()
      }),
      { numRuns: 300 },
    )
  })

  it('tracks the open step: calls made, started and answered', () => {
    const log = buildLog([
      turnStart(1),
      user('P'),
      stepStart(1, 1),
      assistant('', [{ id: 'c1' }, { id: 'c2' }, { id: 'c3' }]),
      toolCall('c1'),
      toolCall('c2'),
      toolResult('c1'),
    ])
    const state = foldLog(log)
    expect(state.openTurn).toEqual({ turn: 1, seq: 0, lastStep: 1 })
    expect(state.step).toMatchObject({ turn: 1, step: 1, startSeq: 2, assistantSeq: 3 })
    expect(state.step?.calls.map((call) => call.id)).toEqual(['c1', 'c2', 'c3'])
    expect(state.step?.resultIndex).toBe(1)
    expect([...(state.step?.started ?? [])]).toEqual(['c1', 'c2'])
    expect(crashRepairOf(log)?.results).toEqual([
      { callId: 'c2', code: 'outcome-unknown' },
      { callId: 'c3', code: 'interrupted' },
    ])
  })

  it('never changes the state it is given, and skips extension events', () => {
    const log = buildLog([turnStart(1), stepStart(1, 1)])
    const before = foldLog(log.slice(0, 1))
    const frozen = JSON.stringify(before)
    foldEvent(before, log[1] as SessionEvent)
    expect(JSON.stringify(before)).toBe(frozen)
    const extension: SessionEvent = { seq: 2, time: 0, type: 'x/y', data: {}, ignorable: true }
    expect(foldEvent(before, extension)).toBe(before)
  })
})
