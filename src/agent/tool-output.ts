/**
 * Keeps a tool result under the agent's limit (docs/spec.md §7): past `limit` characters of
 * text, the result is cut and the full text saved to a private file the note names. Async, so
 * saving a large output never blocks the event loop.
 */
import { type ContentBlock, type EventMap, messageOf } from '../core/index.js'
import { saveToolOutput } from '../tools/output-spill.js'

type ResultData = EventMap['tool/result']

type TruncateOptions = {
  readonly result: ResultData
  readonly limit: number
  readonly dir: string
  /** Names the saved file with the call id. */
  readonly sessionId: string
}

/** The result as it is, with no promise, when it is within the limit (bench B5+); else its cut. */
export function truncateResult(options: TruncateOptions): ResultData | Promise<ResultData> {
  let total = 0
  for (const block of options.result.content) if (block.type === 'text') total += block.text.length
  return total <= options.limit ? options.result : spill(options, total)
}

async function spill(options: TruncateOptions, total: number): Promise<ResultData> {
  const { result, limit } = options
  const full = result.content
    .map((block) => (block.type === 'text' ? block.text : `[${block.mediaType} image]`))
    .join('\n')
  let path: string
  try {
    // A private directory, a 0600 file, old files swept (src/tools/output-spill.ts).
    path = await saveToolOutput({
      dir: options.dir,
      name: `${options.sessionId}-${result.callId}`,
      text: full,
    })
  } catch (error) {
    path = `(could not be saved: ${messageOf(error)})`
  }
  let budget = limit
  const content: ContentBlock[] = []
  for (const block of result.content) {
    if (block.type !== 'text') {
      content.push(block)
      continue
    }
    const kept = block.text.slice(0, Math.max(0, budget))
    budget -= kept.length
    if (kept !== '') content.push({ type: 'text', text: kept })
  }
  content.push({
    type: 'text',
    text: `\n[Output truncated: showing the first ${limit} of ${total} characters. The full output is in ${path}]`,
  })
  return { ...result, content }
}
