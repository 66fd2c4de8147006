/**
 * The web host's wire shapes: what the session stream sends and what the HTTP API answers
 * (docs/web-api.md). Shared by the host (Node) and the page (browser), so it holds types only.
 *
 * The stream is a follower of the session log (docs/spec.md §11): `events` frames carry durable
 * events in seq order without gaps, so a client that keeps the last seq it folded can resume
 * from it after any disconnect and receive exactly what it missed.
 */
import type {
  AgentStatus,
  CompactResult,
  DeliveryResult,
  JsonValue,
  SessionEvent,
  SessionHeader,
} from '../../index.js'
import type { TrackedInput } from '../view/inputs-model.js'
import type { LiveNotification } from '../view/transcript-model.js'

/** Who runs a session as the page sees it. */
export type SessionMode =
  /** This host holds the writer lease and runs the agent: inputs are accepted. */
  | { readonly kind: 'live' }
  /**
   * Read-only: the stream follows the stored log. `busy` names the writer when an attempt to
   * run the session here found it open elsewhere (another host or process).
   */
  | { readonly kind: 'follow'; readonly busy?: BusyInfo }

export type BusyInfo = { readonly pid: number; readonly host?: string; readonly message: string }

/** An approval question waiting for a person (docs/decisions/0103-web-approvals.md). */
export type ApprovalPrompt = {
  readonly id: string
  readonly callId: string
  readonly name: string
  readonly args: JsonValue
  readonly reason: string
  /** What "always" would remember: the tool, and for bash the exact command. */
  readonly rule: { readonly tool: string; readonly command?: string }
}

/** How an approval question ended. */
export type ApprovalOutcome = 'allow' | 'deny' | 'canceled'

/** The state of everything live that the log does not hold, sent once a client caught up. */
export type LiveSnapshot = {
  readonly mode: SessionMode
  readonly status: AgentStatus
  /** `provider/model` of a live session. */
  readonly label?: string
  /**
   * Notifications that rebuild the live state on a fresh transcript model: the current
   * stream's text so far (one delta per block), the latest tool progress, a pending retry.
   */
  readonly replay: readonly LiveNotification[]
  /** Inputs given through this host and their fate (open ones, then the latest settled). */
  readonly inputs: readonly TrackedInput[]
  readonly approvals: readonly ApprovalPrompt[]
}

/** A message on the session stream, host → client (JSON text frames). */
export type StreamMessage =
  /** First message: the session, how it runs, and the seq the replay starts after. */
  | {
      readonly type: 'hello'
      readonly header: SessionHeader
      readonly mode: SessionMode
      readonly since: number
    }
  /** Durable events, contiguous, each seq one more than the last one sent. */
  | { readonly type: 'events'; readonly events: readonly SessionEvent[] }
  /** The replay reached the end of the log: from here on everything is live. */
  | { readonly type: 'caught-up'; readonly lastSeq: number; readonly live: LiveSnapshot }
  | { readonly type: 'notification'; readonly notification: LiveNotification }
  /** An input's fate changed (the whole current state of that input). */
  | { readonly type: 'input'; readonly input: TrackedInput }
  | { readonly type: 'approval'; readonly approval: ApprovalPrompt }
  | { readonly type: 'approval/end'; readonly id: string; readonly outcome: ApprovalOutcome }
  | { readonly type: 'compact/end'; readonly id: string; readonly result: CompactResult }
  /** The session started or stopped running on this host. */
  | { readonly type: 'mode'; readonly mode: SessionMode; readonly label?: string }
  /** Following the stored log failed; the stream stays open and retries. */
  | { readonly type: 'problem'; readonly code: string; readonly message: string }

/** WebSocket close codes the host uses (4000–4999 are the application's). */
export const CLOSE_CODES = {
  /** The client fell behind past the host's buffer; reason: `{"lastSeq":N}`, resume after N. */
  slow: 4008,
  /** The session went away (host closing, session deleted). */
  gone: 4010,
  /** The stored log could not be read (a `problem` message before it says why). */
  unreadable: 4011,
} as const

/** The reason text of a `slow` close: the last seq the host sent before dropping the client. */
export type SlowCloseReason = { readonly reason: 'slow'; readonly lastSeq: number }

/** Every error the API answers with. Messages are meant for people; no stack traces. */
export type ApiError = { readonly error: { readonly code: string; readonly message: string } }

/** A session as the list shows it. */
export type SessionSummary = SessionHeader & {
  readonly eventCount: number
  readonly updatedAt: number
  /** Whether this host runs it now. */
  readonly live: boolean
  readonly status?: AgentStatus
}

/** What an input endpoint answers: the delivery id, and its result once it settled. */
export type DeliveryAnswer = {
  readonly id: string
  readonly kind: 'prompt' | 'steering' | 'context' | 'continue' | 'compact'
  readonly settled: boolean
  readonly result?: DeliveryResult | CompactResult
}
