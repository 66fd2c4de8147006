/**
 * A long line's word wrap kept between keystrokes (docs/decisions/0087): after any edit, the
 * wrap redone from the chunk the edit reached is pi-tui's wrap of the whole new line.
 */
import { wordWrapLine } from '@mariozechner/pi-tui/dist/components/editor.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { graphemesOf, WrapMemo } from '../../../src/frontends/tui/editor-layout.js'

/** Lines of short words and runs of spaces, where wrap points are dense and matter. */
const line = fc
  .array(fc.constantFrom('a', 'b', ' ', ' ', '-'), { minLength: 1, maxLength: 160 })
  .map((characters) => characters.join(''))

/** An edit: `remove` characters at `at` replaced by `insert` (at and remove clamped to the line). */
const edit = fc.record({
  at: fc.nat(),
  remove: fc.nat({ max: 4 }),
  insert: fc.array(fc.constantFrom('a', 'c', ' '), { maxLength: 4 }).map((c) => c.join('')),
})

function applied(text: string, change: { at: number; remove: number; insert: string }): string {
  const at = change.at % (text.length + 1)
  return text.slice(0, at) + change.insert + text.slice(at + change.remove)
}

describe('WrapMemo', () => {
  it("wraps an edited line as pi-tui's wordWrapLine wraps the whole line", () => {
    fc.assert(
      fc.property(
        line,
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 2, max: 14 }),
        (start, edits, width) => {
          const memo = new WrapMemo()
          let text = start
          for (const change of edits) {
            text = applied(text, change)
            if (text.length <= width) continue
            const whole = wordWrapLine(
              text,
              width,
              graphemesOf(text) as unknown as Intl.SegmentData[],
            )
            expect(memo.wrap(0, text, width)).toEqual(whole)
          }
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('wraps only the tail when text is added at the end', () => {
    const memo = new WrapMemo()
    let text = 'word '.repeat(400)
    memo.wrap(0, text, 40)
    const before = memo.charactersWrapped
    text += 'more'
    memo.wrap(0, text, 40)
    expect(memo.charactersWrapped - before).toBeLessThanOrEqual(2 * 40)
  })
})
