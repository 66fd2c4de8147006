/**
 * The objects held for the life of the process so that hidden classes outlive every session
 * (decision 0182). In a file of its own: a test that gave a field another kind of value (a seq
 * past the small integers, say) would retire the held class in this process, which no session
 * does.
 */
import { describe, expect, it } from 'vitest'
import {
  createLogChecker,
  EMPTY_LOG_STATE,
  foldEvent,
  LOG_CHECKER_SHAPE,
  LOG_STATE_SHAPES,
} from '../../src/core/index.js'
import type { Backend } from '../../src/stores/backend.js'
import type { Checkpoint } from '../../src/stores/checkpoint.js'
import { createEventCheck, LOADED_EVENT_CHECK_SHAPE } from '../../src/stores/event-check.js'
import { FULL_LOAD_SHAPE, FullLoad } from '../../src/stores/log-loader.js'
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
import { haveSameClass } from '../support/v8-natives.js'

describe('the shapes held for the process (decisions 0182, 0183)', () => {
  it('a new checker has the class of LOG_CHECKER_SHAPE, with a checkpoint state or without', () => {
    const fresh = createLogChecker({ allowOpenTurn: true })
    expect(haveSameClass(fresh, LOG_CHECKER_SHAPE)).toBe(true)
    fresh.record(buildLog([turnStart(1)])[0]!)
    const resumed = createLogChecker({ eventsAllowedBetweenTurns: ['x'] }, fresh.snapshot())
    expect(haveSameClass(resumed, LOG_CHECKER_SHAPE)).toBe(true)
  })

  it('a new check of loaded events has the class of LOADED_EVENT_CHECK_SHAPE', () => {
    expect(haveSameClass(createEventCheck(), LOADED_EVENT_CHECK_SHAPE)).toBe(true)
    const unchecked = createEventCheck(createLogChecker(), { checkData: false })
    expect(haveSameClass(unchecked, LOADED_EVENT_CHECK_SHAPE)).toBe(true)
  })

  it('a full load has the class of FULL_LOAD_SHAPE, whatever its options and progress (decision 0183)', () => {
    const text = {} as Backend
    const bytes = { checksumForm: 'bytes' } as Backend
    const checkpoint = { throughSeq: 4, ranges: [] } as unknown as Checkpoint
    const loads = [
      new FullLoad(text, 'a', {}),
      new FullLoad(bytes, 'b', { trusted: true, salvage: true }),
      new FullLoad(text, 'c', { throughSeq: 3 }),
      new FullLoad(bytes, 'd', { checkpoint, rangeCharacters: 1024 }),
    ]
    for (const load of loads) expect(haveSameClass(load, FULL_LOAD_SHAPE)).toBe(true)
    // What a load sets as it goes keeps the class.
    const [load] = loads
    load!.tornTail = { location: 'x', bytes: 3, position: 10 }
    load!.failure = new Error('bad record')
    load!.characters += 2_000_000
    load!.isCovered = true
    load!.check = createEventCheck(createLogChecker({ allowOpenTurn: true }))
    expect(haveSameClass(load, FULL_LOAD_SHAPE)).toBe(true)
  })

  it('every state the fold makes over a log has the class of one of LOG_STATE_SHAPES', () => {
    const log = buildLog([
      turnStart(1),
      user('hi'),
      stepStart(1, 1),
      assistant('', [{ id: 'c1' }, { id: 'c2' }]),
      toolCall('c1'),
      toolResult('c1'),
      toolCall('c2'),
      toolResult('c2'),
      stepEnd(1, 1),
      stepStart(1, 2),
      assistant('done'),
      stepEnd(1, 2),
      turnEnd(1),
    ])
    let state = EMPTY_LOG_STATE
    for (const event of log) {
      state = foldEvent(state, event)
      const held = [EMPTY_LOG_STATE, ...LOG_STATE_SHAPES]
      expect(held.some((shape) => haveSameClass(shape, state))).toBe(true)
      if (state.step)
        expect(LOG_STATE_SHAPES.some((shape) => haveSameClass(shape.step, state.step))).toBe(true)
      if (state.openTurn)
        expect(
          LOG_STATE_SHAPES.some((shape) => haveSameClass(shape.openTurn, state.openTurn)),
        ).toBe(true)
    }
  })
})
