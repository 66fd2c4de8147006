/**
 * A long line's word wrap kept between keystrokes (docs/decisions/0087): after any edit, the
 * wrap redone from the chunk the edit reached is pi-tui's wrap of the whole new line.
 */
import { wordWrapLine } from '@mariozechner/pi-tui/dist/components/editor.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Segment, WrapMemo } from '../../../src/frontends/tui/editor-layout.js'
import { withIntlSegmenter } from './pi-tui-segmenter.js'

const intl = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
const segment: Segment = (text) => intl.segment(text)

/** pi-tui's wrap of the whole line, as its editor makes it, with `Intl.Segmenter` as it is. */
const whole = (text: string, width: number) =>
  withIntlSegmenter(() => wordWrapLine(text, width, [...intl.segment(text)]))

/**
 * Pieces of text where wrap points are dense and graphemes are of every kind: ASCII, spaces
 * (and a no-break space), combining marks, wide characters, emoji with modifiers and joiners,
 * and regional indicators alone or in flags (their pairing depends on what comes before); and
 * a lone combining mark and joiner, which an edit may put right after a chunk's last grapheme
 * (joining it to the one before: the grapheme before the edit changes).
 */
const piece = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'b', ' ', ' ', '-') },
  fc.constantFrom(
    'é',
    'e\u0301',
    '\u0301',
    '\u200d',
    '\u00a0',
    '漢',
    '字',
    '😀',
    '👍🏽',
    '👨‍👩‍👧',
    '🇫🇷',
    '🇫',
    '🇷',
  ),
)

/** Lines as pieces, so edits fall between code points, as the editor's do. */
const pieces = fc.array(piece, { minLength: 1, maxLength: 120 })

/** An edit: `remove` pieces at `at` replaced by `insert` (at clamped to the line). */
const edit = fc.record({
  at: fc.nat(),
  remove: fc.nat({ max: 4 }),
  insert: fc.array(piece, { maxLength: 4 }),
})

describe('WrapMemo', () => {
  it("wraps an edited line as pi-tui's wordWrapLine wraps the whole line", () => {
    fc.assert(
      fc.property(
        pieces,
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        // From 2 columns: at 1, pi-tui's own wrap recurses without end on a wide character.
        fc.integer({ min: 2, max: 14 }),
        (start, edits, width) => {
          const memo = new WrapMemo()
          let line = [...start]
          expect(memo.wrap(0, line.join(''), width, segment)).toEqual(whole(line.join(''), width))
          for (const change of edits) {
            const at = change.at % (line.length + 1)
            line = [...line.slice(0, at), ...change.insert, ...line.slice(at + change.remove)]
            const text = line.join('')
            expect(memo.wrap(0, text, width, segment)).toEqual(whole(text, width))
          }
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('wraps only the tail when text is added at the end', () => {
    for (const word of ['word ', 'café ', '漢字 ']) {
      const memo = new WrapMemo()
      let text = word.repeat(400)
      memo.wrap(0, text, 40, segment)
      const before = memo.charactersWrapped
      text += 'more'
      expect(memo.wrap(0, text, 40, segment)).toEqual(whole(text, 40))
      expect(memo.charactersWrapped - before).toBeLessThanOrEqual(2 * 40)
    }
  })

  it('wraps past an edit in the middle of a long line of prose only until the old breaks return', () => {
    // Prose: words of many lengths, so the wrap after the edit falls back onto the old one within
    // a few lines (a text of one word repeated would shift every line after the edit for good).
    const prose =
      'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. '
    for (const text of [prose.repeat(20), `café ${prose}`.repeat(20), `漢字 ${prose}`.repeat(20)])
      for (const inserted of ['x', 'xy ']) {
        const memo = new WrapMemo()
        memo.wrap(0, text, 40, segment)
        const before = memo.charactersWrapped
        const edited = `${text.slice(0, 50)}${inserted}${text.slice(50)}`
        expect(memo.wrap(0, edited, 40, segment)).toEqual(whole(edited, 40))
        expect(memo.charactersWrapped - before).toBeLessThanOrEqual(10 * 40)
      }
  })

  it('stops at the first chunk that starts where one started before, for an edit at the start', () => {
    // A character typed at the start of a long line whose first chunk has room for it: the
    // second chunk starts where it did, one character on, and the rest is the old wrap.
    const prose =
      'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. '
    for (const text of [`café ${prose}`.repeat(20), `漢字 ${prose}`.repeat(20)]) {
      const memo = new WrapMemo()
      memo.wrap(0, text, 40, segment)
      const before = memo.charactersWrapped
      const edited = `x${text}`
      expect(memo.wrap(0, edited, 40, segment)).toEqual(whole(edited, 40))
      expect(memo.charactersWrapped - before).toBeLessThanOrEqual(2 * 40)
    }
  })
})
