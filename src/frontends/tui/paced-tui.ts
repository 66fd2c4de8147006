/**
 * pi-tui's renderer with its frame pacing changed in one way: the first frame after a quiet
 * spell is drawn at once (`setImmediate`: after the input or the model delta that asked for it,
 * and after any others that arrived in the same turn of the event loop), not on a timer, which
 * Node clamps to at least 1 ms. Frames that follow within 16 ms still wait for the 16 ms to pass,
 * so there is at most one frame per 16 ms however fast deltas come (bench B6,
 * docs/decisions/0084). Forced redraws (`requestRender(true)`) keep pi-tui's own path.
 *
 * pi-tui's frame also passes over every line on screen (a reset appended to each, a search for
 * images in each) before it compares them with the last frame's. A line that is the same as the
 * one drawn at its row in the last frame is given that frame's result again, so the comparison
 * meets the same string and a keystroke's frame costs the lines it changed (bench B7,
 * docs/decisions/0087).
 */
import { TUI } from '@mariozechner/pi-tui/dist/tui.js'
import { speedUpPiTuiSegmenter } from './graphemes.js'

/** The shortest time between two frames: at most ~60 frames a second. */
export const FRAME_INTERVAL_MS = 16

/** pi-tui's frame and its per-line passes (private in its typings, stable in the pinned 0.73.1). */
type Drawable = {
  doRender(): void
  /** Appends the reset to each line (not to image lines), in place; returns `lines`. */
  applyLineResets(lines: string[]): string[]
  /** The ids of the kitty images drawn in `lines`. */
  collectKittyImageIds(lines: readonly string[]): Set<number>
}

export class PacedTUI extends TUI {
  private pendingFrame:
    | { readonly kind: 'now'; readonly handle: ReturnType<typeof setImmediate> }
    | { readonly kind: 'later'; readonly handle: ReturnType<typeof setTimeout> }
    | undefined
  private lastFrameAt = Number.NEGATIVE_INFINITY
  /** Frames drawn (forced ones included): a counter for tests and the bench. */
  frames = 0
  /** Lines given to pi-tui's per-line passes in the last frame, and what they made of them. */
  private readonly lastLines = new LinesMemo<string>()
  private readonly lastImages = new LinesMemo<readonly number[]>()
  /** Lines passed through pi-tui's line pass (not reused): a counter for tests and the bench. */
  linesReset = 0

  constructor(...args: ConstructorParameters<typeof TUI>) {
    super(...args)
    // pi-tui measures each changed line of a frame by segmenting it whole (0088).
    speedUpPiTuiSegmenter()
    const own = this as unknown as Drawable
    if (typeof own.applyLineResets !== 'function' || typeof own.collectKittyImageIds !== 'function')
      return
    const applyLineResets = own.applyLineResets.bind(this)
    const collectKittyImageIds = own.collectKittyImageIds.bind(this)
    own.applyLineResets = (lines) =>
      this.lastLines.map(lines, (changed) => {
        this.linesReset += changed.length
        return applyLineResets(changed)
      })
    own.collectKittyImageIds = (lines) => {
      const ids = new Set<number>()
      const perLine = this.lastImages.map(lines, (changed) =>
        changed.map((line) => [...collectKittyImageIds([line])]),
      )
      for (const found of perLine) for (const id of found) ids.add(id)
      return ids
    }
  }

  override requestRender(force = false): void {
    if (force) {
      this.cancelFrame()
      this.lastFrameAt = performance.now()
      this.frames++
      super.requestRender(true)
      return
    }
    if (this.pendingFrame !== undefined) return
    const wait = this.lastFrameAt + FRAME_INTERVAL_MS - performance.now()
    this.pendingFrame =
      wait <= 0
        ? { kind: 'now', handle: setImmediate(this.drawFrame) }
        : { kind: 'later', handle: setTimeout(this.drawFrame, Math.ceil(wait)) }
  }

  override stop(): void {
    this.cancelFrame()
    super.stop()
  }

  private readonly drawFrame = (): void => {
    // Timers fire on the loop's cached clock and truncate fractions of a millisecond, so one
    // can come early: wait out the rest rather than draw two frames within 16 ms.
    const wait = this.lastFrameAt + FRAME_INTERVAL_MS - performance.now()
    if (wait > 0) {
      this.pendingFrame = { kind: 'later', handle: setTimeout(this.drawFrame, Math.ceil(wait)) }
      return
    }
    this.pendingFrame = undefined
    this.lastFrameAt = performance.now()
    this.frames++
    ;(this as unknown as Drawable).doRender()
  }

  private cancelFrame(): void {
    const pending = this.pendingFrame
    if (pending === undefined) return
    if (pending.kind === 'now') clearImmediate(pending.handle)
    else clearTimeout(pending.handle)
    this.pendingFrame = undefined
  }
}

/**
 * A per-row memo of a pure function of a line: a row whose line is the one given at that row
 * last time gets last time's result (the same string, when the result is one); the other rows'
 * lines go to `compute` in one batch.
 */
class LinesMemo<Result> {
  private lines: readonly string[] = []
  private results: readonly Result[] = []

  /** The result of each of `lines`, in a new array; `lines` is kept, not copied. */
  map(lines: readonly string[], compute: (changed: string[]) => readonly Result[]): Result[] {
    const results = new Array<Result>(lines.length)
    const changed: string[] = []
    const rows: number[] = []
    for (let row = 0; row < lines.length; row++) {
      const line = lines[row] as string
      if (this.lines[row] === line) results[row] = this.results[row] as Result
      else {
        changed.push(line)
        rows.push(row)
      }
    }
    if (changed.length > 0) {
      const computed = compute(changed)
      for (let index = 0; index < rows.length; index++)
        results[rows[index] as number] = computed[index] as Result
    }
    this.lines = lines
    this.results = results
    return results
  }
}
