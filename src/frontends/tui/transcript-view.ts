/**
 * The transcript viewport: the bottom of the transcript, or `scroll` lines above it. Only the
 * items that reach the screen are rendered, and each item's lines are kept until the item
 * changes (the view model replaces a changed item by a new object), so a frame costs what is
 * on screen, not the length of the session (bench B7).
 */
import type { TranscriptItem } from '../view/transcript-model.js'
import { itemLines } from './item-lines.js'
import { createStreamingMemo, type StreamingMemo } from './streaming-lines.js'
import type { Theme } from './theme.js'

type Cached = {
  readonly item: TranscriptItem
  readonly width: number
  readonly isExpanded: boolean
  readonly lines: readonly string[]
}

export class TranscriptView {
  /** Lines above the bottom the view is scrolled to (0: following the end). */
  private scroll = 0
  private readonly cache = new Map<string, Cached>()
  private readonly streaming = new Map<string, StreamingMemo>()
  /** Whether folded items (context, thinking, tool output) are shown in full. */
  isExpanded = false

  constructor(
    private readonly items: () => readonly TranscriptItem[],
    private readonly theme: Theme,
  ) {}

  /** Scrolls by `lines` (positive: back in history). Returns whether anything changed. */
  scrollBy(lines: number): boolean {
    const next = Math.max(0, this.scroll + lines)
    if (next === this.scroll) return false
    this.scroll = next
    return true
  }

  get isFollowing(): boolean {
    return this.scroll === 0
  }

  /** Forgets every cached item (a new session, or a theme change). */
  reset(): void {
    this.cache.clear()
    this.streaming.clear()
    this.scroll = 0
  }

  /** Exactly `height` lines: the transcript's end (or the scrolled-to part), padded at the top. */
  render(width: number, height: number): string[] {
    const items = this.items()
    const wanted = height + this.scroll
    const collected: (readonly string[])[] = []
    let count = 0
    let index = items.length - 1
    for (; index >= 0 && count < wanted; index--) {
      const lines = this.linesOf(items[index] as TranscriptItem, width)
      collected.push(lines)
      count += lines.length
    }
    // Scrolled past the beginning: stop at the first line.
    if (index < 0 && this.scroll > Math.max(0, count - height))
      this.scroll = Math.max(0, count - height)
    // The screen's lines, copied straight from the items' kept lines (no joined copy of them).
    const visible: string[] = []
    for (let pad = height - Math.min(height, count - this.scroll); pad > 0; pad--) visible.push('')
    const end = count - this.scroll
    const at = end - (height - visible.length)
    let offset = 0
    for (let item = collected.length - 1; item >= 0 && offset < end; item--) {
      const lines = collected[item] as readonly string[]
      for (let line = Math.max(0, at - offset); line < lines.length && offset + line < end; line++)
        visible.push(lines[line] as string)
      offset += lines.length
    }
    if (this.scroll > 0 && height > 0)
      visible[height - 1] = this.theme.dim(`  ↓ ${this.scroll} more lines (PageDown)`)
    return visible
  }

  private linesOf(item: TranscriptItem, width: number): readonly string[] {
    const cached = this.cache.get(item.key)
    if (
      cached !== undefined &&
      cached.item === item &&
      cached.width === width &&
      cached.isExpanded === this.isExpanded
    )
      return cached.lines
    let streaming: StreamingMemo | undefined
    if (item.kind === 'assistant' && item.isStreaming) {
      streaming = this.streaming.get(item.key) ?? createStreamingMemo()
      this.streaming.set(item.key, streaming)
    } else this.streaming.delete(item.key)
    const lines = itemLines(item, {
      width,
      isExpanded: this.isExpanded,
      theme: this.theme,
      ...(streaming === undefined ? {} : { streaming }),
    })
    this.cache.set(item.key, { item, width, isExpanded: this.isExpanded, lines })
    return lines
  }
}
