/**
 * The pending panel's rows (docs/decisions/0082): withdrawable rows are numbered in the order
 * `/withdraw n` counts them, a withdrawn input is shown as `[withdrawn]` (not as a failure),
 * and a selected row stays on screen even among the older, collapsed ones.
 */
import { describe, expect, it } from 'vitest'
import { pendingLines, withdrawableInputs } from '../../../src/frontends/tui/pending-panel.js'
import { createTheme } from '../../../src/frontends/tui/theme.js'
import { createInputsModel } from '../../../src/frontends/view/inputs-model.js'
import type { UserMessageData } from '../../../src/index.js'

const theme = createTheme(false)
const text = (value: string): UserMessageData => ({
  content: [{ type: 'text', text: value }],
  source: { kind: 'user' },
})

describe('pending panel', () => {
  it('numbers what can be withdrawn and shows a withdrawn input as such', () => {
    const inputs = createInputsModel()
    inputs.track({ id: 'a', kind: 'prompt', data: text('first') })
    inputs.track({ id: 'b', kind: 'prompt', data: text('second') })
    inputs.track({ id: 'c', kind: 'steering', data: text('steer it') })
    inputs.applyPending({
      queued: [
        { id: 'a', kind: 'prompt', data: text('first') },
        { id: 'b', kind: 'prompt', data: text('second') },
      ],
      staged: [{ id: 'c', kind: 'steering', data: text('steer it') }],
    })
    inputs.applyNotification({
      type: 'delivery/end',
      id: 'a',
      kind: 'prompt',
      result: { status: 'discarded', reason: 'withdrawn' },
    })
    expect(inputs.all.find((input) => input.id === 'a')).toMatchObject({
      status: 'discarded',
      reason: 'withdrawn',
    })
    expect(withdrawableInputs(inputs).map((input) => input.id)).toEqual(['b', 'c'])
    expect(pendingLines(inputs, 80, theme)).toEqual([
      '◦ prompt [withdrawn] first',
      '◦ 1. prompt [queued] second',
      '◦ 2. steer [staged] steer it',
    ])
    expect(pendingLines(inputs, 80, theme, 'c')).toEqual([
      '◦ prompt [withdrawn] first',
      '◦ 1. prompt [queued] second',
      '› 2. steer [staged] steer it',
      '  ↑/↓ choose · x/Del withdraw · Enter withdraw and edit · Esc back',
    ])
  })

  it('keeps the other discard reasons visible as discarded with the reason', () => {
    const inputs = createInputsModel()
    inputs.track({ id: 'a', kind: 'prompt', data: text('gone') })
    inputs.applyNotification({
      type: 'delivery/end',
      id: 'a',
      kind: 'prompt',
      result: { status: 'discarded', reason: 'disposed' },
    })
    expect(pendingLines(inputs, 80, theme)).toEqual(['◦ prompt [discarded: disposed] gone'])
  })

  it('scrolls the collapsed rows so the selected one is shown', () => {
    const inputs = createInputsModel()
    const ids = Array.from({ length: 9 }, (_, index) => `p${index}`)
    for (const id of ids) inputs.track({ id, kind: 'prompt', data: text(`prompt ${id}`) })
    const newest = pendingLines(inputs, 80, theme)
    expect(newest[0]).toBe('  … 3 earlier')
    expect(newest.at(-1)).toBe('◦ 9. prompt [queued] prompt p8')
    const oldest = pendingLines(inputs, 80, theme, 'p0')
    expect(oldest[0]).toBe('› 1. prompt [queued] prompt p0')
    expect(oldest.slice(-2)).toEqual([
      '  … 3 later',
      '  ↑/↓ choose · x/Del withdraw · Enter withdraw and edit · Esc back',
    ])
    expect(oldest).toHaveLength(8)
  })
})
