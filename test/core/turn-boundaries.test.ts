/**
 * The turn-boundary rules as pure functions: what closes a crashed turn (docs/spec.md §9.3) and where
 * a fork cuts by default (docs/spec.md §9.4).
 */
import { describe, expect, it } from 'vitest'
import { defaultCut, openTurnStart, planCrashRepair } from '../../src/core/turn-boundaries.js'
import {
  assistant,
  buildLog,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'

const closed = [
  turnStart(1),
  user('p'),
  stepStart(1, 1),
  assistant('ok'),
  stepEnd(1, 1),
  turnEnd(1),
]

describe('crash repair', () => {
  it('plans nothing for a log with every turn closed', () => {
    expect(planCrashRepair(buildLog(closed))).toBeUndefined()
    expect(planCrashRepair(buildLog([...closed, user('X', 'plugin')]))).toBeUndefined()
    expect(planCrashRepair([])).toBeUndefined()
  })

  it('answers each unanswered call by whether it started, then closes step and turn', () => {
    const log = buildLog([
      ...closed,
      turnStart(2),
      user('go'),
      stepStart(2, 1),
      assistant('', [{ id: 'a' }, { id: 'b' }, { id: 'c' }]),
      toolCall('a'),
      toolResult('a'),
      toolCall('b'),
    ])
    const plan = planCrashRepair(log)!
    expect(plan.turn).toBe(2)
    expect(plan.results).toEqual([
      { callId: 'b', code: 'outcome-unknown' },
      { callId: 'c', code: 'interrupted' },
    ])
    expect(plan.appends.map(([type]) => type)).toEqual([
      'tool/result',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(plan.appends[2]).toEqual(['step/end', { turn: 2, step: 1 }])
    expect(plan.appends[3]).toEqual(['turn/end', { turn: 2, reason: { kind: 'interrupted' } }])
  })

  it('closes a step that crashed before its assistant message with step/end alone', () => {
    const plan = planCrashRepair(buildLog([turnStart(1), user('p'), stepStart(1, 1)]))!
    expect(plan.appends).toEqual([
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: { kind: 'interrupted' } }],
    ])
  })
})

describe('fork cuts', () => {
  it('defaults to the last event before an open turn, or the last event', () => {
    const log = buildLog([...closed, user('X', 'plugin'), turnStart(2), user('q')])
    expect(openTurnStart(log)).toBe(7)
    expect(defaultCut(log)).toBe(6)
    expect(defaultCut(buildLog(closed))).toBe(5)
    expect(defaultCut([])).toBe(-1)
  })

  it('sees a turn that closes later as open at a cut inside it', () => {
    const log = buildLog(closed)
    expect(openTurnStart(log, 3)).toBe(0)
    expect(openTurnStart(log, 5)).toBeUndefined()
  })
})
