/**
 * `replayProvider()`: answers with the assistant messages of a recorded log, in order, so a
 * session can be reproduced without a model. It stops with a clear error where the new run
 * stops matching the recording.
 */
import {
  type AssistantBlock,
  assertNever,
  createProjector,
  type EventMap,
  isCoreEvent,
  type Message,
  type SessionEvent,
} from '../../core/index.js'
import { abortedPart, type ErrorPart } from '../failure.js'
import type { ModelRequest, Provider, StreamPart } from '../provider.js'
import { describeDifference } from './difference.js'

/** `code` of the error part when the new run no longer matches the recording. */
export const REPLAY_DIVERGED = 'replay-diverged'

type Recording = {
  readonly seq: number
  readonly message: EventMap['assistant/message']
  /** The messages of the request the recorded run sent for this answer. */
  readonly expected: readonly Message[]
  /** Why the recorded turn ended, when this answer ended it with an error. */
  readonly failure?: { readonly code: string; readonly message: string }
}

/** A provider that replays a log; `answered` counts the recorded answers given so far. */
export interface ReplayProvider extends Provider {
  readonly answered: number
}

/**
 * Creates a provider that answers request n with the n-th `assistant/message` of `events`
 * (streamed as parts, then its recorded usage and stop reason).
 *
 * **Divergence.** Before answering request n, the provider compares the request's messages with
 * the messages the recorded run sent for that answer (the projection of the log just before the
 * n-th assistant message). The run has diverged when they differ: a different prompt, a tool
 * result whose content, error flag, call id or tool differs from the recorded one (a tool that
 * behaved differently, or a different call was run), a message more or fewer. The system prompt,
 * tools and parameters are configuration, not course, and are not compared. A request after the
 * last recorded answer has also diverged. A diverged request gets one non-retryable `error` part
 * (`code: 'replay-diverged'`) that says which request and which message differ, and how;
 * nothing of the recording is streamed for it.
 *
 * A recorded answer that ended in an error (or was canceled) is streamed, then ends with a
 * non-retryable error part saying so, since the recording holds nothing after it.
 */
export function replayProvider(
  events: readonly SessionEvent[],
  options: { readonly id?: string } = {},
): ReplayProvider {
  const id = options.id ?? 'replay'
  const recordings = recordingsOf(events)
  let next = 0

  async function* stream(
    request: ModelRequest,
    signal: AbortSignal,
  ): AsyncGenerator<StreamPart, void, undefined> {
    if (signal.aborted) {
      yield abortedPart(id)
      return
    }
    const number = next + 1
    const recording = recordings[next]
    if (!recording) {
      yield diverged(
        `request ${number} has no recorded answer: the recording has ${recordings.length} assistant message(s). The new run asked the model more often than the recorded one did.`,
      )
      return
    }
    const difference = describeDifference(recording.expected, request.messages)
    if (difference !== undefined) {
      yield diverged(
        `request ${number} diverges from the recording (answered at seq ${recording.seq}): ${difference}`,
      )
      return
    }
    next++
    yield* answer(recording, id)
  }

  return {
    id,
    ...(recordings[0] === undefined ? {} : { model: recordings[0].message.model }),
    get answered() {
      return next
    },
    stream,
  }
}

function diverged(detail: string): ErrorPart {
  return {
    type: 'error',
    code: REPLAY_DIVERGED,
    message: `replay: ${detail}`,
    retryable: false,
  }
}

function* answer(recording: Recording, id: string): Generator<StreamPart> {
  for (const block of recording.message.content) yield partOf(block)
  yield { type: 'usage', usage: recording.message.usage }
  const stopReason = recording.message.stopReason
  switch (stopReason) {
    case 'stop':
    case 'tool-calls':
    case 'max-tokens':
      yield { type: 'end', stopReason }
      return
    case 'error':
      yield {
        type: 'error',
        code: recording.failure?.code ?? 'replayed-error',
        message: `${id}: the recorded response failed here${recording.failure ? `: ${recording.failure.message}` : ''}; the recording holds nothing after it`,
        retryable: false,
      }
      return
    case 'canceled':
      yield {
        type: 'error',
        code: 'replayed-cancel',
        message: `${id}: the recorded response was canceled here; the recording holds nothing after it`,
        retryable: false,
      }
      return
    default: {
      const unknown: never = stopReason
      yield {
        type: 'error',
        code: 'replayed-error',
        message: `${id}: the recording has an unknown stop reason ${JSON.stringify(unknown)}`,
        retryable: false,
      }
    }
  }
}

function partOf(block: AssistantBlock): StreamPart {
  switch (block.type) {
    case 'text':
      return { type: 'text-delta', text: block.text }
    case 'thinking':
      return block.signature === undefined
        ? { type: 'thinking-delta', text: block.text }
        : { type: 'thinking-delta', text: block.text, signature: block.signature }
    case 'tool-call':
      return { type: 'tool-call', id: block.id, name: block.name, args: block.args }
    default:
      return assertNever(block, 'assistant block')
  }
}

/** Each assistant message with the projection just before it, in one pass over the log. */
function recordingsOf(events: readonly SessionEvent[]): Recording[] {
  const recordings: Recording[] = []
  const projector = createProjector((seq) => events[seq])
  let awaitingEnd: Recording[] = []
  for (const event of events) {
    if (isCoreEvent(event)) {
      if (event.type === 'assistant/message') {
        const recording = { seq: event.seq, message: event.data, expected: projector.messages() }
        recordings.push(recording)
        if (event.data.stopReason === 'error') awaitingEnd.push(recording)
      } else if (event.type === 'turn/end') {
        const reason = event.data.reason
        if (reason.kind === 'error') {
          for (const recording of awaitingEnd) {
            const index = recordings.indexOf(recording)
            recordings[index] = {
              ...recording,
              failure: { code: reason.code, message: reason.message },
            }
          }
        }
        awaitingEnd = []
      }
    }
    projector.apply(event)
  }
  return recordings
}
