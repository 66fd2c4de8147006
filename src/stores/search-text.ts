/**
 * What `search` looks at: the text of user, steering and assistant messages (tool output is
 * left out: it is large and mostly file contents), capped per message.
 */
import type { SessionEvent } from '../core/index.js'
import type { BlobStore } from './blob-store.js'
import { decodeTrustedLine, resolveBlobs } from './codec.js'

/** Only this much of each message's text is indexed or scanned. */
export const SEARCH_TEXT_LIMIT = 64 * 1024

/** The searchable text of an event, or undefined if it has none. */
export function searchableText(event: SessionEvent): string | undefined {
  if (
    event.type !== 'user/message' &&
    event.type !== 'steering/message' &&
    event.type !== 'assistant/message'
  )
    return undefined
  const content = (event.data as { content?: unknown }).content
  if (!Array.isArray(content)) return undefined
  const parts: string[] = []
  for (const block of content as { type?: unknown; text?: unknown }[])
    if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text)
  const text = parts.join('\n')
  return text === '' ? undefined : text.slice(0, SEARCH_TEXT_LIMIT)
}

/**
 * The searchable text of a stored line (codec.ts), with its blobs read back, or undefined.
 * Only message events have any; a line that spells none of "message" (literally or through a
 * `\u` escape) cannot be one, so most lines are not parsed. A line that does not parse, or
 * whose blob is missing, has nothing (or only what the line holds) to find: open reports it.
 */
export async function searchableTextOfLine(
  line: string,
  blobs: BlobStore | undefined,
  where: string,
): Promise<string | undefined> {
  if (!line.includes('message') && !line.includes('\\u')) return undefined
  let decoded: ReturnType<typeof decodeTrustedLine>
  try {
    decoded = decodeTrustedLine(line)
  } catch {
    // A damaged line: open() reports it; search just has nothing to find there.
    return undefined
  }
  if (decoded.blobs) {
    try {
      await resolveBlobs(decoded, blobs, where, 'search indexes the line as it is')
    } catch {
      // A missing blob: open() reports it; the text the line holds is still searchable.
    }
  }
  return searchableText(decoded as unknown as SessionEvent)
}

/** The words of a query: whitespace-separated, empty ones dropped. */
export function queryWords(text: string): string[] {
  return text.split(/\s+/u).filter((word) => word !== '')
}

/** Whether `text` contains every word (case-insensitive substring match). */
export function matchesAll(text: string, words: readonly string[]): boolean {
  const haystack = text.toLowerCase()
  return words.every((word) => haystack.includes(word.toLowerCase()))
}

/** About 80 characters of `text` around the first word found. */
export function snippetOf(text: string, words: readonly string[]): string {
  const haystack = text.toLowerCase()
  const at = Math.max(0, haystack.indexOf(words[0]?.toLowerCase() ?? ''))
  const start = Math.max(0, at - 30)
  const excerpt = text.slice(start, start + 80).replace(/\s+/gu, ' ')
  return `${start > 0 ? '…' : ''}${excerpt}${start + 80 < text.length ? '…' : ''}`
}
