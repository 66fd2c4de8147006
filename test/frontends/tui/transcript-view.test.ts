/**
 * The transcript viewport renders only what reaches the screen (issue 12 item 3: history is
 * virtualised), keeps an item's lines until the item changes, and scrolls within bounds.
 */
import { describe, expect, it } from 'vitest'
import { createTheme } from '../../../src/frontends/tui/theme.js'
import { TranscriptView } from '../../../src/frontends/tui/transcript-view.js'
import type { TranscriptItem } from '../../../src/frontends/view/transcript-model.js'

function prompts(count: number): TranscriptItem[] {
  return Array.from({ length: count }, (_, index) => ({
    kind: 'user' as const,
    key: `seq:${index}`,
    seq: index,
    id: `m${index}`,
    role: 'prompt' as const,
    source: { kind: 'user' },
    label: 'user',
    text: `prompt ${index}`,
    images: 0,
  }))
}

const ESC = String.fromCharCode(27)

describe('TranscriptView', () => {
  it('renders only the newest items that fill the screen, however long the transcript', () => {
    const items = prompts(100_000)
    let reads = 0
    const view = new TranscriptView(
      () =>
        new Proxy(items, {
          get(target, key, receiver) {
            if (typeof key === 'string' && /^\d+$/.test(key)) reads++
            return Reflect.get(target, key, receiver)
          },
        }),
      createTheme(false),
    )
    const lines = view.render(60, 10)
    expect(lines).toHaveLength(10)
    expect(lines.at(-1)).toBe('› prompt 99999')
    // Each prompt is two lines (a blank, then the text): five items fill ten rows.
    expect(reads).toBeLessThanOrEqual(6)
  })

  it('scrolls back by lines and stops at the first line', () => {
    const view = new TranscriptView(() => prompts(3), createTheme(false))
    expect(view.render(40, 4).filter((line) => line.startsWith('›'))).toEqual([
      '› prompt 1',
      '› prompt 2',
    ])
    expect(view.scrollBy(100)).toBe(true)
    const top = view.render(40, 4)
    expect(top[1]).toBe('› prompt 0')
    expect(top.at(-1)).toContain('more lines')
    view.scrollBy(-1000)
    expect(view.isFollowing).toBe(true)
  })

  it('clips every line to the width', () => {
    const items = prompts(1).map((item) => ({ ...item, text: 'x'.repeat(500) }))
    const view = new TranscriptView(() => items, createTheme(true))
    for (const line of view.render(20, 40))
      expect(line.replace(new RegExp(`${ESC}\\[[\\d;]*m`, 'g'), '').length).toBeLessThanOrEqual(20)
  })
})
