/**
 * Graphemes of terminal text as `Intl.Segmenter` lists them, with the segmenter run only on the
 * pieces around characters that are not printable ASCII: it costs ~0.5 µs and ~110 bytes a
 * character, and pi-tui runs it over every line whose width it measures that is not all
 * printable ASCII — every line of a frame, since the renderer appends a reset to each
 * (docs/decisions/0085, 0087, 0088).
 */
import { getSegmenter } from '@mariozechner/pi-tui/dist/utils.js'

/** A grapheme as `Intl.Segmenter` lists one. */
export type Grapheme = { readonly segment: string; readonly index: number; readonly input: string }

/** The segmenter's own method, for the pieces (pi-tui's instance may have this module's). */
const intlSegment = Intl.Segmenter.prototype.segment
/** A grapheme segmenter of this module's own, as pi-tui makes its shared one. */
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

export const isPrintableAscii = (code: number) => code >= 0x20 && code <= 0x7e

/** Printable ASCII characters in a row worth cutting a piece for (each Intl call costs ~1 µs). */
const RUN = 8

/**
 * The end of the piece of `text` that starts at `at`: after the first character of the next run
 * of more than `RUN` printable ASCII characters, or the text's end. Between two printable ASCII
 * characters there is always a grapheme boundary (UAX #29: neither is CR, LF, a control,
 * Extend, ZWJ, SpacingMark, Prepend, a regional indicator or pictographic), and no rule looks
 * back across an ASCII character, so the text's graphemes are those of its pieces cut there.
 * Short runs stay in the piece: a call into the segmenter per few characters (text mixing
 * emoji or another script with short ASCII words) cost more than segmenting it whole.
 */
export function pieceEnd(text: string, at: number): number {
  const length = text.length
  // The start of the run of printable ASCII characters ending at `index`, or -1.
  let runStart = isPrintableAscii(text.charCodeAt(at)) ? at : -1
  for (let index = at + 1; index < length; index++) {
    if (!isPrintableAscii(text.charCodeAt(index))) runStart = -1
    else if (runStart === -1) runStart = index
    else if (index - runStart >= RUN) return runStart + 1
  }
  return length
}

/** The graphemes of a piece of text, from `Intl.Segmenter` itself. */
export function segmentPiece(text: string): Iterable<Intl.SegmentData> {
  return intlSegment.call(segmenter, text)
}

/**
 * The graphemes of `text` as `Intl.Segmenter` lists them: a printable ASCII character followed
 * by another one (or ending the text) is one; the pieces around the others (to the next long run
 * of printable ASCII, `pieceEnd`) go to the segmenter.
 * A property test checks this against the segmenter (test/frontends/tui/graphemes.test.ts).
 */
export function graphemesOf(text: string): Grapheme[] {
  const graphemes: Grapheme[] = []
  const length = text.length
  let at = 0
  while (at < length) {
    if (
      isPrintableAscii(text.charCodeAt(at)) &&
      (at + 1 === length || isPrintableAscii(text.charCodeAt(at + 1)))
    ) {
      graphemes.push({ segment: text[at] as string, index: at, input: text })
      at++
      continue
    }
    const end = pieceEnd(text, at)
    for (const { segment, index } of segmentPiece(text.slice(at, end)))
      graphemes.push({ segment, index: at + index, input: text })
    at = end
  }
  return graphemes
}

/**
 * Makes pi-tui's shared segmenter (`getSegmenter()`, which its `visibleWidth`, word wrap,
 * truncation and editor use) list graphemes with `graphemesOf`: the same graphemes, with the
 * segmenter run only around characters that are not printable ASCII. pi-tui measures every line
 * it draws that holds an escape sequence (all of them: its renderer appends a reset) by
 * segmenting it whole, ~75 µs for a line of 120 columns, so a keystroke that re-flows the
 * editor's 12 rows spent ~0.9 ms there (bench B7, docs/decisions/0088). pi-tui only iterates
 * what `segment` returns (pinned 0.73.1; no `containing`). Once per process; a segmenter that
 * is not a grapheme one is left alone.
 */
export function speedUpPiTuiSegmenter(): void {
  const shared = getSegmenter()
  if (Object.hasOwn(shared, 'segment')) return
  if (shared.resolvedOptions().granularity !== 'grapheme') return
  ;(shared as unknown as { segment: (text: string) => Iterable<Grapheme> }).segment = segmentText
}

/**
 * `graphemesOf`, or the segmenter's own list when the text is one piece (no run of more than
 * `RUN` printable ASCII characters: text in another script, or mixing emoji and short words),
 * which `graphemesOf` would copy for nothing.
 */
function segmentText(text: string): Iterable<Grapheme> {
  return text.length > 1 && pieceEnd(text, 0) === text.length
    ? segmentPiece(text)
    : graphemesOf(text)
}
