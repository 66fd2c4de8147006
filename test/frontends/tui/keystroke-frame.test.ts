/**
 * A keystroke's frame writes only the lines it changed, reusing the rest of the last frame's
 * work (docs/decisions/0087): whatever is reused, the terminal must show what a full redraw of
 * the same screen shows, cell by cell (text, colours, inverse cursor) and cursor position.
 */
import { type Component, type Terminal, TUI } from '@mariozechner/pi-tui'
import xterm from '@xterm/headless'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CachedEditor } from '../../../src/frontends/tui/cached-editor.js'
import { PacedTUI } from '../../../src/frontends/tui/paced-tui.js'
import { createTheme } from '../../../src/frontends/tui/theme.js'
import { fakeTerminal } from './fake-terminal.js'

const COLUMNS = 40
const ROWS = 12

/** A terminal that keeps what is written (no tty in the way). */
function recorder(): Terminal & { output: string } {
  const terminal = Object.assign(
    fakeTerminal({
      columns: COLUMNS,
      rows: ROWS,
      write: (data) => {
        terminal.output += data
      },
    }),
    { output: '' },
  )
  return terminal
}

/** What a person sees after `output`: each row's cells with their style, and the cursor. */
async function seen(output: string): Promise<string[]> {
  const terminal = new xterm.Terminal({ cols: COLUMNS, rows: ROWS, allowProposedApi: true })
  await new Promise<void>((resolveWrite) => terminal.write(output, resolveWrite))
  const buffer = terminal.buffer.active
  const rows: string[] = []
  for (let row = 0; row < ROWS; row++) {
    const line = buffer.getLine(buffer.viewportY + row)
    let cells = ''
    for (let column = 0; column < COLUMNS; column++) {
      const cell = line?.getCell(column)
      if (!cell) continue
      const style = `${cell.getFgColorMode()}:${cell.getFgColor()}:${cell.isInverse()}:${cell.isBold()}:${cell.isDim()}`
      cells += `${cell.getChars() || ' '}${style === '0:-1:0:0:0' ? '' : `{${style}}`}`
    }
    rows.push(cells)
  }
  rows.push(`cursor ${buffer.cursorX},${buffer.cursorY}`)
  terminal.dispose()
  return rows
}

/** The App's screen in small: transcript lines, the editor, a status line. */
function app() {
  const theme = createTheme(true)
  const terminal = recorder()
  const tui = new PacedTUI(terminal)
  const editor = new CachedEditor(tui, theme.editor)
  const transcript: string[] = []
  let status = 'idle'
  const root: Component = {
    render: (width) => {
      const bottom = [...editor.render(width), theme.dim(`status ${status}`)]
      const height = ROWS - bottom.length
      const shown = transcript.slice(-height)
      return [...Array.from({ length: height - shown.length }, () => ''), ...shown, ...bottom]
    },
    invalidate: () => {},
  }
  tui.addChild(root)
  tui.setFocus(editor)
  const frame = () => (tui as unknown as { doRender(): void }).doRender()
  return {
    theme,
    terminal,
    tui,
    editor,
    transcript,
    root,
    frame,
    setStatus: (s: string) => (status = s),
  }
}

/** The same screen drawn whole, on a fresh renderer, as a first frame. */
function fullRedraw(root: Component): string {
  const terminal = recorder()
  const tui = new TUI(terminal)
  const lines = root.render(COLUMNS)
  tui.addChild({ render: () => lines, invalidate: () => {} })
  ;(tui as unknown as { doRender(): void }).doRender()
  return terminal.output
}

type Step =
  | { readonly kind: 'key'; readonly data: string }
  | { readonly kind: 'line'; readonly text: string }
  | { readonly kind: 'status'; readonly text: string }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .constantFrom('a', 'b', ' ', 'x', '.', '\x7f', '\x1b[D', '\x1b[C', '\x1b\r', '\x17', 'é')
      .map((data) => ({ kind: 'key' as const, data })),
  },
  fc
    .constantFrom('plain answer', '\x1b[36mcoloured\x1b[39m text', 'wide 漢字', '')
    .map((text) => ({ kind: 'line' as const, text })),
  fc.constantFrom('idle', 'working').map((text) => ({ kind: 'status' as const, text })),
)

describe('a keystroke frame', () => {
  it('shows what a full redraw of the same screen shows, after every step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const screen = app()
        for (let index = 0; index < 30; index++) screen.transcript.push(`history line ${index}`)
        screen.frame()
        for (const next of steps) {
          if (next.kind === 'key') screen.editor.handleInput(next.data)
          else if (next.kind === 'line') screen.transcript.push(next.text)
          else screen.setStatus(next.text)
          screen.frame()
          expect(await seen(screen.terminal.output)).toEqual(await seen(fullRedraw(screen.root)))
        }
        // Every frame after the first was differential: the reuse was exercised.
        expect((screen.tui as unknown as { fullRedrawCount: number }).fullRedrawCount).toBe(1)
      }),
      { numRuns: 25 },
    )
  })

  it('passes only the lines a keystroke changed through the per-line pass', () => {
    const screen = app()
    for (let index = 0; index < 100_000; index++) screen.transcript.push(`history line ${index}`)
    screen.frame()
    const before = screen.tui.linesReset
    for (const data of 'typing a prompt') {
      screen.editor.handleInput(data)
      screen.frame()
    }
    // One edited line per key, not the screen's 12.
    expect(screen.tui.linesReset - before).toBe('typing a prompt'.length)
  })
})
