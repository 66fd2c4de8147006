/**
 * Where a request's messages first differ from the recorded ones, said in words a person can act
 * on ("the result of call c1 (read) differs: recorded "…", got "…"").
 */
import {
  type AssistantBlock,
  assertNever,
  type ContentBlock,
  type JsonValue,
  jsonEqual,
  type Message,
} from '../../core/index.js'

/** Undefined when `actual` equals `expected` message for message; otherwise the first difference. */
export function describeDifference(
  expected: readonly Message[],
  actual: readonly Message[],
): string | undefined {
  const length = Math.max(expected.length, actual.length)
  for (let index = 0; index < length; index++) {
    const recorded = expected[index]
    const got = actual[index]
    if (recorded !== undefined && got !== undefined && same(recorded, got)) continue
    const where = `message ${index + 1}`
    if (recorded === undefined)
      return `${where} is new: the request has ${actual.length} message(s), the recorded request ${expected.length}; the extra one is ${label(got!)} ${preview(got!)}`
    if (got === undefined)
      return `${where} is missing: the request has ${actual.length} message(s), the recorded request ${expected.length}; the missing one is ${label(recorded)} ${preview(recorded)}`
    if (recorded.role !== got.role || !sameCall(recorded, got))
      return `${where} was ${label(recorded)} in the recording, but is ${label(got)} now`
    if (recorded.role === 'tool' && got.role === 'tool' && recorded.isError !== got.isError)
      return `${where}: ${label(recorded)} was ${recorded.isError ? 'an error' : 'a success'} in the recording, but is ${got.isError ? 'an error' : 'a success'} now: ${preview(got)}`
    return `${where} (${label(recorded)}) differs: ${contrast(textOf(recorded), textOf(got))}`
  }
  return undefined
}

function same(a: Message, b: Message): boolean {
  return jsonEqual(a as unknown as JsonValue, b as unknown as JsonValue)
}

function sameCall(a: Message, b: Message): boolean {
  if (a.role !== 'tool' || b.role !== 'tool') return true
  return a.callId === b.callId && a.name === b.name
}

function label(message: Message): string {
  switch (message.role) {
    case 'user':
      return 'a user message'
    case 'assistant':
      return 'an assistant message'
    case 'tool':
      return `the result of call ${message.callId} (${message.name})`
    default:
      return assertNever(message, 'message role')
  }
}

/** The message as text; images and tool calls in a short notation, so any difference shows. */
function textOf(message: Message): string {
  return (message.content as readonly (ContentBlock | AssistantBlock)[]).map(blockText).join('')
}

function blockText(block: ContentBlock | AssistantBlock): string {
  switch (block.type) {
    case 'text':
      return block.text
    case 'image':
      return `[image ${block.mediaType}, ${block.data.length} base64 chars]`
    case 'thinking':
      return `[thinking: ${block.text}]`
    case 'tool-call':
      return `[call ${block.id} ${block.name} ${JSON.stringify(block.args)}]`
    default:
      return assertNever(block, 'content block')
  }
}

const CONTEXT = 30

function preview(message: Message): string {
  const text = textOf(message)
  return JSON.stringify(text.length > 2 * CONTEXT ? `${text.slice(0, 2 * CONTEXT)}…` : text)
}

/** Both texts around their first differing character. */
function contrast(recorded: string, got: string): string {
  let at = 0
  while (at < recorded.length && at < got.length && recorded[at] === got[at]) at++
  const window = (text: string) => {
    const start = Math.max(0, at - CONTEXT)
    const end = Math.min(text.length, at + CONTEXT)
    return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`
  }
  if (recorded === got) return 'the text is equal but the blocks differ (how the content is split)'
  return `recorded ${JSON.stringify(window(recorded))}, got ${JSON.stringify(window(got))} (first difference at character ${at + 1})`
}
