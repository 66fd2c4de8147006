/**
 * pi-tui's renderer with its frame pacing changed in one way: the first frame after a quiet
 * spell is drawn at once (`setImmediate`: after the input or the model delta that asked for it,
 * and after any others that arrived in the same turn of the event loop), not on a timer, which
 * Node clamps to at least 1 ms. Frames that follow within 16 ms still wait for the 16 ms to pass,
 * so there is at most one frame per 16 ms however fast deltas come (bench B6,
 * docs/decisions/0084). Forced redraws (`requestRender(true)`) keep pi-tui's own path.
 */
import { TUI } from '@mariozechner/pi-tui/dist/tui.js'

/** The shortest time between two frames: at most ~60 frames a second. */
export const FRAME_INTERVAL_MS = 16

/** pi-tui's frame itself (private in its typings, stable in the pinned 0.73.1). */
type Drawable = { doRender(): void }

export class PacedTUI extends TUI {
  private pendingFrame:
    | { readonly kind: 'now'; readonly handle: ReturnType<typeof setImmediate> }
    | { readonly kind: 'later'; readonly handle: ReturnType<typeof setTimeout> }
    | undefined
  private lastFrameAt = Number.NEGATIVE_INFINITY
  /** Frames drawn (forced ones included): a counter for tests and the bench. */
  frames = 0

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
