/**
 * pi-tui's shared segmenter as `Intl.Segmenter` made it, for tests that compare the terminal
 * UI's drawing with pi-tui's own: the UI makes that segmenter list graphemes itself
 * (`speedUpPiTuiSegmenter`, docs/decisions/0088), so the reference runs without it.
 */
import { getSegmenter } from '@mariozechner/pi-tui/dist/utils.js'

/** Runs `draw` with pi-tui's segmenter unchanged, and puts the change back after. */
export function withIntlSegmenter<T>(draw: () => T): T {
  const shared = getSegmenter() as unknown as { segment?: unknown }
  const own = Object.getOwnPropertyDescriptor(shared, 'segment')
  if (own !== undefined) delete shared.segment
  try {
    return draw()
  } finally {
    if (own !== undefined) Object.defineProperty(shared, 'segment', own)
  }
}
