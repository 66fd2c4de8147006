/**
 * The timer the write-behind sink holds for the process (decision 0187) has the hidden class of
 * the window timers it makes, pending, fired or cleared, so that class outlives every timer.
 */
import { describe, expect, it } from 'vitest'
import { TIMER_SHAPE } from '../../src/stores/write-behind.js'
import { haveSameClass } from '../support/v8-natives.js'

describe('TIMER_SHAPE', () => {
  it('has the class of a window timer, pending, fired and cleared', async () => {
    let resolve = () => {}
    const fired = new Promise<void>((resolveFired) => {
      resolve = resolveFired
    })
    const window = setTimeout(() => resolve(), 1)
    window.unref()
    expect(haveSameClass(window, TIMER_SHAPE)).toBe(true)
    await fired
    expect(haveSameClass(window, TIMER_SHAPE)).toBe(true)
    const cleared = setTimeout(() => {}, 1_000)
    cleared.unref()
    clearTimeout(cleared)
    expect(haveSameClass(cleared, TIMER_SHAPE)).toBe(true)
  })
})
