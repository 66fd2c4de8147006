/**
 * Output limits that keep the useful ends: the head of a long output says how it started, the
 * tail how it ended (errors, summaries), so the middle is what gets dropped.
 */

/** Cuts a single long line, saying how much was cut. */
export function truncateLine(line: string, maxChars: number): string {
  if (line.length <= maxChars) return line
  return `${line.slice(0, maxChars)}… [line truncated: ${line.length - maxChars} more characters]`
}

/**
 * Collects streamed text in bounded memory: the first `headChars` characters and the last
 * `tailChars`, counting what falls between.
 */
export class HeadTailBuffer {
  private head = ''
  private tail = ''
  private total = 0

  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
  ) {}

  /** Adds a chunk in arrival order. */
  push(chunk: string): void {
    this.total += chunk.length
    let rest = chunk
    if (this.head.length < this.headChars) {
      const room = this.headChars - this.head.length
      this.head += rest.slice(0, room)
      rest = rest.slice(room)
    }
    if (rest.length === 0) return
    this.tail += rest
    // Trim lazily (at twice the size) so a stream of small chunks does not copy on every push.
    if (this.tail.length > this.tailChars * 2) this.tail = this.tail.slice(-this.tailChars)
  }

  /** Characters dropped between head and tail. */
  get omitted(): number {
    return Math.max(0, this.total - this.headChars - this.tailChars)
  }

  /** The text with a note in place of the dropped middle; `advice` tells the model what to do. */
  text(advice: string): string {
    const tail = this.tail.length > this.tailChars ? this.tail.slice(-this.tailChars) : this.tail
    if (this.omitted === 0) return this.head + tail
    return `${this.head}\n\n… [${this.omitted} characters omitted from the middle of the output; ${advice}] …\n\n${tail}`
  }
}
