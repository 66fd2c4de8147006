/**
 * The projection of docs/spec.md §4 and §10: the log folded into the provider-neutral transcript the
 * model sees. Verbatim: content is passed by reference from the events, nothing is added.
 */
import { assertNever } from './errors.js'
import { type CoreEvent, isCoreEvent, type SessionEvent } from './events.js'
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
  /** The transcript so far, as a frozen array that later appends do not change. */
  messages(): readonly Message[]
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
  let messages: Message[] = []
  let snapshot: readonly Message[] | undefined

  function push(event: CoreEvent): void {
    const message = toMessage(event)
    if (message) {
      messages.push(message)
      snapshot = undefined
    }
  }

  return {
    apply(event) {
      if (!isCoreEvent(event)) return
      if (event.type !== 'compaction') return push(event)
      const log = events()
      messages = [Object.freeze({ role: 'user', content: event.data.summary })]
      for (let seq = event.data.firstKeptSeq; seq < event.seq; seq++) {
        const kept = log[seq]
        if (kept && isCoreEvent(kept) && kept.type !== 'compaction') push(kept)
      }
      snapshot = undefined
    },
    messages() {
      snapshot ??= Object.freeze(messages.slice())
      return snapshot
    },
  }
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
