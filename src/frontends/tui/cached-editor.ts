/**
 * pi-tui's editor, whose lines are kept between frames while nothing it draws has changed.
 * Every frame draws the editor, but most frames are a model delta or a tick of the status line:
 * laying the editor's text out again (grapheme segmentation, word wrap) cost more than the rest
 * of such a frame (bench B6, docs/decisions/0085). What the editor draws depends on its text,
 * cursor, scroll, focus, width, the terminal's height and its border colour; while completions
 * are shown it is drawn afresh every frame. Its graphemes are listed without `Intl.Segmenter`
 * when the text is printable ASCII (a keystroke's layout allocated ~0.8 KB per character of the
 * edited line through it, bench B7).
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

/** A grapheme as pi-tui's editor reads one from `Intl.Segmenter`. */
type Grapheme = { readonly segment: string; readonly index: number; readonly input: string }

/** Printable ASCII but `[` (paste markers start with it): one grapheme per character. */
const SIMPLE_TEXT = /^[\x20-\x5a\x5c-\x7e]*$/

type Segmenting = { segment: (text: string) => Iterable<Grapheme> }

type Drawn = {
  readonly key: string
  readonly borderColor: unknown
  readonly lines: readonly string[]
}

export class CachedEditor extends Editor {
  private drawn: Drawn | undefined

  constructor(...args: ConstructorParameters<typeof Editor>) {
    super(...args)
    // pi-tui's private `segment` (each keystroke and each layout list the graphemes of the
    // edited line): for printable ASCII each character is one, so they are listed without
    // `Intl.Segmenter`, which costs ~0.5 µs and ~110 bytes per character.
    const own = this as unknown as Segmenting
    if (typeof own.segment !== 'function') return
    const segment = own.segment.bind(this)
    own.segment = (text) => (SIMPLE_TEXT.test(text) ? graphemesOf(text) : segment(text))
  }

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

function graphemesOf(text: string): Grapheme[] {
  const graphemes: Grapheme[] = new Array(text.length)
  for (let index = 0; index < text.length; index++)
    graphemes[index] = { segment: text[index] as string, index, input: text }
  return graphemes
}
