import { describe, expect, it } from 'vitest'
import { createLogChecker } from '../../src/core/index.js'
import type { DecodedLine } from '../../src/stores/codec.js'
import { createEventCheck } from '../../src/stores/event-check.js'
import { RecordProblem } from '../../src/stores/record-problem.js'
import { buildLog, turnStart, user } from '../support/log-builder.js'

const lines = (): DecodedLine[] =>
  buildLog([turnStart(1), user('hi')]).map((event) => ({ ...event }) as DecodedLine)

describe('the check of loaded events', () => {
  // A store makes one at every load; optimised code that calls `accept` holds that very
  // function, so checks must share it, not make a closure each (decision 0182).
  it('two checks share accept', () => {
    expect(createEventCheck().accept).toBe(createEventCheck().accept)
  })

  it('accepts valid lines in order and advances its own checker', () => {
    const checker = createLogChecker({ allowOpenTurn: true })
    const check = createEventCheck(checker)
    const other = createEventCheck()
    const [start, message] = lines()
    expect(check.accept(start!)).toBe(start)
    expect(check.accept(message!)).toBe(message)
    expect(check.checker).toBe(checker)
    expect(checker.openTurn).toBe(1)
    expect(other.checker.openTurn).toBeUndefined()
  })

  it('refuses data of the wrong shape, naming the field, unless data checks are off', () => {
    const [start] = lines()
    const bad = { ...start!, data: { turn: 'one', trigger: 'prompt' } } as DecodedLine
    const refusal = (() => {
      try {
        createEventCheck().accept(bad)
      } catch (error) {
        return error
      }
    })()
    expect(refusal).toBeInstanceOf(RecordProblem)
    expect((refusal as RecordProblem).code).toBe('LOG_CORRUPT')
    expect((refusal as RecordProblem).message).toMatch(/turn\/start data.*turn/)
    // Without the data check the invariants still run: a turn numbered 'one' is not turn 1.
    expect(() => createEventCheck(undefined, { checkData: false }).accept(bad)).toThrow(
      /turn-balance/,
    )
  })

  it('refuses an unknown type not marked ignorable, and takes one that is', () => {
    const [start, message] = lines()
    const check = createEventCheck()
    check.accept(start!)
    const unknown = { ...message!, type: 'plugin/thing', data: {} } as DecodedLine
    expect(() => check.accept(unknown)).toThrow(/unknown to this rudder/)
    const ignorable = { ...unknown, ignorable: true } as DecodedLine
    expect(
      createEventCheck(createLogChecker({ allowOpenTurn: true }, check.checker.snapshot())).accept(
        ignorable,
      ),
    ).toBe(ignorable)
  })
})
