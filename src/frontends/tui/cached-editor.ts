/**
 * pi-tui's editor, whose lines are kept between frames while nothing it draws has changed.
 * Every frame draws the editor, but most frames are a model delta or a tick of the status line:
 * laying the editor's text out again (grapheme segmentation, word wrap) cost more than the rest
 * of such a frame (bench B6, docs/decisions/0085). What the editor draws depends on its text,
 * cursor, scroll, focus, width, the terminal's height and its border colour; while completions
 * are shown it is drawn afresh every frame. Its graphemes are listed without `Intl.Segmenter`
 * where the text is printable ASCII (a keystroke's layout allocated ~0.8 KB per character of the
 * edited line through it, bench B7).
 *
 * A keystroke's own work is kept to about the editor's width, whatever the length of the line
 * being typed (bench B7, docs/decisions/0087): the text is laid out with each long line's word
 * wrap kept and redone only from the chunk the edit reached (`editor-layout.ts`),
 * and a printable character that no key binding takes goes straight to pi-tui's insertion,
 * past the ~30 key-binding checks pi-tui makes for every key.
 */
import { Editor } from '@mariozechner/pi-tui/dist/components/editor.js'
import { getKeybindings } from '@mariozechner/pi-tui/dist/keybindings.js'
import { isKittyProtocolActive, matchesKey } from '@mariozechner/pi-tui/dist/keys.js'
import { type LayoutLine, layoutText as layoutEditorText, WrapMemo } from './editor-layout.js'
import { type Grapheme, graphemesOf, speedUpPiTuiSegmenter } from './graphemes.js'

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
  readonly jumpMode?: unknown
  readonly isInPaste?: unknown
}

/** pi-tui's private methods this editor replaces or calls (pi-tui 0.73.1, pinned). */
type EditorMethods = {
  segment: (text: string) => Iterable<Grapheme>
  layoutText: (width: number) => LayoutLine[]
  insertCharacter: (character: string) => void
}

/** Everything the drawn lines depend on but the border colour (compared by identity). */
type DrawnKey = {
  readonly width: number
  readonly rows: number
  readonly focused: boolean
  readonly scrollOffset: number | undefined
  readonly paddingX: number | undefined
  readonly cursorLine: number
  readonly cursorCol: number
  /** A copy of the text's lines (pi-tui edits its array in place). */
  readonly text: readonly string[]
}

type Drawn = {
  readonly key: DrawnKey
  readonly borderColor: unknown
  readonly lines: readonly string[]
}

export class CachedEditor extends Editor {
  private drawn: Drawn | undefined
  private readonly wraps = new WrapMemo()
  /** Whether pi-tui's private methods are where this editor expects them. */
  private readonly isPatched: boolean

  constructor(...args: ConstructorParameters<typeof Editor>) {
    super(...args)
    // pi-tui's editor measures and segments its lines with its shared segmenter (0088).
    speedUpPiTuiSegmenter()
    const own = this as unknown as EditorMethods
    this.isPatched =
      typeof own.segment === 'function' &&
      typeof own.layoutText === 'function' &&
      typeof own.insertCharacter === 'function'
    if (!this.isPatched) return
    // pi-tui's private `segment` (each keystroke and each layout list the graphemes of the
    // edited line): `Intl.Segmenter` costs ~0.5 µs and ~110 bytes per character, so it runs
    // only around characters that are not printable ASCII. Text that may hold a paste marker
    // goes to pi-tui's, which keeps markers whole.
    const segment = own.segment.bind(this)
    own.segment = (text) => (text.includes('[paste #') ? segment(text) : graphemesOf(text))
    // pi-tui's private `layoutText`: the same lines, with long lines' wraps kept (0087).
    const layoutText = own.layoutText.bind(this)
    own.layoutText = (width) => {
      const state = (this as unknown as EditorState).state
      if (state === undefined || !Array.isArray(state.lines)) return layoutText(width)
      return layoutEditorText({
        lines: state.lines,
        cursorLine: state.cursorLine,
        cursorCol: state.cursorCol,
        width,
        memo: this.wraps,
        segment: own.segment,
      })
    }
  }

  /** Characters word-wrapped since the editor was made: a counter for tests and bench B7. */
  get charactersWrapped(): number {
    return this.wraps.charactersWrapped
  }

  override handleInput(data: string): void {
    const own = this as unknown as EditorState & EditorMethods
    // pi-tui would check every key binding, find none, and insert the character (0087).
    if (
      this.isPatched &&
      own.jumpMode === null &&
      own.isInPaste === false &&
      isPlainCharacter(data)
    )
      own.insertCharacter(data)
    else super.handleInput(data)
  }

  override render(width: number): string[] {
    const drawn = this.drawn
    if (drawn !== undefined && drawn.borderColor === this.borderColor) {
      const key = this.keyOf(width)
      if (key !== undefined && isSameKey(drawn.key, key)) return [...drawn.lines]
    }
    const lines = super.render(width)
    // The layout may move the scroll offset: the key after it is the one the next frame sees.
    const after = this.keyOf(width)
    this.drawn =
      after === undefined ? undefined : { key: after, borderColor: this.borderColor, lines }
    return [...lines]
  }

  /** Everything the lines depend on, or undefined when they must be drawn afresh. */
  private keyOf(width: number): DrawnKey | undefined {
    const own = this as unknown as EditorState
    const state = own.state
    // A pi-tui whose editor keeps its state otherwise: never reuse lines.
    if (state === undefined || !Array.isArray(state.lines)) return undefined
    if (own.autocompleteState) return undefined
    return {
      width,
      rows: this.tui.terminal.rows,
      focused: this.focused,
      scrollOffset: own.scrollOffset,
      paddingX: own.paddingX,
      cursorLine: state.cursorLine,
      cursorCol: state.cursorCol,
      text: [...state.lines],
    }
  }
}

function isSameKey(drawn: DrawnKey, now: DrawnKey): boolean {
  if (
    drawn.width !== now.width ||
    drawn.rows !== now.rows ||
    drawn.focused !== now.focused ||
    drawn.scrollOffset !== now.scrollOffset ||
    drawn.paddingX !== now.paddingX ||
    drawn.cursorLine !== now.cursorLine ||
    drawn.cursorCol !== now.cursorCol ||
    drawn.text.length !== now.text.length
  )
    return false
  for (let index = 0; index < now.text.length; index++)
    if (drawn.text[index] !== now.text[index]) return false
  return true
}

/**
 * Per key-binding set (pi-tui's global manager, its user bindings and the kitty protocol's
 * state), the printable ASCII characters that no binding takes.
 */
const plainCharacters = new WeakMap<
  object,
  {
    readonly userBindings: unknown
    readonly isKitty: boolean
    readonly known: Map<string, boolean>
  }
>()

/** The keys pi-tui's editor checks with `matchesKey` itself, beside its key bindings. */
const EDITOR_KEYS = ['shift+backspace', 'shift+delete', 'shift+space'] as const

/**
 * Whether `data` is one printable ASCII character that pi-tui's `Editor.handleInput` would
 * insert as it is: no key binding (of any component) and no key the editor checks itself
 * matches it. Worked out once per character and binding set.
 */
function isPlainCharacter(data: string): boolean {
  if (data.length !== 1) return false
  const code = data.charCodeAt(0)
  if (code < 0x20 || code > 0x7e) return false
  const manager = getKeybindings()
  const userBindings = (manager as unknown as { userBindings?: unknown }).userBindings
  const isKitty = isKittyProtocolActive()
  let memo = plainCharacters.get(manager)
  if (memo === undefined || memo.userBindings !== userBindings || memo.isKitty !== isKitty) {
    memo = { userBindings, isKitty, known: new Map() }
    plainCharacters.set(manager, memo)
  }
  let isPlain = memo.known.get(data)
  if (isPlain === undefined) {
    const keys = Object.values(manager.getResolvedBindings()).flatMap((bound) =>
      bound === undefined ? [] : Array.isArray(bound) ? bound : [bound],
    )
    isPlain = ![...keys, ...EDITOR_KEYS].some((key) => matchesKey(data, key))
    memo.known.set(data, isPlain)
  }
  return isPlain
}
