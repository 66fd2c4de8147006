/**
 * The lines of an assistant message while it streams, at a cost per delta that does not grow
 * with the message (bench B6, docs/decisions/0086). Only the tail of a long message can be on
 * screen, so only a tail is rendered (`⋮` above it). Within it, the text is cut where rendering
 * the part before the cut and the part after it apart gives the lines the whole gives:
 * - before the first line of a block that follows a blank line outside a code fence (Markdown
 *   draws one blank line between the two blocks; a list or HTML going on is not cut);
 * - inside a paragraph whose lines are all plain text (no block marker, no inline markup),
 *   before a plain line: such a paragraph renders line by line. Should a line then turn the
 *   paragraph into something else (a setext underline, a table's delimiter row), the cuts made
 *   in it are taken back.
 * The part before the last cut is rendered once and kept; each delta renders what follows it
 * (a line or two in prose). The finished message is rendered whole, once.
 */

/** Characters of a streaming message rendered (a few screens' worth). */
const STREAMING_TAIL = 8000

/** Where the tail's start moves in steps of this many characters, so the kept part stays. */
const TAIL_STEP = 4096

/** A line that is paragraph text and nothing else: no block marker, no inline markup. */
const PLAIN_LINE = /^[\p{L}\p{N}][^*_`~[\]<>\\|]*$/u
const ORDERED_ITEM = /^\d{1,9}[.)](\s|$)/
const LIST_ITEM = /^\s*([-+*]|\d{1,9}[.)])(\s|$)/
const FENCE = /^ {0,3}(`{3,}|~{3,})/
/** A link reference definition: it can turn text anywhere before it into a link. */
const DEFINITION = /^ {0,3}\[[^\]]+\]:/
/** A line that can make the paragraph above it a heading or a table (or the start of one). */
const UNDERLINE = /^[\s|:=-]*[-=][\s|:=-]*$/

type CutKind = 'block' | 'line'

/** What the view keeps per streaming message between frames (one per item). */
export type StreamingMemo = {
  width: number
  /** The tail of the text kept from its pieces (`window`), read without copying the rest. */
  readonly text: TextWindow
  /** Where the window started when the lines were rendered (a move renders the tail afresh). */
  offset: number
  /** Where the rendered tail starts in the window. */
  start: number
  /** The end of the text scanned for cuts (complete lines), and the text just before it. */
  scanned: number
  headTail: string
  /** The end of the rendered part: `lines` are the text [start, cut). */
  cut: number
  /** Whether the text at `cut` starts a block (after a blank line) or goes on with a paragraph. */
  cutKind: CutKind
  lines: string[]
  /** Where the current block starts, and the count of `lines` rendered before it once known. */
  blockCut: number
  blockCutKind: CutKind
  linesBeforeBlock: number
  isInFence: boolean
  /** The fence that opened the code block (it closes with as many of its character or more). */
  fence: string
  /** Every line of the current block is plain paragraph text (it may be cut between lines). */
  isBlockPlain: boolean
  /** Lines of the current block scanned so far. */
  blockLines: number
  /** The last line scanned was blank, after a block. */
  isAfterBlank: boolean
  /** The current block has a list item (another item after a blank line goes on with it). */
  hasListItem: boolean
  /** The current block has HTML (drawn without a gap after it). */
  isHtml: boolean
  /** The blank line Markdown draws between two blocks at this width (padded to it). */
  blank: string
  /** A link reference definition was seen: nothing is cut any more (the tail renders whole). */
  hasDefinition: boolean
}

/** The window: the text from `offset`, appended to from the message's pieces. */
type TextWindow = {
  pieces: readonly string[] | undefined
  absorbed: number
  length: number
  offset: number
  window: string
}

/** A streaming message's text, and its pieces when the model keeps them. */
export type StreamingText = {
  readonly text: string
  readonly pieces?: readonly string[]
  readonly pieceCount?: number
}

export type StreamingRender = {
  readonly width: number
  /** Markdown lines of a piece of text, each fitting the width. */
  readonly markdown: (text: string) => string[]
  /** The text as it may reach the terminal. */
  readonly printable: (text: string) => string
  /** The line above a tail (`⋮`, styled). */
  readonly elision: string
}

/** An empty memo: the first frame renders the tail from scratch. */
export function createStreamingMemo(): StreamingMemo {
  return {
    width: -1,
    text: { pieces: undefined, absorbed: 0, length: 0, offset: 0, window: '' },
    offset: -1,
    start: -1,
    scanned: 0,
    headTail: '',
    cut: 0,
    cutKind: 'block',
    lines: [],
    blockCut: 0,
    blockCutKind: 'block',
    linesBeforeBlock: 0,
    isInFence: false,
    fence: '',
    isBlockPlain: true,
    blockLines: 0,
    isAfterBlank: false,
    hasListItem: false,
    isHtml: false,
    blank: '',
    hasDefinition: false,
  }
}

/** The lines of a message still streaming, reusing and updating `memo`. */
export function streamingLines(
  source: StreamingText,
  memo: StreamingMemo,
  render: StreamingRender,
): string[] {
  const { window: text, offset } = windowOf(source, memo.text)
  // From the window's start, the tail starts at a line's start.
  const start = offset === 0 ? 0 : text.indexOf('\n') + 1
  if (
    memo.width !== render.width ||
    memo.offset !== offset ||
    memo.start !== start ||
    text.length < memo.scanned ||
    !text.startsWith(memo.headTail, memo.scanned - memo.headTail.length)
  )
    reset(memo, render, offset, start)
  scan(text, memo, render)
  // The line being written may already be an underline of the paragraph above it.
  const writing = text.slice(memo.scanned)
  if (!memo.isInFence && DEFINITION.test(writing)) takeBackAllCuts(memo)
  else if (!memo.isInFence && !memo.isAfterBlank && UNDERLINE.test(writing)) takeBackLineCuts(memo)
  const lines: string[] = offset > 0 ? [render.elision, ...memo.lines] : [...memo.lines]
  const rest = render.printable(text.slice(memo.cut))
  if (rest.trim() !== '') {
    if (needsGap(memo)) lines.push(memo.blank)
    for (const line of render.markdown(rest)) lines.push(line)
  }
  return lines
}

/**
 * The tail of the text that can be rendered: from a multiple of TAIL_STEP, so it moves
 * seldom. With the model's pieces, only the pieces that arrived since the last frame are
 * read; without them, the text is read whole.
 */
function windowOf(source: StreamingText, kept: TextWindow): { window: string; offset: number } {
  const { pieces, pieceCount } = source
  if (pieces === undefined || pieceCount === undefined) {
    const offset = windowStart(source.text.length)
    Object.assign(kept, { pieces: undefined, absorbed: 0, length: 0, offset: 0, window: '' })
    return { window: offset === 0 ? source.text : source.text.slice(offset), offset }
  }
  if (kept.pieces !== pieces || kept.absorbed > pieceCount)
    Object.assign(kept, { pieces, absorbed: 0, length: 0, offset: 0, window: '' })
  if (kept.absorbed < pieceCount) {
    const added = pieces.slice(kept.absorbed, pieceCount).join('')
    kept.window += added
    kept.length += added.length
    kept.absorbed = pieceCount
  }
  const offset = windowStart(kept.length)
  if (offset > kept.offset) {
    kept.window = kept.window.slice(offset - kept.offset)
    kept.offset = offset
  }
  return { window: kept.window, offset }
}

function reset(memo: StreamingMemo, render: StreamingRender, offset: number, start: number): void {
  Object.assign(memo, createStreamingMemo(), {
    width: render.width,
    text: memo.text,
    offset,
    start,
    scanned: start,
    cut: start,
    blockCut: start,
    blank: render.markdown('a\n\nb')[1] ?? '',
  })
}

/** Scans the complete lines not scanned yet and renders up to the last cut found. */
function scan(text: string, memo: StreamingMemo, render: StreamingRender): void {
  let from = memo.scanned
  let cut = memo.cut
  let cutKind = memo.cutKind
  const cutAt = (at: number, kind: CutKind) => {
    if (memo.hasDefinition) return
    // The part up to a block's start is rendered apart, so the lines before it are known.
    if (kind === 'block' || cut === memo.blockCut) renderTo(text, memo, render, cut, cutKind)
    cut = at
    cutKind = kind
  }
  for (let end = text.indexOf('\n', from); end >= 0; end = text.indexOf('\n', from)) {
    const line = text.slice(from, end)
    const at = from
    from = end + 1
    if (memo.isInFence) {
      const close = FENCE.exec(line)?.[1]
      if (
        close !== undefined &&
        close[0] === memo.fence[0] &&
        close.length >= memo.fence.length &&
        line.trim() === close
      )
        memo.isInFence = false
      memo.blockLines++
      continue
    }
    if (line.trim() === '') {
      memo.isAfterBlank = memo.blockLines > 0
      continue
    }
    if (DEFINITION.test(line)) {
      renderTo(text, memo, render, cut, cutKind)
      takeBackAllCuts(memo)
      cut = memo.cut
      cutKind = memo.cutKind
    }
    if (memo.isAfterBlank) {
      memo.isAfterBlank = false
      const isNewBlock =
        !/^\s/.test(line) && !(memo.hasListItem && LIST_ITEM.test(line)) && !memo.isHtml
      if (isNewBlock) {
        cutAt(at, 'block')
        memo.blockCut = at
        memo.blockCutKind = 'block'
        memo.blockLines = 0
        memo.isBlockPlain = true
        memo.hasListItem = false
        memo.isHtml = false
      } else memo.isBlockPlain = false
    }
    if (line.startsWith('<')) memo.isHtml = true
    if (LIST_ITEM.test(line)) memo.hasListItem = true
    const fence = FENCE.exec(line)?.[1]
    if (fence !== undefined) {
      memo.isInFence = true
      memo.fence = fence
      memo.isBlockPlain = false
    } else if (UNDERLINE.test(line)) {
      renderTo(text, memo, render, cut, cutKind)
      takeBackLineCuts(memo)
      cut = memo.cut
      cutKind = memo.cutKind
    } else {
      const isPlain = PLAIN_LINE.test(line) && !ORDERED_ITEM.test(line) && !line.endsWith('  ')
      memo.isBlockPlain &&= isPlain
      if (memo.isBlockPlain && memo.blockLines > 0) cutAt(at, 'line')
    }
    memo.blockLines++
  }
  if (from > memo.scanned) {
    memo.scanned = from
    memo.headTail = text.slice(Math.max(memo.start, from - 64), from)
  }
  renderTo(text, memo, render, cut, cutKind)
}

/** Renders the text from `memo.cut` to `cut` and keeps its lines. */
function renderTo(
  text: string,
  memo: StreamingMemo,
  render: StreamingRender,
  cut: number,
  cutKind: CutKind,
): void {
  if (cut === memo.cut) return
  const part = render.printable(text.slice(memo.cut, cut))
  if (part.trim() !== '') {
    const partLines = render.markdown(part)
    if (partLines.length > 0 && needsGap(memo)) memo.lines.push(memo.blank)
    for (const line of partLines) memo.lines.push(line)
  }
  memo.cut = cut
  memo.cutKind = cutKind
  if (cut === memo.blockCut) memo.linesBeforeBlock = memo.lines.length
}

/** The current block is not plain after all: render it whole again, from its start. */
function takeBackLineCuts(memo: StreamingMemo): void {
  memo.isBlockPlain = false
  if (memo.cut <= memo.blockCut) return
  memo.lines.length = memo.linesBeforeBlock
  memo.cut = memo.blockCut
  memo.cutKind = memo.blockCutKind
}

/** A link reference definition: render the whole tail from now on, as one. */
function takeBackAllCuts(memo: StreamingMemo): void {
  memo.hasDefinition = true
  memo.isBlockPlain = false
  memo.lines.length = 0
  memo.cut = memo.start
  memo.cutKind = 'block'
  memo.blockCut = memo.start
  memo.blockCutKind = 'block'
  memo.linesBeforeBlock = 0
}

/** A new block after rendered lines that do not end blank is set apart by a blank line. */
function needsGap(memo: StreamingMemo): boolean {
  return memo.cutKind === 'block' && memo.lines.length > 0 && memo.lines.at(-1)?.trim() !== ''
}

/** Where the window of a text this long starts (0: all of it). */
function windowStart(length: number): number {
  if (length <= STREAMING_TAIL) return 0
  return Math.floor((length - STREAMING_TAIL) / TAIL_STEP) * TAIL_STEP
}
