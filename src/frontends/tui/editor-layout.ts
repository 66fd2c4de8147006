/**
 * The editor's text laid out in lines of the editor's width, as pi-tui's `Editor.layoutText`
 * does it, for text that is printable ASCII but `[` (one grapheme and one column per character,
 * no paste markers). A long line's word wrap is kept between keystrokes and only the part from
 * the chunk the edit reached is wrapped again, so a keystroke costs about the editor's width,
 * not the length of the line being typed (bench B7, docs/decisions/0087).
 */
import { type TextChunk, wordWrapLine } from '@mariozechner/pi-tui/dist/components/editor.js'

/** Printable ASCII but `[` (paste markers start with it): one grapheme per character. */
export const SIMPLE_TEXT = /^[\x20-\x5a\x5c-\x7e]*$/

/** A grapheme as pi-tui's editor reads one from `Intl.Segmenter`. */
export type Grapheme = { readonly segment: string; readonly index: number; readonly input: string }

/** The graphemes of `text`, which must match `SIMPLE_TEXT`: one per character. */
export function graphemesOf(text: string): Grapheme[] {
  const graphemes: Grapheme[] = new Array(text.length)
  for (let index = 0; index < text.length; index++)
    graphemes[index] = { segment: text[index] as string, index, input: text }
  return graphemes
}

/** One line of the laid-out text, as pi-tui's editor draws it. */
export type LayoutLine = { text: string; hasCursor: boolean; cursorPos?: number }

type Wrap = { readonly line: string; readonly width: number; readonly chunks: readonly TextChunk[] }

/**
 * pi-tui's word wrap of one logical line (`wordWrapLine`), kept per logical line between calls.
 *
 * Why a wrap can restart: `wordWrapLine` is greedy. The start of chunk k is decided while it
 * reads a character of chunk k (the one that overflows, looking one character ahead), so it
 * depends only on the text before chunk k ends; and once decided, wrapping the rest of the
 * line alone from that start gives the chunks the whole line gives (nothing before the start
 * carries over: no break opportunity lies between the start and the character that decided
 * it). So when an edit leaves the text before the end of chunk k as it was, chunks before k
 * are kept and the line is wrapped again from the start of chunk k. A property test checks
 * this against pi-tui's editor after every key (test/frontends/tui/cached-editor.test.ts).
 */
export class WrapMemo {
  private wraps: (Wrap | undefined)[] = []
  /** Characters given to `wordWrapLine` since the memo was made: a counter for tests and B7. */
  charactersWrapped = 0

  /** The chunks of `line` (simple text wider than `width`) at row `row` of the editor's text. */
  wrap(row: number, line: string, width: number): readonly TextChunk[] {
    const previous = this.wraps[row]
    let chunks: readonly TextChunk[]
    if (previous !== undefined && previous.width === width && previous.line === line)
      chunks = previous.chunks
    else chunks = this.rewrap(previous?.width === width ? previous : undefined, line, width)
    this.wraps[row] = { line, width, chunks }
    return chunks
  }

  /** Forgets the rows from `rows` on (the text has fewer lines now). */
  truncate(rows: number): void {
    if (this.wraps.length > rows) this.wraps.length = rows
  }

  private rewrap(previous: Wrap | undefined, line: string, width: number): readonly TextChunk[] {
    let kept = 0
    if (previous !== undefined) {
      const same = commonPrefixLength(previous.line, line)
      // The last chunk that ends before the first changed character: its start stands.
      let ending = 0
      while (ending < previous.chunks.length && (previous.chunks[ending]?.endIndex ?? 0) <= same)
        ending++
      kept = Math.max(0, ending - 1)
    }
    const start = kept === 0 ? 0 : (previous?.chunks[kept]?.startIndex ?? 0)
    const rest = start === 0 ? line : line.slice(start)
    this.charactersWrapped += rest.length
    const wrapped = wordWrapLine(rest, width, graphemesOf(rest) as unknown as Intl.SegmentData[])
    if (start === 0) return wrapped
    const chunks = previous?.chunks.slice(0, kept) ?? []
    for (const chunk of wrapped)
      chunks.push({
        text: chunk.text,
        startIndex: chunk.startIndex + start,
        endIndex: chunk.endIndex + start,
      })
    return chunks
  }
}

/**
 * pi-tui's `Editor.layoutText` for `lines` that all match `SIMPLE_TEXT` (checked by the
 * caller), with the long lines' wraps from `memo`.
 */
export function layoutSimpleText(options: {
  readonly lines: readonly string[]
  readonly cursorLine: number
  readonly cursorCol: number
  readonly width: number
  readonly memo: WrapMemo
}): LayoutLine[] {
  const { lines, cursorLine, cursorCol, width, memo } = options
  memo.truncate(lines.length)
  if (lines.length === 0 || (lines.length === 1 && lines[0] === ''))
    return [{ text: '', hasCursor: true, cursorPos: 0 }]
  const layout: LayoutLine[] = []
  for (let row = 0; row < lines.length; row++) {
    const line = lines[row] || ''
    const isCurrentLine = row === cursorLine
    if (line.length <= width) {
      layout.push(
        isCurrentLine
          ? { text: line, hasCursor: true, cursorPos: cursorCol }
          : { text: line, hasCursor: false },
      )
      continue
    }
    const chunks = memo.wrap(row, line, width)
    for (let index = 0; index < chunks.length; index++) {
      const chunk = chunks[index] as TextChunk
      // The cursor's chunk, as pi-tui decides it: the last chunk takes a cursor at or past its
      // start; another takes it within [start, end), clamped to its text (trimmed whitespace).
      let hasCursor = false
      let cursorPos = 0
      if (isCurrentLine) {
        if (index === chunks.length - 1) {
          hasCursor = cursorCol >= chunk.startIndex
          cursorPos = cursorCol - chunk.startIndex
        } else {
          hasCursor = cursorCol >= chunk.startIndex && cursorCol < chunk.endIndex
          if (hasCursor) cursorPos = Math.min(cursorCol - chunk.startIndex, chunk.text.length)
        }
      }
      layout.push(
        hasCursor
          ? { text: chunk.text, hasCursor: true, cursorPos }
          : { text: chunk.text, hasCursor: false },
      )
    }
  }
  return layout
}

function commonPrefixLength(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  let index = 0
  while (index < length && a.charCodeAt(index) === b.charCodeAt(index)) index++
  return index
}
