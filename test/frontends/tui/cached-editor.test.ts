/**
 * The editor the App draws keeps its lines between frames, lists ASCII graphemes itself, keeps
 * long lines' word wrap and inserts plain characters past the key-binding checks (bench B6, B7,
 * docs/decisions/0085, 0087, 0088): what it draws must stay what pi-tui's editor draws after every
 * key, pi-tui's with its segmenter as `Intl` made it.
 */
import {
  Editor,
  getKeybindings,
  KeybindingsManager,
  setKeybindings,
  type TUI,
  TUI_KEYBINDINGS,
} from '@mariozechner/pi-tui'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CachedEditor } from '../../../src/frontends/tui/cached-editor.js'
import { createTheme } from '../../../src/frontends/tui/theme.js'
import { withIntlSegmenter } from './pi-tui-segmenter.js'

const tui = { terminal: { rows: 30 }, requestRender: () => {} } as unknown as TUI
const theme = createTheme(true)

/** Keys a person types: text (ASCII and not), newlines, moves, deletes, a paste. */
const key = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'b', ' ', 'x', '.', '[', 'é', '漢', '😀') },
  fc.constantFrom('\x7f', '\x1b[D', '\x1b[C', '\x1b[A', '\x1b[B', '\x1b[H', '\x1b[F', '\x1b\r'),
  fc.constantFrom(
    '\x1b[200~pasted text\nover lines\x1b[201~',
    '\x1b[200~short\x1b[201~',
    // Over 10 lines: the editor shows a marker, `[paste #1 +13 lines]`, one grapheme that a
    // narrow editor splits across lines.
    `\x1b[200~${'pasted\n'.repeat(12)}end\x1b[201~`,
  ),
)

/**
 * Keys over printable ASCII text (the kept-wrap path): words of every length, runs of spaces,
 * edits in the middle (moves, word and line deletes, undo, yank) and new lines.
 */
const asciiKey = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('a', 'b', 'c', ' ', ' ', '-', '.', 'Z') },
  { weight: 2, arbitrary: fc.constantFrom('\x7f', '\x1b[D', '\x1b[C', '\x1b[3~') },
  fc.constantFrom(
    '\x1b[A',
    '\x1b[B',
    '\x1b[H',
    '\x1b[F',
    '\x1b\r',
    '\x17',
    '\x0b',
    '\x15',
    '\x1f',
    '\x19',
    '\x1bb',
    '\x1bf',
  ),
)

/** Draws `keys` into pi-tui's editor and the cached one, checking every frame is the same. */
function typeBoth(keys: readonly string[], widths: readonly number[]): void {
  const plain = new Editor(tui, theme.editor)
  const cached = new CachedEditor(tui, theme.editor)
  plain.focused = true
  cached.focused = true
  keys.forEach((data, index) => {
    withIntlSegmenter(() => plain.handleInput(data))
    cached.handleInput(data)
    const width = widths[index % widths.length] as number
    expect(cached.render(width)).toEqual(withIntlSegmenter(() => plain.render(width)))
    expect(cached.getText()).toBe(plain.getText())
  })
}

describe('CachedEditor', () => {
  it("keeps long lines' wrap and draws what pi-tui's editor draws after every key", () => {
    fc.assert(
      fc.property(
        fc.array(asciiKey, { minLength: 1, maxLength: 400 }),
        fc.array(fc.integer({ min: 3, max: 24 }), { minLength: 1, maxLength: 3 }),
        (keys, widths) => typeBoth(keys, widths),
      ),
      { numRuns: 80 },
    )
  })

  it('wraps again only from the chunk a keystroke at the end of a long line reached', () => {
    const cached = new CachedEditor(tui, theme.editor)
    cached.focused = true
    cached.setText('lorem ipsum dolor '.repeat(120))
    cached.render(60)
    const before = cached.charactersWrapped
    for (const data of 'sit amet') {
      cached.handleInput(data)
      cached.render(60)
    }
    // 8 keys at the end of a 2,168-character line: each wraps the last chunk or two again.
    expect(cached.charactersWrapped - before).toBeLessThan(8 * 2 * 60)
    const plain = new Editor(tui, theme.editor)
    plain.focused = true
    plain.setText(cached.getText())
    expect(cached.render(60)).toEqual(withIntlSegmenter(() => plain.render(60)))
  })

  it('wraps a paste marker wider than the editor as pi-tui does, around edits', () => {
    // `[paste #1 +13 lines]` is one grapheme: wider than the editor, pi-tui splits it across
    // lines, with no break inside it; text typed right after it must not find one there.
    const paste = `\x1b[200~${'pasted\n'.repeat(12)}end\x1b[201~`
    for (const width of [8, 10, 11, 12, 13, 14, 16])
      typeBoth([...'ab ', paste, ...'cdefghijkl mn', '\x7f', '\x7f', ...'op'], [width])
  })

  it('wraps a line again around an edit before a paste marker as pi-tui does', () => {
    // Edits near the start of a long line wrap a window past the edit; a marker further on,
    // where a window may end, must still be one grapheme.
    const paste = `\x1b[200~${'pasted\n'.repeat(12)}end\x1b[201~`
    const text = [...'ab ', ...'word '.repeat(10), paste, ...' and a tail of words after it']
    for (let width = 8; width <= 40; width += 2)
      for (const shift of [0, 3, 9])
        typeBoth([...text, '\x1b[H', ...Array(shift).fill('\x1b[C'), ...'xy z', '\x7f'], [width])
  })

  it('gives a printable character to the key binding that takes it', () => {
    const previous = getKeybindings()
    // A person's bindings: `x` moves to the line's start, `~` deletes the word before the cursor.
    setKeybindings(
      new KeybindingsManager(TUI_KEYBINDINGS, {
        'tui.editor.cursorLineStart': 'x',
        'tui.editor.deleteWordBackward': '~',
      }),
    )
    try {
      typeBoth([...'one two x', ...'three~', ...'four'], [30])
      const cached = new CachedEditor(tui, theme.editor)
      for (const data of 'abc x def~') cached.handleInput(data)
      // `x` went to the line's start, ` def` was typed there and `~` deleted `def`.
      expect(cached.getText()).toBe(' abc ')
    } finally {
      setKeybindings(previous)
    }
    // Back to the default bindings: `x` is typed again.
    const cached = new CachedEditor(tui, theme.editor)
    cached.handleInput('x')
    expect(cached.getText()).toBe('x')
  })

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
            withIntlSegmenter(() => plain.handleInput(data))
            cached.handleInput(data)
            const expected = withIntlSegmenter(() => plain.render(width))
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
