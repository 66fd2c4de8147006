/**
 * The App's renderer (docs/decisions/0084): the first frame after a quiet spell is drawn at
 * once, not on a timer; frames after it come at most one per 16 ms, however many are asked for.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FRAME_INTERVAL_MS, PacedTUI } from '../../../src/frontends/tui/paced-tui.js'
import { fakeTerminal } from './fake-terminal.js'

function screen() {
  const writes: string[] = []
  const terminal = fakeTerminal({ columns: 40, rows: 5, write: (data) => void writes.push(data) })
  const tui = new PacedTUI(terminal)
  let text = 'first'
  tui.addChild({ render: () => [text], invalidate: () => {} })
  return {
    tui,
    writes,
    show: (next: string) => {
      text = next
      tui.requestRender()
    },
  }
}

describe('PacedTUI', () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'],
    })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('draws the first frame after a quiet spell without waiting for a timer', () => {
    const { tui, writes, show } = screen()
    const start = performance.now()
    show('one')
    expect(tui.frames).toBe(0)
    // The frame is due on setImmediate: no time passes.
    vi.advanceTimersToNextTimer()
    expect(tui.frames).toBe(1)
    expect(performance.now()).toBe(start)
    expect(writes.join('')).toContain('one')
  })

  it('draws at most one frame per 16 ms, with the newest content', () => {
    const { tui, writes, show } = screen()
    show('one')
    vi.advanceTimersToNextTimer()
    for (const text of ['two', 'three', 'four']) show(text)
    vi.advanceTimersByTime(FRAME_INTERVAL_MS - 1)
    expect(tui.frames).toBe(1)
    vi.advanceTimersByTime(1)
    expect(tui.frames).toBe(2)
    expect(writes.at(-1)).toContain('four')
    expect(writes.join('')).not.toContain('two')
    // Quiet again: the next frame is drawn at once.
    vi.advanceTimersByTime(FRAME_INTERVAL_MS)
    show('five')
    vi.advanceTimersToNextTimer()
    expect(tui.frames).toBe(3)
  })

  it('draws nothing once stopped', () => {
    const { tui, show } = screen()
    show('one')
    tui.stop()
    vi.runAllTimers()
    expect(tui.frames).toBe(0)
  })
})
