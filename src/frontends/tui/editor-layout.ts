/**
 * The editor's text laid out in lines of the editor's width, as pi-tui's `Editor.layoutText`
 * does it. A long line's word wrap is kept between keystrokes and only the part from the chunk
 * the edit reached is wrapped again, so a keystroke costs about the editor's width, not the
 * length of the line being typed (bench B7, docs/decisions/0087).
 */
import { type TextChunk, wordWrapLine } from '@mariozechner/pi-tui/dist/components/editor.js'
import { visibleWidth } from '@mariozechner/pi-tui/dist/utils.js'

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

/** The editor's grapheme segmentation (pi-tui's, paste markers kept whole). */
export type Segment = (text: string) => Iterable<Grapheme>

type Wrap = {
  readonly line: string
  readonly width: number
  readonly chunks: readonly TextChunk[]
  /** No grapheme wider than `width`: every chunk starts on a grapheme (see `rewrap`). */
  readonly isRestartable: boolean
}

/**
 * pi-tui's word wrap of one logical line (`wordWrapLine`), kept per logical line between calls.
 *
 * Why a wrap can restart: `wordWrapLine` is greedy. The start of chunk k is decided while it
 * reads a grapheme of chunk k (the one that overflows, looking one grapheme ahead), so it
 * depends only on the text before chunk k ends; and once decided, wrapping the rest of the
 * line alone from that start gives the chunks the whole line gives (nothing before the start
 * carries over: no break opportunity lies between the start and the grapheme that decided it,
 * and a grapheme boundary is one in the rest of the line too). So when an edit leaves the text
 * before the end of chunk k as it was, chunks before k are kept and the line is wrapped again
 * from the start of chunk k. Not when a grapheme is wider than the width (a paste marker in a
 * narrow editor): pi-tui splits it across chunks, so a chunk can start inside it. Property
 * tests check this against pi-tui after every edit (test/frontends/tui/editor-layout.test.ts).
 */
export class WrapMemo {
  private wraps: (Wrap | undefined)[] = []
  /** Characters given to `wordWrapLine` since the memo was made: a counter for tests and B7. */
  charactersWrapped = 0

  /** The chunks of `line` at row `row` of the editor's text, segmented with `segment`. */
  wrap(row: number, line: string, width: number, segment: Segment): readonly TextChunk[] {
    const previous = this.wraps[row]
    let wrap: Wrap
    if (previous !== undefined && previous.width === width && previous.line === line)
      wrap = previous
    else {
      const restartable = previous?.width === width && previous.isRestartable ? previous : undefined
      wrap = this.rewrap(restartable, line, width, segment)
    }
    this.wraps[row] = wrap
    return wrap.chunks
  }

  /** Forgets the rows from `rows` on (the text has fewer lines now). */
  truncate(rows: number): void {
    if (this.wraps.length > rows) this.wraps.length = rows
  }

  private rewrap(previous: Wrap | undefined, line: string, width: number, segment: Segment): Wrap {
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
    // What wordWrapLine does first, before the graphemes are listed: a line that fits is one
    // chunk. (With chunks kept, the line does not fit: its first break still overflows.)
    if (visibleWidth(rest) <= width) {
      const whole = { text: rest, startIndex: 0, endIndex: rest.length }
      return this.joined(previous, kept, start, [whole], true, line, width)
    }
    const graphemes = [...segment(rest)]
    let isRestartable = true
    for (const grapheme of graphemes)
      if ((grapheme.segment.length > 1 || width < 2) && visibleWidth(grapheme.segment) > width) {
        isRestartable = false
        break
      }
    const wrapped = wordWrapLine(rest, width, graphemes as unknown as Intl.SegmentData[])
    return this.joined(previous, kept, start, wrapped, isRestartable, line, width)
  }

  private joined(
    previous: Wrap | undefined,
    kept: number,
    start: number,
    wrapped: readonly TextChunk[],
    isRestartable: boolean,
    line: string,
    width: number,
  ): Wrap {
    if (start === 0) return { line, width, chunks: wrapped, isRestartable }
    const chunks = previous?.chunks.slice(0, kept) ?? []
    for (const chunk of wrapped)
      chunks.push({
        text: chunk.text,
        startIndex: chunk.startIndex + start,
        endIndex: chunk.endIndex + start,
      })
    return { line, width, chunks, isRestartable }
  }
}

/**
 * pi-tui's `Editor.layoutText`, with the lines' wraps from `memo`. pi-tui lays a line that fits
 * out as one line and wraps the others; a line that fits wraps to one chunk covering it, laid
 * out the same way, so every line goes through the memo.
 */
export function layoutText(options: {
  readonly lines: readonly string[]
  readonly cursorLine: number
  readonly cursorCol: number
  readonly width: number
  readonly memo: WrapMemo
  readonly segment: Segment
}): LayoutLine[] {
  const { lines, cursorLine, cursorCol, width, memo, segment } = options
  memo.truncate(lines.length)
  if (lines.length === 0 || (lines.length === 1 && lines[0] === ''))
    return [{ text: '', hasCursor: true, cursorPos: 0 }]
  const layout: LayoutLine[] = []
  for (let row = 0; row < lines.length; row++) {
    const line = lines[row] || ''
    const isCurrentLine = row === cursorLine
    const chunks = memo.wrap(row, line, width, segment)
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
