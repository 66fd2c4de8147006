/**
 * A message streaming in renders, at every delta, the lines the whole text so far renders
 * (bench B6 made the work per delta small: the part before the last safe cut is kept), and a
 * long one shows its tail.
 */
import { Markdown } from '@mariozechner/pi-tui'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { clip, printable } from '../../../src/frontends/tui/item-lines.js'
import {
  createStreamingMemo,
  type StreamingRender,
  streamingLines,
} from '../../../src/frontends/tui/streaming-lines.js'
import { createTheme } from '../../../src/frontends/tui/theme.js'

const theme = createTheme(true)
const WIDTH = 50
let renders = 0
const render: StreamingRender = {
  width: WIDTH,
  markdown: (text) => {
    renders += text.length
    return new Markdown(text, 0, 0, theme.markdown).render(WIDTH).map((line) => clip(line, WIDTH))
  },
  printable,
  elision: '⋮',
}
const whole = (text: string) => render.markdown(printable(text))

/** Lines a model writes: prose, blank lines, headings, lists, code fences, inline markup. */
const line = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('Plain words here', 'and more of them', 'Zwölf Äpfel 3'),
  },
  { weight: 3, arbitrary: fc.constant('') },
  fc.constantFrom('# Heading', '- item one', '1. first', '> quoted', '```', 'with **bold', 'text`'),
  fc.constantFrom('a long line of prose that wraps at fifty columns of the terminal width ok'),
  fc.constantFrom('tab\there', 'escape \u001b[31mred\u001b[0m'),
)

describe('streaming lines', () => {
  it('render at every delta what the whole text so far renders', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }),
        (lines, steps) => {
          const text = lines.join('\n')
          // Fed as the model feeds it (pieces) and as text alone.
          const fromPieces = createStreamingMemo()
          const fromText = createStreamingMemo()
          const pieces: string[] = []
          for (let at = 0, step = 0; at < text.length; step++) {
            const next = Math.min(text.length, at + (steps[step % steps.length] as number))
            pieces.push(text.slice(at, next))
            at = next
            const sofar = text.slice(0, at)
            const expected = whole(sofar)
            const pieceCount = pieces.length
            expect(streamingLines({ text: sofar, pieces, pieceCount }, fromPieces, render)).toEqual(
              expected,
            )
            expect(streamingLines({ text: sofar }, fromText, render)).toEqual(expected)
          }
        },
      ),
      { numRuns: 150 },
    )
  })

  it('renders each delta of plain prose in work that does not grow with the message', () => {
    const memo = createStreamingMemo()
    const pieces: string[] = []
    const costs: number[] = []
    for (let index = 0; index < 600; index++) {
      pieces.push(index % 12 === 11 ? 'word\n' : 'word ')
      renders = 0
      streamingLines({ text: pieces.join(''), pieces, pieceCount: pieces.length }, memo, render)
      costs.push(renders)
    }
    // Characters rendered per delta: at most the last two lines, however long the message.
    expect(Math.max(...costs.slice(100))).toBeLessThan(200)
  })

  it('starts over when the text is replaced (a retried request streams afresh)', () => {
    const memo = createStreamingMemo()
    streamingLines({ text: 'first line\nsecond line\nthird' }, memo, render)
    expect(streamingLines({ text: 'other\nlines\nnow' }, memo, render)).toEqual(
      whole('other\nlines\nnow'),
    )
  })

  it('shows the tail of a long message under an elision mark', () => {
    const memo = createStreamingMemo()
    const text = Array.from({ length: 2000 }, (_, index) => `line ${index}`).join('\n')
    const lines = streamingLines({ text }, memo, render)
    expect(lines[0]).toBe('⋮')
    expect(lines.at(-1)?.trim()).toBe('line 1999')
    expect(lines.length).toBeLessThan(2000)
  })
})
