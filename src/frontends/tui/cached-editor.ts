/**
 * pi-tui's editor, whose lines are kept between frames while nothing it draws has changed.
 * Every frame draws the editor, but most frames are a model delta or a tick of the status line:
 * laying the editor's text out again (grapheme segmentation, word wrap) cost more than the rest
 * of such a frame (bench B6, docs/decisions/0085). What the editor draws depends on its text,
 * cursor, scroll, focus, width, the terminal's height and its border colour; while completions
 * are shown it is drawn afresh every frame.
 */
import { Editor } from '@mariozechner/pi-tui/dist/components/editor.js'

/** What the editor keeps privately and draws from (pi-tui 0.73.1, pinned). */
type EditorState = {
  readonly state?: {
    readonly lines: readonly string[]
    readonly cursorLine: number
    readonly cursorCol: number
  }
  readonly scrollOffset?: number
  readonly autocompleteState?: unknown
  readonly paddingX?: number
}

type Drawn = {
  readonly key: string
  readonly borderColor: unknown
  readonly lines: readonly string[]
}

export class CachedEditor extends Editor {
  private drawn: Drawn | undefined

  override render(width: number): string[] {
    const key = this.keyOf(width)
    const drawn = this.drawn
    if (key !== undefined && drawn?.key === key && drawn.borderColor === this.borderColor)
      return [...drawn.lines]
    const lines = super.render(width)
    // The layout may move the scroll offset: the key after it is the one the next frame sees.
    const after = this.keyOf(width)
    this.drawn =
      after === undefined ? undefined : { key: after, borderColor: this.borderColor, lines }
    return [...lines]
  }

  /** Everything the lines depend on, or undefined when they must be drawn afresh. */
  private keyOf(width: number): string | undefined {
    const own = this as unknown as EditorState
    const state = own.state
    // A pi-tui whose editor keeps its state otherwise: never reuse lines.
    if (state === undefined || !Array.isArray(state.lines)) return undefined
    if (own.autocompleteState) return undefined
    return `${width}\u0000${this.tui.terminal.rows}\u0000${this.focused}\u0000${own.scrollOffset}\u0000${own.paddingX}\u0000${state.cursorLine}\u0000${state.cursorCol}\u0000${state.lines.join('\n')}`
  }
}
