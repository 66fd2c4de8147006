/**
 * Graphemes listed with `Intl.Segmenter` run only around characters that are not printable
 * ASCII (docs/decisions/0085, 0088): they must be the segmenter's, and pi-tui's measures and
 * wraps made with them the same as with the segmenter itself.
 */
import {
  getSegmenter,
  truncateToWidth,
  visibleWidth,
  wrapTextWithAnsi,
} from '@mariozechner/pi-tui/dist/utils.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { graphemesOf, speedUpPiTuiSegmenter } from '../../../src/frontends/tui/graphemes.js'
import { withIntlSegmenter } from './pi-tui-segmenter.js'

const intl = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/**
 * Characters of every grapheme-break class next to ASCII and runs of it: combining marks, a
 * prepended sign, regional indicators, joiners and modifiers, Hangul jamo, an Indic conjunct,
 * controls, a lone surrogate, and the escape that starts pi-tui's colour codes.
 */
const character = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', ' ', '1', '#', '*', '~', '[', ']', 'm', ';') },
  // Runs of printable ASCII long enough for the text to be cut into pieces there.
  { weight: 2, arbitrary: fc.constantFrom('lorem ipsum', 'abcdefgh', 'abcdefghi') },
  fc.constantFrom(
    '\u0301',
    '\u0600',
    '\u{1F1EB}',
    '\u{1F1F7}',
    '\u200d',
    '\u{1F468}',
    '\u{1F3FD}',
    '\ufe0f',
    '\u20e3',
    '\u1100',
    '\u1161',
    '\u11a8',
    '\u0915',
    '\u094d',
    '\u0937',
    '\u0903',
    '漢',
    'é',
    '\t',
    '\x7f',
    '\ud800',
    '\r',
    '\n',
    '\x1b',
    '\x1b[31m',
    '\x1b[0m',
  ),
)
const text = fc.array(character, { maxLength: 40 }).map((characters) => characters.join(''))

/** pi-tui caches the width of 512 strings that are not all printable ASCII: fills it anew. */
function forgetWidths(): void {
  for (let index = 0; index < 512; index++) visibleWidth(`\u00a0${index}`)
}

describe('graphemesOf', () => {
  it('lists graphemes as Intl.Segmenter does, running it only around non-ASCII text', () => {
    fc.assert(
      fc.property(text, (text) => {
        const expected = [...intl.segment(text)].map(({ segment, index, input }) => ({
          segment,
          index,
          input,
        }))
        expect(graphemesOf(text)).toEqual(expected)
      }),
      { numRuns: 5000 },
    )
  })

  it("makes pi-tui's shared segmenter list them, once, and pi-tui measure and wrap the same", () => {
    speedUpPiTuiSegmenter()
    const shared = getSegmenter()
    const installed = shared.segment
    expect(Object.hasOwn(shared, 'segment')).toBe(true)
    speedUpPiTuiSegmenter()
    expect(shared.segment).toBe(installed)
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 12 }), (text, width) => {
        expect([...shared.segment(text)]).toEqual([...intl.segment(text)])
        forgetWidths()
        const measured = {
          width: visibleWidth(text),
          wrapped: wrapTextWithAnsi(text, width),
          truncated: truncateToWidth(text, width),
        }
        forgetWidths()
        expect(measured).toEqual(
          withIntlSegmenter(() => ({
            width: visibleWidth(text),
            wrapped: wrapTextWithAnsi(text, width),
            truncated: truncateToWidth(text, width),
          })),
        )
      }),
      { numRuns: 300 },
    )
  })
})
