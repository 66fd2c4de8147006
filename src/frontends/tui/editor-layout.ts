/**
 * The editor's text laid out in lines of the editor's width, as pi-tui's `Editor.layoutText`
 * does it. A long line's word wrap is kept between keystrokes and wrapped again only from the
 * chunk the edit reached until its breaks fall back onto the kept ones, so a keystroke costs
 * about the editor's width, not the length of the line being typed (bench B7,
 * docs/decisions/0087, 0088).
 */
import { type TextChunk, wordWrapLine } from '@mariozechner/pi-tui/dist/components/editor.js'
import { isWhitespaceChar, visibleWidth } from '@mariozechner/pi-tui/dist/utils.js'
import { type Grapheme, isPrintableAscii, pieceEnd, segmentPiece } from './graphemes.js'

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

  /**
   * The new wrap of `line`: the previous chunks that end before the edit are kept, and the line
   * is wrapped again from the start of the last of them, one chunk after another, until a chunk
   * starts, past the edit, where one started before (shifted by what the edit added): from there
   * the line's rest is the previous line's rest, which wraps as it did (both are restart
   * points), so the previous chunks are taken. Prose falls back onto the old breaks within a few
   * chunks; text that never does (one word repeated) is wrapped to its end, as pi-tui does.
   * Lines that may hold paste markers or escape sequences, or with a grapheme wider than the
   * width, are wrapped to their end with pi-tui's graphemes (`segment`).
   */
  private rewrap(previous: Wrap | undefined, line: string, width: number, segment: Segment): Wrap {
    // Searching the line also makes V8 flatten it (the editor builds it by concatenation), which
    // the character loops below need: on an unflattened string each read is a runtime call.
    const isPlain = !line.includes('[paste #') && !line.includes('\x1b')
    let kept = 0
    let same = 0
    if (previous !== undefined) {
      same = commonPrefixLength(previous.line, line)
      // The last chunk that ends before the first changed character: its start stands.
      let ending = 0
      while (ending < previous.chunks.length && (previous.chunks[ending]?.endIndex ?? 0) <= same)
        ending++
      kept = Math.max(0, ending - 1)
    }
    const chunks = previous?.chunks.slice(0, kept) ?? []
    const from = kept === 0 ? 0 : (previous?.chunks[kept]?.startIndex ?? 0)
    if (isPlain && width > 0) {
      let tail: Tail | undefined
      if (previous !== undefined) {
        const old = previous.line
        const suffix = commonSuffixLength(old, line, Math.min(old.length, line.length) - same)
        tail = {
          chunks: previous.chunks,
          editEnd: line.length - suffix,
          delta: line.length - old.length,
        }
      }
      const read = wrapPlain(line, from, width, chunks, tail)
      if (read >= 0) {
        this.charactersWrapped += read
        return { line, width, chunks, isRestartable: true }
      }
      // A grapheme wider than the width: pi-tui's wrap below splits it.
      chunks.length = kept
    }
    // The rest of the line from `from`, wrapped whole.
    const rest = from === 0 ? line : line.slice(from)
    this.charactersWrapped += rest.length
    // What wordWrapLine does first, before the graphemes are listed: a line that fits is one
    // chunk. (A longer one may fit too, with zero-width characters: wordWrapLine says so.)
    if (rest.length <= 2 * width && visibleWidth(rest) <= width) {
      pushShifted(chunks, [{ text: rest, startIndex: 0, endIndex: rest.length }], from)
      return { line, width, chunks, isRestartable: true }
    }
    const graphemes = [...segment(rest)]
    pushShifted(chunks, wrapGraphemes(rest, width, graphemes), from)
    return { line, width, chunks, isRestartable: fitsWidth(graphemes, width) }
  }
}

/** The previous wrap of an edited line, and where the edit ends in the new line. */
type Tail = {
  readonly chunks: readonly TextChunk[]
  /** Past this index the new line is the previous line's end, shifted by `delta`. */
  readonly editEnd: number
  readonly delta: number
}

/**
 * pi-tui's `wordWrapLine` (pinned 0.73.1) of `line` from `from` (a chunk start, or 0), for a
 * line with no paste marker and no escape sequence, with its chunks appended to `into`; the
 * same greedy wrap, reading the line one grapheme at a time without listing them: printable
 * ASCII a character at a time (width 1, whitespace if a space), the pieces around other
 * characters through `Intl.Segmenter` (cut as `graphemesOf` cuts them). With `tail`, it stops
 * at the first chunk starting at or past `tail.editEnd` where a previous chunk started (shifted
 * by `tail.delta`) and appends the previous chunks from there. Returns the characters read, or
 * -1 at a grapheme wider than `width` (pi-tui splits it across chunks; `into` is then partly
 * filled).
 *
 * The wrap opportunity pi-tui records after a whitespace grapheme followed by another one is
 * recorded here when that other one is read, with the same width: nothing happens between.
 * Starting at `from` with no opportunity is starting from a restart point (see `WrapMemo`).
 */
function wrapPlain(
  line: string,
  from: number,
  width: number,
  into: TextChunk[],
  tail: Tail | undefined,
): number {
  const length = line.length
  let currentWidth = 0
  let chunkStart = from
  let wrapOppIndex = -1
  let wrapOppWidth = 0
  let previousIsWhitespace = false
  // The graphemes of the piece being read (around a character that is not printable ASCII).
  let piece: Intl.SegmentData[] = []
  let inPiece = 0
  let at = from
  while (at < length) {
    const code = line.charCodeAt(at)
    let end: number
    let graphemeWidth: number
    let isWhitespace: boolean
    if (inPiece < piece.length) {
      const grapheme = (piece[inPiece++] as Intl.SegmentData).segment
      end = at + grapheme.length
      graphemeWidth = visibleWidth(grapheme)
      isWhitespace = isWhitespaceChar(grapheme)
    } else if (
      isPrintableAscii(code) &&
      (at + 1 === length || isPrintableAscii(line.charCodeAt(at + 1)))
    ) {
      end = at + 1
      graphemeWidth = 1
      isWhitespace = code === 0x20
    } else {
      // A piece: to the next long run of printable ASCII characters (see `pieceEnd`).
      piece = [...segmentPiece(line.slice(at, pieceEnd(line, at)))]
      inPiece = 0
      continue
    }
    if (graphemeWidth > width) return -1
    if (previousIsWhitespace && !isWhitespace) {
      wrapOppIndex = at
      wrapOppWidth = currentWidth
    }
    previousIsWhitespace = isWhitespace
    if (currentWidth + graphemeWidth > width) {
      let start = -1
      if (wrapOppIndex >= 0 && currentWidth - wrapOppWidth + graphemeWidth <= width) {
        start = wrapOppIndex
        currentWidth -= wrapOppWidth
      } else if (chunkStart < at) {
        start = at
        currentWidth = 0
      }
      wrapOppIndex = -1
      if (start >= 0) {
        into.push({ text: line.slice(chunkStart, start), startIndex: chunkStart, endIndex: start })
        chunkStart = start
        if (tail !== undefined && start >= tail.editEnd) {
          const index = chunkStartingAt(tail.chunks, start - tail.delta)
          if (index !== -1) {
            pushShifted(into, tail.chunks.slice(index), tail.delta)
            return end - from
          }
        }
      }
    }
    currentWidth += graphemeWidth
    at = end
  }
  into.push({ text: line.slice(chunkStart), startIndex: chunkStart, endIndex: length })
  return length - from
}

/** pi-tui's paste marker, one grapheme in its editor (`isPasteMarker` in pi-tui's editor.js). */
const PASTE_MARKER = /^\[paste #(\d+)( (\+\d+ lines|\d+ chars))?\]$/
const isPasteMarker = (segment: string) => segment.length >= 10 && PASTE_MARKER.test(segment)

/**
 * pi-tui's `wordWrapLine` (pinned 0.73.1) with the line's width summed from its graphemes'
 * widths: pi-tui measures the whole line first with `visibleWidth`, which for text that is not
 * all ASCII runs `Intl.Segmenter` over it again (~1 µs a character). The same greedy wrap
 * otherwise; property tests check it against pi-tui's after every edit.
 */
function wrapGraphemes(line: string, maxWidth: number, segments: readonly Grapheme[]): TextChunk[] {
  if (!line || maxWidth <= 0) return [{ text: '', startIndex: 0, endIndex: 0 }]
  const widths = segments.map((segment) => visibleWidth(segment.segment))
  let lineWidth = 0
  for (const width of widths) lineWidth += width
  if (lineWidth <= maxWidth) return [{ text: line, startIndex: 0, endIndex: line.length }]
  const chunks: TextChunk[] = []
  let currentWidth = 0
  let chunkStart = 0
  // A wrap opportunity: after the last whitespace before a non-whitespace grapheme.
  let wrapOppIndex = -1
  let wrapOppWidth = 0
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Grapheme
    const grapheme = segment.segment
    const graphemeWidth = widths[i] as number
    const charIndex = segment.index
    const isWhitespace = !isPasteMarker(grapheme) && isWhitespaceChar(grapheme)
    if (currentWidth + graphemeWidth > maxWidth) {
      if (wrapOppIndex >= 0 && currentWidth - wrapOppWidth + graphemeWidth <= maxWidth) {
        chunks.push({
          text: line.slice(chunkStart, wrapOppIndex),
          startIndex: chunkStart,
          endIndex: wrapOppIndex,
        })
        chunkStart = wrapOppIndex
        currentWidth -= wrapOppWidth
      } else if (chunkStart < charIndex) {
        chunks.push({
          text: line.slice(chunkStart, charIndex),
          startIndex: chunkStart,
          endIndex: charIndex,
        })
        chunkStart = charIndex
        currentWidth = 0
      }
      wrapOppIndex = -1
    }
    if (graphemeWidth > maxWidth) {
      // One grapheme wider than the line (a paste marker in a narrow editor): pi-tui splits it.
      const parts = wordWrapLine(grapheme, maxWidth)
      for (const part of parts.slice(0, -1))
        chunks.push({
          text: part.text,
          startIndex: charIndex + part.startIndex,
          endIndex: charIndex + part.endIndex,
        })
      const last = parts[parts.length - 1] as TextChunk
      chunkStart = charIndex + last.startIndex
      currentWidth = visibleWidth(last.text)
      wrapOppIndex = -1
      continue
    }
    currentWidth += graphemeWidth
    const next = segments[i + 1]
    if (
      isWhitespace &&
      next !== undefined &&
      (isPasteMarker(next.segment) || !isWhitespaceChar(next.segment))
    ) {
      wrapOppIndex = next.index
      wrapOppWidth = currentWidth
    }
  }
  chunks.push({ text: line.slice(chunkStart), startIndex: chunkStart, endIndex: line.length })
  return chunks
}

/** Appends `from` to `into`, their indices moved by `by`. */
function pushShifted(into: TextChunk[], from: readonly TextChunk[], by: number): void {
  for (const chunk of from)
    into.push(
      by === 0
        ? chunk
        : { text: chunk.text, startIndex: chunk.startIndex + by, endIndex: chunk.endIndex + by },
    )
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

/** Whether no grapheme is wider than `width` (a single UTF-16 unit is at most 2 columns). */
function fitsWidth(graphemes: readonly Grapheme[], width: number): boolean {
  for (const grapheme of graphemes)
    if ((grapheme.segment.length > 1 || width < 2) && visibleWidth(grapheme.segment) > width)
      return false
  return true
}

/** The index of the chunk starting at `start`, or -1 (chunks are in order). */
function chunkStartingAt(chunks: readonly TextChunk[], start: number): number {
  let low = 0
  let high = chunks.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    const at = (chunks[middle] as TextChunk).startIndex
    if (at === start) return middle
    if (at < start) low = middle + 1
    else high = middle - 1
  }
  return -1
}

/**
 * The length of the common end of `a` and `b`, at most `limit`, found by halving: each step
 * compares only the characters it adds, in one call into V8's own string code. (A loop over
 * characters in JavaScript ran interpreted the first time an edit met a long common end, ~1 ms
 * for 2,000 characters, bench B7.)
 */
function commonSuffixLength(a: string, b: string, limit: number): number {
  let low = 0
  let high = limit
  while (low < high) {
    const middle = (low + high + 1) >> 1
    if (a.endsWith(b.slice(b.length - middle, b.length - low), a.length - low)) low = middle
    else high = middle - 1
  }
  return low
}

/** The length of the common start of `a` and `b`, found as `commonSuffixLength` finds its. */
function commonPrefixLength(a: string, b: string): number {
  let low = 0
  let high = Math.min(a.length, b.length)
  while (low < high) {
    const middle = (low + high + 1) >> 1
    if (a.startsWith(b.slice(low, middle), low)) low = middle
    else high = middle - 1
  }
  return low
}
