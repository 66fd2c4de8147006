/**
 * The projection of docs/spec.md §4 and §10: the log folded into the provider-neutral transcript the
 * model sees. Verbatim: content is passed by reference from the events, nothing is added.
 */
import { assertNever } from './errors.js'
import { type CoreEvent, type EventMap, isCoreEvent, type SessionEvent } from './events.js'
import { deepFreeze } from './json.js'
import { jsonLength } from './json-length.js'
import { emptyObjectArray } from './object-array.js'
import { prefixView } from './prefix-view.js'
import { textLength } from './text-length.js'
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
  /** What a checkpoint keeps to project the log again from where this one needs (O(1)). */
  snapshot(): ProjectionState
}

/** Reads the event at `seq` of the log being projected, if it is at hand. */
export type EventAt = (seq: number) => SessionEvent | undefined

/**
 * The projection as a checkpoint keeps it: where projecting the log afresh gives it again (the
 * last compaction's `firstKeptSeq`, else 0; any earlier seq does too, since each compaction
 * starts the transcript over) and where its `request/header` is. A few numbers whatever the
 * log's length, so a resumed session holds nothing of its transcript until it is loaded.
 */
export type ProjectionState = {
  readonly from: number
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
 * compaction is applied, to re-project the kept tail. `header` is the latest `request/header`
 * before the first event applied, if the projector starts inside a log.
 */
export function createProjector(eventAt: EventAt, header?: CoreEvent<'request/header'>): Projector {
  return new TranscriptProjector(eventAt, header)
}

/** The first seq a projector rebuilt for `state` reads: its start, or its header if earlier. */
export function firstSeqOf(state: ProjectionState): number {
  return Math.min(state.from, state.headerSeq ?? state.from)
}

/** `state` after also projecting `events` (those past `throughSeq` count). */
export function extendProjectionState(
  state: ProjectionState,
  events: readonly SessionEvent[],
  throughSeq: number,
): ProjectionState {
  let { from, headerSeq } = state
  for (const event of events) {
    if (event.seq <= throughSeq || !isCoreEvent(event)) continue
    if (event.type === 'compaction') from = event.data.firstKeptSeq
    else if (event.type === 'request/header') headerSeq = event.seq
  }
  return { from, ...(headerSeq === undefined ? {} : { headerSeq }) }
}

/**
 * The projector as a class, so that every projector shares one function per method: the
 * optimised code of `apply` (hot when a long log is loaded) is then reused by the next
 * session, where a closure per projector would be compiled again for each (bench B2).
 */
class TranscriptProjector implements Projector {
  readonly #eventAt: EventAt
  #header: CoreEvent<'request/header'> | undefined
  // Only ever pushed to; a compaction starts a new array, so older views keep theirs intact.
  #messages = emptyObjectArray<Message>()
  #characters = 0
  // Where projecting afresh must start (`ProjectionState.from`).
  #from = 0
  #view: readonly Message[] | undefined

  constructor(eventAt: EventAt, header: CoreEvent<'request/header'> | undefined) {
    this.#eventAt = eventAt
    this.#header = header
  }

  apply(event: SessionEvent): void {
    if (!isCoreEvent(event)) return
    if (event.type === 'request/header') {
      this.#header = event
      return
    }
    if (event.type !== 'compaction') {
      this.#push(event)
      return
    }
    const summary = summaryOf(event)
    this.#messages = [summary]
    this.#from = event.data.firstKeptSeq
    this.#characters = messageCharacters(summary)
    for (let seq = event.data.firstKeptSeq; seq < event.seq; seq++) {
      const kept = this.#eventAt(seq)
      if (kept && isCoreEvent(kept) && kept.type !== 'compaction') this.#push(kept)
    }
    this.#view = undefined
  }

  #push(event: CoreEvent): void {
    const message = toMessage(event)
    if (message) {
      this.#messages.push(message)
      this.#characters += messageCharacters(message)
      this.#view = undefined
    }
  }

  messages(): readonly Message[] {
    this.#view ??= prefixView(this.#messages)
    return this.#view
  }

  characters(): number {
    return this.#characters
  }

  requestHeader(): EventMap['request/header'] | undefined {
    return this.#header?.data
  }

  snapshot(): ProjectionState {
    const header = this.#header
    return { from: this.#from, ...(header === undefined ? {} : { headerSeq: header.seq }) }
  }
}

/**
 * A projector and a message of each kind held for the life of the process, so that the hidden
 * classes V8 gives projectors (one per field added by the constructor) and frozen messages
 * outlive every session: these are the maps the optimised code of `apply`, `#push` and the
 * loops that call them checks, and V8 holds a map only while an object has it. When the last
 * session's projector and messages were collected (as between two loads of a long log), that
 * code was discarded and compiled again by the next load, 20–70 ms on a background thread per
 * load of a 20 MB log (bench B2, decision 0170). A few hundred bytes. Exported so that it is a
 * module binding: a constant nothing reads would live only while the module body runs.
 */
export const PROJECTION_SHAPES: readonly object[] = [
  new TranscriptProjector(() => undefined, undefined),
  userMessage([]),
  assistantMessage([]),
  toolMessage({ callId: '', name: '', content: [], isError: false }),
]

function userMessage(content: readonly ContentBlock[]): Message {
  return Object.freeze({ role: 'user', content })
}

function assistantMessage(content: readonly AssistantBlock[]): Message {
  return Object.freeze({ role: 'assistant', content })
}

function toolMessage(data: EventMap['tool/result']): Message {
  return Object.freeze({
    role: 'tool',
    callId: data.callId,
    name: data.name,
    content: data.content,
    isError: data.isError,
  })
}

function summaryOf(event: CoreEvent<'compaction'>): Message {
  return userMessage(event.data.summary)
}

/** A message's characters by the estimate rule of `Projector.characters`. */
export function messageCharacters(message: Message): number {
  let characters = 0
  // Indexed: over a frozen array in optimised code, `for…of` allocates an iterator and a
  // result per block, once per message a step (bench B5+, decision 0168).
  const content = message.content
  for (let index = 0; index < content.length; index++) {
    const block = content[index]!
    if (block.type === 'text' || block.type === 'thinking') characters += textLength(block)
    else if (block.type === 'tool-call') characters += block.name.length + jsonLength(block.args)
    else characters += 1000 // an image: a flat guess, not its base64 size
  }
  return characters
}

/**
 * Freezes what a projector keeps of `event` and hands out (a message's content, a compaction's
 * summary, a request header's data), for an event that may not be frozen yet: a session freezes
 * the events a load read only when they leave it, but their messages leave it at once
 * (decision 0175). Kept beside `toMessage`, which takes those parts.
 */
export function freezeProjected(event: SessionEvent): void {
  if (!isCoreEvent(event)) return
  switch (event.type) {
    case 'user/message':
    case 'steering/message':
    case 'assistant/message':
    case 'tool/result':
      deepFreeze(event.data.content)
      return
    case 'compaction':
      deepFreeze(event.data.summary)
      return
    case 'request/header':
      deepFreeze(event.data)
      return
    case 'turn/start':
    case 'turn/end':
    case 'step/start':
    case 'step/end':
    case 'tool/call':
      return
    default:
      assertNever(event, 'event')
  }
}

/** The message an event projects to, if any. Compaction is handled by the projector. */
function toMessage(event: CoreEvent): Message | undefined {
  switch (event.type) {
    case 'user/message':
    case 'steering/message':
      return userMessage(event.data.content)
    case 'assistant/message':
      if (event.data.content.length === 0) return undefined
      return assistantMessage(event.data.content)
    case 'tool/result':
      return toolMessage(event.data)
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
