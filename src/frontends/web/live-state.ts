/**
 * What a session shows that is not in its log yet: the text streamed so far by the current
 * request, a retry being waited for, the latest progress of running tools. A client that
 * connects (or reconnects) mid-turn gets it as a few notifications after the replay of the log,
 * so a page reloaded mid-stream shows the same transcript as before.
 */
import type { SessionEvent } from '../../index.js'
import type { LiveNotification } from '../view/transcript-model.js'

type Stream = {
  readonly turn: number
  readonly step: number
  readonly attempt: number
  /** Unknown (0) when the stream was first seen through a delta. */
  readonly maxAttempts: number
  /** Text pieces per content block, joined only when a snapshot is taken. */
  readonly blocks: Map<number, { readonly kind: 'text' | 'thinking'; pieces: string[] }>
}

export interface LiveState {
  applyNotification(notification: LiveNotification): void
  applyEvent(event: SessionEvent): void
  /** Notifications that rebuild the live state on a transcript that holds the whole log. */
  snapshot(): LiveNotification[]
}

/** Pieces are joined into one when there are more than this many (bounded array overhead). */
const MAX_PIECES = 256

export function createLiveState(): LiveState {
  let stream: Stream | undefined
  let retry: Extract<LiveNotification, { type: 'request/retry' }> | undefined
  const progress = new Map<string, Extract<LiveNotification, { type: 'tool/progress' }>>()

  return {
    applyNotification(notification) {
      switch (notification.type) {
        case 'request/start':
          stream = {
            turn: notification.turn,
            step: notification.step,
            attempt: notification.attempt,
            maxAttempts: notification.maxAttempts,
            blocks: new Map(),
          }
          retry = undefined
          return
        case 'assistant/delta': {
          const { turn, step, attempt } = notification
          if (!stream || stream.turn !== turn || stream.step !== step || stream.attempt !== attempt)
            stream = {
              turn,
              step,
              attempt,
              maxAttempts: stream?.maxAttempts ?? 0,
              blocks: new Map(),
            }
          const block = stream.blocks.get(notification.block)
          if (!block) {
            stream.blocks.set(notification.block, {
              kind: notification.kind,
              pieces: [notification.text],
            })
            return
          }
          block.pieces.push(notification.text)
          if (block.pieces.length > MAX_PIECES) block.pieces = [block.pieces.join('')]
          return
        }
        case 'request/retry':
          // What the failed attempt streamed is void.
          stream = undefined
          retry = notification
          return
        case 'tool/progress':
          progress.set(notification.callId, notification)
          return
        default:
          return
      }
    },
    applyEvent(event) {
      switch (event.type) {
        case 'assistant/message':
          stream = undefined
          retry = undefined
          return
        case 'tool/result':
          progress.delete((event.data as { callId: string }).callId)
          return
        case 'turn/end':
          stream = undefined
          retry = undefined
          progress.clear()
          return
        default:
          return
      }
    },
    snapshot() {
      const out: LiveNotification[] = []
      if (stream) {
        const { turn, step, attempt, maxAttempts } = stream
        out.push({ type: 'request/start', turn, step, attempt, maxAttempts })
        const blocks = [...stream.blocks.entries()].sort(([a], [b]) => a - b)
        for (const [block, { kind, pieces }] of blocks)
          out.push({
            type: 'assistant/delta',
            turn,
            step,
            attempt,
            block,
            kind,
            text: pieces.join(''),
          })
      }
      if (retry) out.push(retry)
      out.push(...progress.values())
      return out
    },
  }
}
