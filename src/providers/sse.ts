/**
 * Reading a server-sent event stream (the WHATWG `text/event-stream` format) from a response
 * body, under a `ResponseGuard`: comments (`: OPENROUTER PROCESSING`, `: keep-alive`) are
 * skipped, an event longer than `MAX_EVENT_CHARS` ends the read, and an idle timeout cancels
 * the body. rudder reads the stream itself rather than through the SDKs' stream classes so it
 * sees what they hide: the `[DONE]` sentinel, usage beside an error, and the end of the body.
 */
import { type ResponseGuard, StreamLimitError, tooLargePart } from './stream-guard.js'

/** One dispatched event. */
export type ServerSentEvent = {
  /** The `event:` field, or `message` when the event named none. */
  readonly event: string
  /** The `data:` lines, joined with `\n`. */
  readonly data: string
}

/**
 * The longest one event (and the line it is being read from) may be, in characters. Far above
 * any real event; only a broken or hostile server sends more, and would otherwise fill memory.
 */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024

/**
 * Yields the events of `body` in order. Ends when the body ends; a last event is dispatched
 * without its closing blank line only if its last line was complete (a cut-off line is dropped,
 * as the format says). Throws what the body throws, the guard's `StreamLimitError` after an
 * idle timeout, or a `StreamLimitError` for an oversized event. Stopping iteration cancels the
 * body.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  guard: ResponseGuard,
  provider: string,
): AsyncGenerator<ServerSentEvent, void, undefined> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const lines = new LineSplitter()
  const event = new PendingEvent()
  let isDone = false
  guard.watch(() => {
    // Resolves the pending read as done; the loop then throws the guard's failure.
    reader.cancel().catch(() => {
      // The body is being torn down anyway; nothing more to report.
    })
  })
  try {
    for (;;) {
      const { value, done } = await readOrStall(reader, guard)
      if (done) break
      for (const line of lines.push(decoder.decode(value, { stream: true }))) {
        const dispatched = event.take(line)
        if (dispatched) yield dispatched
      }
      if (lines.pendingLength + event.size > MAX_EVENT_CHARS)
        throw new StreamLimitError(
          tooLargePart(`${provider} (one event of the stream)`, MAX_EVENT_CHARS),
        )
    }
    isDone = true
    for (const line of lines.push(decoder.decode())) {
      const dispatched = event.take(line)
      if (dispatched) yield dispatched
    }
    // The last event lacks its blank line: kept when its last line is whole.
    const last = lines.pendingLength === 0 ? event.take('') : undefined
    if (last) yield last
  } finally {
    guard.end()
    if (!isDone)
      reader.cancel().catch(() => {
        // Stopped early or failed: the connection is being closed; nothing to report.
      })
  }
}

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>

async function readOrStall(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  guard: ResponseGuard,
): Promise<ReadResult> {
  let result: ReadResult
  try {
    result = await reader.read()
  } catch (error) {
    throw guard.failure ?? error
  }
  if (guard.failure) throw guard.failure
  return result
}

/**
 * Splits text arriving in pieces into lines (ended by `\r\n`, `\n` or `\r`). Each piece is
 * scanned once and a partial line is kept as pieces until its end arrives, so a very long line
 * costs linear time.
 */
class LineSplitter {
  #pending: string[] = []
  /** Characters of the line not yet ended. */
  pendingLength = 0
  // A piece that ended with `\r` may be followed by a piece starting with the `\n` of `\r\n`.
  #isAfterCarriageReturn = false

  /** The lines `text` completes, in order. */
  push(text: string): string[] {
    const lines: string[] = []
    let start = this.#isAfterCarriageReturn && text.startsWith('\n') ? 1 : 0
    if (text !== '') this.#isAfterCarriageReturn = false
    const lineBreak = /\r\n|\r|\n/g
    lineBreak.lastIndex = start
    for (let match = lineBreak.exec(text); match; match = lineBreak.exec(text)) {
      const piece = text.slice(start, match.index)
      lines.push(this.#pending.length === 0 ? piece : this.#pending.join('') + piece)
      this.#pending = []
      this.pendingLength = 0
      start = match.index + match[0].length
      if (match[0] === '\r' && start === text.length) this.#isAfterCarriageReturn = true
    }
    if (start < text.length) {
      this.#pending.push(text.slice(start))
      this.pendingLength += text.length - start
    }
    return lines
  }
}

/** The fields of the event being read. */
class PendingEvent {
  #name = ''
  #data: string[] = []
  size = 0

  /** Takes one line; returns the event when the line is the blank line that dispatches it. */
  take(line: string): ServerSentEvent | undefined {
    if (line === '') return this.#dispatch()
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') {
      this.#data.push(value)
      this.size += value.length + 1
    } else if (field === 'event') this.#name = value
    // `id`, `retry` and unknown fields mean nothing to a model response.
    return undefined
  }

  #dispatch(): ServerSentEvent | undefined {
    const data = this.#data
    const name = this.#name
    this.#data = []
    this.#name = ''
    this.size = 0
    if (data.length === 0) return undefined
    return { event: name === '' ? 'message' : name, data: data.join('\n') }
  }
}
