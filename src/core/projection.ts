/**
 * The projection of docs/spec.md §4 and §10: the log folded into the provider-neutral transcript the
 * model sees. Verbatim: content is passed by reference from the events, nothing is added.
 */
import { assertNever } from './errors.js'
import { type CoreEvent, type EventMap, isCoreEvent, type SessionEvent } from './events.js'
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
  /**
   * The data of the latest `request/header`: with `messages()` it makes the request
   * (docs/spec.md §4), so it is part of what a checkpoint restores. Undefined before the first.
   */
  requestHeader(): EventMap['request/header'] | undefined
  /** What a checkpoint keeps to restore this projector (`restoreProjector`); a copy. */
  snapshot(): ProjectionState
}

/** Reads the event at `seq` of the log being projected, if it is at hand. */
export type EventAt = (seq: number) => SessionEvent | undefined

/**
 * The projection as a checkpoint keeps it: the seqs of the events whose messages form the
 * transcript, in order (a compaction's seq stands for its summary and comes first), and the
 * characters of `Projector.characters`.
 */
export type ProjectionState = {
  readonly seqs: readonly number[]
  readonly characters: number
  /** The seq of the latest `request/header`, if any. */
  readonly headerSeq?: number
}

/** Projects a whole log (deterministic: the same events always give the same messages). */
export function project(events: readonly SessionEvent[]): readonly Message[] {
  const projector = createProjector((seq) => events[seq])
  for (const event of events) projector.apply(event)
  return projector.messages()
}

/**
 * Creates an incremental projector. `eventAt` reads the log so far; it is called only when a
 * compaction is applied, to re-project the kept tail.
 */
export function createProjector(eventAt: EventAt): Projector {
  return projectorFrom(eventAt, [], [], 0, undefined)
}

/**
 * A projector continuing from `state`, taken with `snapshot()` over the same log: its messages
 * are rebuilt from the events at `state.seqs` (no event is read but those and the header).
 * Returns undefined when the state does not fit the log (a seq not at hand, out of order, or
 * naming an event that projects to no message), so a caller projects the log from the start.
 */
export function restoreProjector(eventAt: EventAt, state: ProjectionState): Projector | undefined {
  const messages: Message[] = []
  let previous = -1
  for (const [index, seq] of state.seqs.entries()) {
    const event = eventAt(seq)
    if (seq <= previous || !event || event.seq !== seq || !isCoreEvent(event)) return undefined
    if (event.type === 'compaction') {
      // A summary comes first and stands for the kept events before it, which follow it.
      if (index !== 0) return undefined
      messages.push(summaryOf(event))
      continue
    }
    previous = seq
    const message = toMessage(event)
    if (!message) return undefined
    messages.push(message)
  }
  let header: CoreEvent<'request/header'> | undefined
  if (state.headerSeq !== undefined) {
    const event = eventAt(state.headerSeq)
    if (event?.seq !== state.headerSeq || !isCoreEvent(event) || event.type !== 'request/header')
      return undefined
    header = event
  }
  return projectorFrom(eventAt, messages, [...state.seqs], state.characters, header)
}

/**
 * The seqs a projector restored from `state` reads (`restoreProjector`), lowest first: where
 * reading the log must start to restore it.
 */
export function firstSeqOf(state: ProjectionState): number | undefined {
  let first = state.headerSeq
  for (const seq of state.seqs) if (first === undefined || seq < first) first = seq
  return first
}

/**
 * `state` after also projecting the events of `events` past `throughSeq`, without the events it
 * names: what a checkpoint needs of a projection not yet loaded. Undefined past a compaction
 * (which only a loaded projection can apply).
 */
export function extendProjectionState(
  state: ProjectionState,
  events: readonly SessionEvent[],
  throughSeq: number,
): ProjectionState | undefined {
  const seqs = [...state.seqs]
  let { characters, headerSeq } = state
  for (const event of events) {
    if (event.seq <= throughSeq || !isCoreEvent(event)) continue
    if (event.type === 'compaction') return undefined
    if (event.type === 'request/header') headerSeq = event.seq
    const message = toMessage(event)
    if (!message) continue
    seqs.push(event.seq)
    characters += messageCharacters(message)
  }
  return { seqs, characters, ...(headerSeq === undefined ? {} : { headerSeq }) }
}

function projectorFrom(
  eventAt: EventAt,
  initialMessages: Message[],
  initialSeqs: number[],
  initialCharacters: number,
  initialHeader: CoreEvent<'request/header'> | undefined,
): Projector {
  // Only ever pushed to; a compaction starts a new array, so older views keep theirs intact.
  let messages = initialMessages
  // The seq each message comes from, for `snapshot` (a compaction's seq for its summary).
  let seqs = initialSeqs
  let characters = initialCharacters
  let header = initialHeader
  let snapshot: readonly Message[] | undefined

  function push(event: CoreEvent): void {
    const message = toMessage(event)
    if (message) {
      messages.push(message)
      seqs.push(event.seq)
      characters += messageCharacters(message)
      snapshot = undefined
    }
  }

  return {
    apply(event) {
      if (!isCoreEvent(event)) return
      if (event.type === 'request/header') {
        header = event
        return
      }
      if (event.type !== 'compaction') return push(event)
      const summary = summaryOf(event)
      messages = [summary]
      seqs = [event.seq]
      characters = messageCharacters(summary)
      for (let seq = event.data.firstKeptSeq; seq < event.seq; seq++) {
        const kept = eventAt(seq)
        if (kept && isCoreEvent(kept) && kept.type !== 'compaction') push(kept)
      }
      snapshot = undefined
    },
    messages() {
      snapshot ??= prefixView(messages)
      return snapshot
    },
    characters: () => characters,
    requestHeader: () => header?.data,
    snapshot: () => ({
      seqs: seqs.slice(),
      characters,
      ...(header === undefined ? {} : { headerSeq: header.seq }),
    }),
  }
}

function summaryOf(event: CoreEvent<'compaction'>): Message {
  return Object.freeze({ role: 'user', content: event.data.summary })
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
