/**
 * The projection of docs/spec.md §4 and §10: the log folded into the provider-neutral transcript the
 * model sees. Verbatim: content is passed by reference from the events, nothing is added.
 */
import { assertNever } from './errors.js'
import { type CoreEvent, isCoreEvent, type SessionEvent } from './events.js'
import { prefixView } from './prefix-view.js'
import type { AssistantBlock, ContentBlock } from './values.js'

/** One message of the provider-neutral transcript. */
export type Message =
  | { readonly role: 'user'; readonly content: readonly ContentBlock[] }
  | { readonly role: 'assistant'; readonly content: readonly AssistantBlock[] }
  | {
      readonly role: 'tool'
      readonly callId: string
      readonly name: string
      readonly content: readonly ContentBlock[]
      readonly isError: boolean
    }

/** Folds events into messages one event at a time. */
export interface Projector {
  /** Projects the next event. Costs O(size of the event), except a compaction (O(kept events)). */
  apply(event: SessionEvent): void
  /**
   * The transcript so far, in O(1): a read-only view sharing storage with the projector
   * (src/core/prefix-view.ts). Later appends do not change it; writing through it throws.
   */
  messages(): readonly Message[]
  /**
   * The characters of the transcript by the estimate rule of `estimateTokens` (text and
   * thinking by length, a tool call by its name and JSON arguments, an image as 1000), kept
   * incrementally so that a step's context estimate does not walk the history.
   */
  characters(): number
}

/** Projects a whole log (deterministic: the same events always give the same messages). */
export function project(events: readonly SessionEvent[]): readonly Message[] {
  const projector = createProjector(() => events)
  for (const event of events) projector.apply(event)
  return projector.messages()
}

/**
 * Creates an incremental projector. `events` gives the log so far; it is read only when a
 * compaction is applied, to re-project the kept tail.
 */
export function createProjector(events: () => readonly SessionEvent[]): Projector {
  // Only ever pushed to; a compaction starts a new array, so older views keep theirs intact.
  let messages: Message[] = []
  let characters = 0
  let snapshot: readonly Message[] | undefined

  function push(event: CoreEvent): void {
    const message = toMessage(event)
    if (message) {
      messages.push(message)
      characters += messageCharacters(message)
      snapshot = undefined
    }
  }

  return {
    apply(event) {
      if (!isCoreEvent(event)) return
      if (event.type !== 'compaction') return push(event)
      const log = events()
      const summary: Message = Object.freeze({ role: 'user', content: event.data.summary })
      messages = [summary]
      characters = messageCharacters(summary)
      for (let seq = event.data.firstKeptSeq; seq < event.seq; seq++) {
        const kept = log[seq]
        if (kept && isCoreEvent(kept) && kept.type !== 'compaction') push(kept)
      }
      snapshot = undefined
    },
    messages() {
      snapshot ??= prefixView(messages)
      return snapshot
    },
    characters: () => characters,
  }
}

/** A message's characters by the estimate rule of `Projector.characters`. */
export function messageCharacters(message: Message): number {
  let characters = 0
  for (const block of message.content) {
    if (block.type === 'text' || block.type === 'thinking') characters += block.text.length
    else if (block.type === 'tool-call')
      characters += block.name.length + JSON.stringify(block.args).length
    else characters += 1000 // an image: a flat guess, not its base64 size
  }
  return characters
}

/** The message an event projects to, if any. Compaction is handled by the projector. */
function toMessage(event: CoreEvent): Message | undefined {
  switch (event.type) {
    case 'user/message':
    case 'steering/message':
      return Object.freeze({ role: 'user', content: event.data.content })
    case 'assistant/message':
      if (event.data.content.length === 0) return undefined
      return Object.freeze({ role: 'assistant', content: event.data.content })
    case 'tool/result':
      return Object.freeze({
        role: 'tool',
        callId: event.data.callId,
        name: event.data.name,
        content: event.data.content,
        isError: event.data.isError,
      })
    case 'turn/start':
    case 'turn/end':
    case 'step/start':
    case 'step/end':
    case 'request/header':
    case 'tool/call':
    case 'compaction':
      return undefined
    default:
      return assertNever(event, 'event')
  }
}
