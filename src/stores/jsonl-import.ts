/**
 * Reading a JSONL export (header line, then one event per line) from chunks of text or bytes,
 * checked exactly like a stored log. Blank lines are ignored; the last line may lack its `\n`.
 */
import { RudderError, type SessionEvent, type SessionHeader } from '../core/index.js'
import type { BlobStore } from './blob-store.js'
import { decodeLine, resolveBlobs } from './codec.js'
import { createEventCheck, locate, parseHeader } from './event-check.js'
import type { JsonlSource } from './store.js'

async function* linesOf(source: JsonlSource): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let carry = ''
  for await (const chunk of source) {
    carry += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })
    let start = 0
    for (let end = carry.indexOf('\n'); end >= 0; end = carry.indexOf('\n', start)) {
      yield carry.slice(start, end)
      start = end + 1
    }
    carry = carry.slice(start)
  }
  carry += decoder.decode()
  if (carry !== '') yield carry
}

/**
 * Parses an export. Throws `LogCorruptError` naming the line, `FORMAT_TOO_NEW`, or
 * `UNKNOWN_EVENT_TYPE`, like opening a stored log would.
 */
export async function readJsonl(
  source: JsonlSource,
  blobs: BlobStore | undefined,
): Promise<{ header: SessionHeader; events: SessionEvent[] }> {
  const hint = 'fix or re-export the file'
  const check = createEventCheck()
  let header: SessionHeader | undefined
  const events: SessionEvent[] = []
  let number = 0
  for await (const text of linesOf(source)) {
    number++
    if (text.trim() === '') continue
    const location = `import line ${number}`
    if (!header) {
      header = parseHeader(text, location, undefined)
      continue
    }
    try {
      const line = decodeLine(text)
      if (line.blobs) await resolveBlobs(line, blobs, location, hint)
      events.push(check.accept(line))
    } catch (error) {
      throw locate(error, location, hint)
    }
  }
  if (!header)
    throw new RudderError(
      'INVALID_INPUT',
      'the JSONL to import is empty: an export starts with the session header line',
    )
  return { header, events }
}
