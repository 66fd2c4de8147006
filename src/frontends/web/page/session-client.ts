/**
 * The page's follower of one session: a WebSocket to `/api/sessions/:id/stream?since=N` whose
 * messages are folded into the shared transcript model (the same fold as the terminal UI's),
 * the raw log, the inputs' fates and the approval questions. On any disconnect it reconnects
 * with `since` = the last seq it folded, so nothing is lost and nothing is shown twice.
 */
import type { CompactResult, SessionEvent, SessionHeader } from '../../../index.js'
import type { TrackedInput } from '../../view/inputs-model.js'
import { createTranscriptModel, type TranscriptModel } from '../../view/transcript-model.js'
import { type ApprovalPrompt, CLOSE_CODES, type SessionMode, type StreamMessage } from '../wire.js'

export type Connection = 'connecting' | 'replaying' | 'live' | 'reconnecting'

export type SessionState = {
  readonly header?: SessionHeader
  readonly mode: SessionMode
  readonly label?: string
  readonly transcript: TranscriptModel
  /** Every event received, by seq (the raw log view). */
  readonly events: readonly SessionEvent[]
  readonly inputs: ReadonlyMap<string, TrackedInput>
  readonly approvals: ReadonlyMap<string, ApprovalPrompt>
  readonly connection: Connection
  /** Something the person should know (a failed follow, a compaction result). */
  readonly notice?: string
  /** `performance.now()` when the replay first caught up (time to first paint). */
  readonly caughtUpAt?: number
  /** Grows on every change. */
  readonly version: number
}

export interface SessionClient {
  readonly state: SessionState
  /** Shows a notice (e.g. a failed request). */
  notify(message: string | undefined): void
  close(): void
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

export function createSessionClient(id: string, onChange: () => void): SessionClient {
  const events: SessionEvent[] = []
  const inputs = new Map<string, TrackedInput>()
  const approvals = new Map<string, ApprovalPrompt>()
  const state: Mutable<SessionState> = {
    mode: { kind: 'follow' },
    transcript: createTranscriptModel(),
    events,
    inputs,
    approvals,
    connection: 'connecting',
    version: 0,
  }
  let socket: WebSocket | undefined
  let isClosed = false
  let failures = 0
  let retryTimer: ReturnType<typeof setTimeout> | undefined

  const changed = () => {
    state.version++
    onChange()
  }

  const handle = (message: StreamMessage) => {
    switch (message.type) {
      case 'hello':
        state.header = message.header
        state.mode = message.mode
        state.connection = 'replaying'
        break
      case 'events':
        for (const event of message.events) {
          const before = state.transcript.status.lastSeq
          state.transcript.applyEvent(event)
          if (event.seq > before) events.push(event)
        }
        break
      case 'caught-up': {
        const { live } = message
        failures = 0
        state.connection = 'live'
        state.mode = live.mode
        if (live.label === undefined) delete state.label
        else state.label = live.label
        inputs.clear()
        for (const input of live.inputs) inputs.set(input.id, input)
        approvals.clear()
        for (const approval of live.approvals) approvals.set(approval.id, approval)
        for (const notification of live.replay) state.transcript.applyNotification(notification)
        state.caughtUpAt ??= performance.now()
        break
      }
      case 'notification':
        state.transcript.applyNotification(message.notification)
        break
      case 'input':
        inputs.set(message.input.id, message.input)
        break
      case 'approval':
        approvals.set(message.approval.id, message.approval)
        break
      case 'approval/end':
        approvals.delete(message.id)
        break
      case 'compact/end':
        state.notice = describeCompaction(message.result)
        break
      case 'mode':
        state.mode = message.mode
        if (message.label === undefined) delete state.label
        else state.label = message.label
        break
      case 'problem':
        state.notice = message.message
        break
    }
  }

  const connect = () => {
    if (isClosed) return
    const since = state.transcript.status.lastSeq
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
    const url = `${scheme}://${location.host}/api/sessions/${encodeURIComponent(id)}/stream?since=${since}`
    const current = new WebSocket(url)
    socket = current
    current.onmessage = (frame) => {
      if (socket !== current) return
      try {
        handle(JSON.parse(String(frame.data)) as StreamMessage)
      } catch (error) {
        // A gap or a malformed frame: start over from the last seq folded.
        state.notice = error instanceof Error ? error.message : String(error)
        current.close()
      }
      changed()
    }
    current.onclose = (close) => {
      if (socket !== current || isClosed) return
      socket = undefined
      state.connection = 'reconnecting'
      changed()
      // A slow-client drop resumes at once; anything else backs off a little.
      const delay = close.code === CLOSE_CODES.slow ? 0 : Math.min(5000, 250 * 2 ** failures++)
      retryTimer = setTimeout(connect, delay)
    }
  }
  connect()

  return {
    state,
    notify(message) {
      if (message === undefined) delete state.notice
      else state.notice = message
      changed()
    },
    close() {
      isClosed = true
      clearTimeout(retryTimer)
      socket?.close()
    },
  }
}

function describeCompaction(result: CompactResult): string {
  switch (result.status) {
    case 'compacted':
      return `compacted: ${result.tokensBefore} → ${result.tokensAfter} tokens`
    case 'skipped':
      return `compaction skipped: ${result.reason}`
    case 'error':
      return `compaction failed: ${result.error.message}`
    case 'discarded':
      return `compaction not run: ${result.reason}`
  }
}
