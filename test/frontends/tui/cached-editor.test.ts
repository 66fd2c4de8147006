/**
 * The editor the App draws keeps its lines between frames and lists ASCII graphemes itself
 * (bench B6, B7): what it draws must stay what pi-tui's editor draws after every key.
 */
import { Editor, type TUI } from '@mariozechner/pi-tui'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CachedEditor } from '../../../src/frontends/tui/cached-editor.js'
import { createTheme } from '../../../src/frontends/tui/theme.js'

const tui = { terminal: { rows: 30 }, requestRender: () => {} } as unknown as TUI
const theme = createTheme(true)

/** Keys a person types: text (ASCII and not), newlines, moves, deletes, a paste. */
const key = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'b', ' ', 'x', '.', '[', 'é', '漢', '😀') },
  fc.constantFrom('\x7f', '\x1b[D', '\x1b[C', '\x1b[A', '\x1b[B', '\x1b[H', '\x1b[F', '\x1b\r'),
  fc.constantFrom('\x1b[200~pasted text\nover lines\x1b[201~', '\x1b[200~short\x1b[201~'),
)

describe('CachedEditor', () => {
  it("draws what pi-tui's editor draws, after every key, at any width", () => {
    fc.assert(
      fc.property(
        fc.array(key, { maxLength: 120 }),
        fc.integer({ min: 8, max: 90 }),
        (keys, width) => {
          const plain = new Editor(tui, theme.editor)
          const cached = new CachedEditor(tui, theme.editor)
          plain.focused = true
          cached.focused = true
          for (const data of keys) {
            plain.handleInput(data)
            cached.handleInput(data)
            const expected = plain.render(width)
            expect(cached.render(width)).toEqual(expected)
            // A frame with nothing changed draws the same from what it kept.
            expect(cached.render(width)).toEqual(expected)
            expect(cached.getText()).toBe(plain.getText())
          }
        },
      ),
      { numRuns: 60 },
    )
  })

  it('draws afresh when the focus or the border colour changes', () => {
    const cached = new CachedEditor(tui, theme.editor)
    cached.handleInput('h')
    const unfocused = cached.render(40)
    cached.focused = true
    expect(cached.render(40)).not.toEqual(unfocused)
    cached.borderColor = (text) => `<${text}>`
    expect(cached.render(40)[0]?.startsWith('<')).toBe(true)
  })
})
