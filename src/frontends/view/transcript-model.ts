/**
 * The transcript a person sees, folded from the durable log and the live notifications: one
 * model shared by the terminal UI (in Node) and the web page (in the browser, fed over a
 * WebSocket), so both show the same thing. Each input costs O(its size): an item that changes
 * is replaced by a new object at the same index and the rest are untouched, so a renderer can
 * compare items by identity and redraw only what changed.
 *
 * Browser-safe: no Node APIs and only type imports from the library.
 */
import type {
  AgentNotification,
  AgentStatus,
  ContentBlock,
  EventMap,
  JsonValue,
  MessageSource,
  SessionEvent,
  TurnEndReason,
  Usage,
} from '../../index.js'
import { roleOf, sourceLabel } from './source-label.js'

/** A live notification as a front end receives it (over a socket `error` may be absent). */
export type LiveNotification =
  | Exclude<AgentNotification, { type: 'listener/error' }>
  | { readonly type: 'listener/error'; readonly source: string; readonly message: string }

export type ToolStatus = 'pending' | 'running' | 'ok' | 'error' | 'denied' | 'canceled'

export type TranscriptItem =
  /** A user-side message: a person's prompt, injected context, or a cross-session reference. */
  | {
      readonly kind: 'user'
      readonly key: string
      readonly seq: number
      readonly id: string
      readonly role: 'prompt' | 'context' | 'reference'
      readonly source: MessageSource
      /** `user`, `plugin:workspace-context`, … */
      readonly label: string
      readonly text: string
      readonly images: number
      /** The turn it was logged in (absent between turns). */
      readonly turn?: number
    }
  /** Steering that joined a running turn before step `beforeStep`. */
  | {
      readonly kind: 'steering'
      readonly key: string
      readonly seq: number
      readonly id: string
      readonly source: MessageSource
      readonly label: string
      readonly text: string
      readonly images: number
      readonly turn: number
      readonly beforeStep: number
    }
  | {
      readonly kind: 'assistant'
      readonly key: string
      /** Absent while streaming. */
      readonly seq?: number
      readonly turn: number
      readonly step: number
      readonly text: string
      readonly thinking: string
      readonly isStreaming: boolean
      readonly isInterrupted: boolean
      readonly usage?: Usage
      /**
       * While streaming: `text` as the pieces it arrived in. The array is shared, append-only,
       * by the successive objects of one stream; this object's text is its first `pieceCount`
       * pieces joined. A renderer reads what arrived since it last looked from here without
       * copying all of `text` (a string grown by `+` is copied whole by the next read of it).
       */
      readonly textPieces?: readonly string[]
      readonly pieceCount?: number
    }
  | {
      readonly kind: 'tool'
      readonly key: string
      readonly callId: string
      readonly name: string
      readonly args: JsonValue
      readonly turn: number
      readonly step: number
      readonly status: ToolStatus
      /** Epoch ms of `tool/call` (the tool started). */
      readonly startedAt?: number
      readonly durationMs?: number
      readonly output?: string
      readonly errorCode?: string
      /** The result's `meta` (an edit's `diff`, bash's `exitCode`, …). */
      readonly meta?: JsonValue
      /** The latest progress the tool reported while running. */
      readonly progress?: JsonValue
    }
  | {
      readonly kind: 'turn-start'
      readonly key: string
      readonly seq: number
      readonly turn: number
      readonly trigger: 'prompt' | 'continue'
    }
  | {
      readonly kind: 'turn-end'
      readonly key: string
      readonly seq: number
      readonly turn: number
      readonly reason: TurnEndReason
    }
  | {
      readonly kind: 'compaction'
      readonly key: string
      readonly seq: number
      readonly reason: EventMap['compaction']['reason']
      readonly tokensBefore: number
      readonly tokensAfter?: number
      readonly summary: string
    }
  /** A plugin's own event (`ignorable`), e.g. a hook run record. */
  | {
      readonly kind: 'extension'
      readonly key: string
      readonly seq: number
      readonly type: string
      readonly data: JsonValue
    }

/** What the status line shows. */
export type TranscriptStatus = {
  readonly agent: AgentStatus
  readonly turn?: number
  readonly step?: number
  readonly provider?: string
  readonly model?: string
  /** The latest response's usage (its input tokens are the context in use). */
  readonly usage?: Usage
  /** Set while a failed request waits to be retried. */
  readonly retry?: {
    readonly attempt: number
    readonly delayMs: number
    readonly error: { readonly code: string; readonly message: string }
  }
  /** The seq of the last durable event folded in (-1 before any). */
  readonly lastSeq: number
}

export interface TranscriptModel {
  readonly items: readonly TranscriptItem[]
  readonly status: TranscriptStatus
  /** Grows by one on every change, so a renderer knows whether to draw. */
  readonly version: number
  /**
   * Folds a durable event. Events must come in seq order; an event at or below `lastSeq` is
   * ignored (a reconnect that resends some is harmless), a gap throws.
   */
  applyEvent(event: SessionEvent): void
  applyNotification(notification: LiveNotification): void
}

/** An empty transcript; feed it the log from seq 0 (or from a snapshot) and then live input. */
export function createTranscriptModel(): TranscriptModel {
  const items: TranscriptItem[] = []
  const indexOf = new Map<string, number>()
  let status: TranscriptStatus = { agent: 'idle', lastSeq: -1 }
  let version = 0
  let step = 0

  const add = (item: TranscriptItem) => {
    indexOf.set(item.key, items.length)
    items.push(item)
  }
  const replace = (key: string, change: (item: TranscriptItem) => TranscriptItem) => {
    const index = indexOf.get(key)
    if (index === undefined) return false
    items[index] = change(items[index] as TranscriptItem)
    return true
  }
  const streamingKey = (turn: number, stepNumber: number) => `assistant:${turn}:${stepNumber}`
  const toolKey = (callId: string) => `tool:${callId}`

  function applyCore(event: SessionEvent): void {
    const { seq } = event
    switch (event.type) {
      case 'user/message': {
        const data = event.data as EventMap['user/message']
        add({
          kind: 'user',
          key: `seq:${seq}`,
          seq,
          id: data.id,
          role: roleOf(data.source),
          source: data.source,
          label: sourceLabel(data.source),
          ...contentOf(data.content),
          ...(status.turn === undefined ? {} : { turn: status.turn }),
        })
        return
      }
      case 'steering/message': {
        const data = event.data as EventMap['steering/message']
        add({
          kind: 'steering',
          key: `seq:${seq}`,
          seq,
          id: data.id,
          source: data.source,
          label: sourceLabel(data.source),
          ...contentOf(data.content),
          turn: data.turn,
          beforeStep: step + 1,
        })
        return
      }
      case 'turn/start': {
        const data = event.data as EventMap['turn/start']
        step = 0
        status = { ...status, turn: data.turn }
        add({ kind: 'turn-start', key: `seq:${seq}`, seq, turn: data.turn, trigger: data.trigger })
        return
      }
      case 'turn/end': {
        const data = event.data as EventMap['turn/end']
        const { turn: _turn, step: _step, retry: _retry, ...rest } = status
        status = rest
        add({ kind: 'turn-end', key: `seq:${seq}`, seq, turn: data.turn, reason: data.reason })
        return
      }
      case 'step/start': {
        const data = event.data as EventMap['step/start']
        step = data.step
        status = { ...status, step: data.step }
        return
      }
      case 'request/header': {
        const data = event.data as EventMap['request/header']
        status = { ...status, provider: data.provider, model: data.model }
        return
      }
      case 'assistant/message': {
        const data = event.data as EventMap['assistant/message']
        const turn = status.turn ?? 0
        const key = streamingKey(turn, step)
        let text = ''
        let thinking = ''
        for (const block of data.content) {
          if (block.type === 'text') text += block.text
          else if (block.type === 'thinking') thinking += block.text
        }
        const final: TranscriptItem = {
          kind: 'assistant',
          key,
          seq,
          turn,
          step,
          text,
          thinking,
          isStreaming: false,
          isInterrupted: data.interrupted === true,
          usage: data.usage,
        }
        if (!replace(key, () => final)) add(final)
        const { retry: _retry, ...rest } = status
        status = { ...rest, usage: data.usage }
        for (const block of data.content) {
          if (block.type !== 'tool-call') continue
          add({
            kind: 'tool',
            key: toolKey(block.id),
            callId: block.id,
            name: block.name,
            args: block.args,
            turn,
            step,
            status: 'pending',
          })
        }
        return
      }
      case 'tool/call': {
        const data = event.data as EventMap['tool/call']
        replace(toolKey(data.callId), (item) =>
          item.kind === 'tool'
            ? { ...item, args: data.args, status: 'running', startedAt: event.time }
            : item,
        )
        return
      }
      case 'tool/result': {
        const data = event.data as EventMap['tool/result']
        replace(toolKey(data.callId), (item) => {
          if (item.kind !== 'tool') return item
          const { progress: _progress, ...rest } = item
          return {
            ...rest,
            status: toolStatus(data),
            output: contentOf(data.content).text,
            ...(item.startedAt === undefined ? {} : { durationMs: event.time - item.startedAt }),
            ...(data.error === undefined ? {} : { errorCode: data.error.code }),
            ...(data.meta === undefined ? {} : { meta: data.meta }),
          }
        })
        return
      }
      case 'step/end':
        return
      case 'compaction': {
        const data = event.data as EventMap['compaction']
        add({
          kind: 'compaction',
          key: `seq:${seq}`,
          seq,
          reason: data.reason,
          tokensBefore: data.tokensBefore,
          ...(data.tokensAfter === undefined ? {} : { tokensAfter: data.tokensAfter }),
          summary: contentOf(data.summary).text,
        })
        return
      }
      default:
        add({
          kind: 'extension',
          key: `seq:${seq}`,
          seq,
          type: event.type,
          data: event.data as JsonValue,
        })
    }
  }

  return {
    items,
    get status() {
      return status
    },
    get version() {
      return version
    },
    applyEvent(event) {
      if (event.seq <= status.lastSeq) return
      if (event.seq !== status.lastSeq + 1)
        throw new RangeError(
          `transcript: event seq ${event.seq} arrived after ${status.lastSeq}; events must come in order without gaps (resume the stream from seq ${status.lastSeq + 1})`,
        )
      applyCore(event)
      status = { ...status, lastSeq: event.seq }
      version++
    },
    applyNotification(notification) {
      switch (notification.type) {
        case 'status/change':
          status = { ...status, agent: notification.status }
          break
        case 'request/start': {
          const { retry: _retry, ...rest } = status
          status = rest
          // A request streams afresh: what an earlier attempt streamed is void, and so is a
          // stale partial stream a reconnecting follower still shows (it is re-sent in full).
          replace(streamingKey(notification.turn, notification.step), (item) =>
            item.kind === 'assistant' && item.isStreaming
              ? { ...item, text: '', thinking: '', textPieces: [], pieceCount: 0 }
              : item,
          )
          break
        }
        case 'assistant/delta': {
          const key = streamingKey(notification.turn, notification.step)
          const isText = notification.kind === 'text'
          const changed = replace(key, (item) => {
            if (item.kind !== 'assistant' || !item.isStreaming) return item
            if (!isText) return { ...item, thinking: item.thinking + notification.text }
            return {
              ...item,
              text: item.text + notification.text,
              ...withPiece(item, notification.text),
            }
          })
          if (!changed)
            add({
              kind: 'assistant',
              key,
              turn: notification.turn,
              step: notification.step,
              text: isText ? notification.text : '',
              thinking: isText ? '' : notification.text,
              isStreaming: true,
              isInterrupted: false,
              ...(isText ? { textPieces: [notification.text], pieceCount: 1 } : {}),
            })
          break
        }
        case 'request/retry':
          status = {
            ...status,
            retry: {
              attempt: notification.attempt,
              delayMs: notification.delayMs,
              error: notification.error,
            },
          }
          break
        case 'tool/progress':
          replace(toolKey(notification.callId), (item) =>
            item.kind === 'tool' && item.status === 'running'
              ? { ...item, progress: notification.progress }
              : item,
          )
          break
        case 'delivery/end':
        case 'compaction/request':
        case 'listener/error':
          return
      }
      version++
    },
  }
}

/** The pieces of a streaming text with one more: the stream's array, appended to. */
function withPiece(
  item: Extract<TranscriptItem, { kind: 'assistant' }>,
  piece: string,
): { textPieces: readonly string[]; pieceCount: number } {
  let pieces = item.textPieces as string[] | undefined
  // The array is appended to only from its newest object; anything else starts a new one.
  if (pieces === undefined || pieces.length !== item.pieceCount)
    pieces = item.text === '' ? [] : [item.text]
  pieces.push(piece)
  return { textPieces: pieces, pieceCount: pieces.length }
}

function toolStatus(result: EventMap['tool/result']): ToolStatus {
  if (!result.isError) return 'ok'
  switch (result.error?.code) {
    case 'denied':
    case 'not-approved':
      return 'denied'
    case 'canceled':
      return 'canceled'
    default:
      return 'error'
  }
}

function contentOf(content: readonly ContentBlock[]): { text: string; images: number } {
  let images = 0
  const texts: string[] = []
  for (const block of content) {
    if (block.type === 'text') texts.push(block.text)
    else images++
  }
  return { text: texts.join(''), images }
}
