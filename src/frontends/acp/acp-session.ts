/**
 * One ACP session over one rudder session: its turn queue, its live `session/update` stream,
 * the replay of `session/load`, steering, injected context, notices and config changes.
 *
 * Updates are written in the order things happen, synchronously from the session's and the
 * agent's notifications, so a turn's last update is queued on the wire before the prompt's
 * response (which the SDK writes only after the handler's promise settles). Updates of a new
 * session wait until its id has been announced in the `session/new` response.
 */

import type * as acp from '@agentclientprotocol/sdk/unstable'
import { RequestError } from '@agentclientprotocol/sdk/unstable'
import { assertNever, type DeliveryResult, type UserMessageData } from '../../index.js'
import type { SessionRuntime } from '../../runtime/host.js'
import type { Notice } from '../../runtime/notices.js'
import type { Arrivals } from './arrivals.js'
import { toRequestError } from './errors.js'
import type { ConvertedPrompt } from './prompt-content.js'
import { configOptions, contextWindowOf, modeState } from './session-config.js'
import { createTurnQueue, type TurnEnd } from './turn-queue.js'
import { createUpdateMapper, type MapperOptions } from './update-mapper.js'

/** What the client said it can show (from `initialize`). */
export type ClientFeatures = {
  /** Zed's terminal convention: `clientCapabilities._meta.terminal_output === true`. */
  readonly terminalOutput: boolean
  readonly notices: boolean
  readonly compaction: boolean
}

/** The answer to `_session/steering`, as the Claude and Codex adapters give it. */
export type SteeringResponse = {
  readonly outcome: 'injected' | 'startedNewTurn' | 'promptRequired'
  readonly reason?: 'noRunningTurn'
  readonly _meta?: { readonly rudder: { readonly deliveryId: string } }
}

export interface AcpSession {
  readonly id: string
  readonly runtime: SessionRuntime
  /** One prompt, one turn, queued in arrival order; resolves when that turn ends. */
  prompt(prompt: ConvertedPrompt, arrival: number, signal: AbortSignal): Promise<acp.PromptResponse>
  /** Applies the session's latest `session/cancel` to everything that arrived before it. */
  cancel(): void
  /** Steers the running turn, or queues a turn (or asks for a prompt) when none runs. */
  steer(
    prompt: ConvertedPrompt,
    arrival: number,
    idleBehavior: string | undefined,
  ): SteeringResponse
  /** Adds a context: at once between turns, at the next step boundary inside one. */
  inject(data: UserMessageData): Promise<DeliveryResult>
  /**
   * Sends the whole log as updates (for `session/load`), then keeps streaming live. Resolves
   * when the last replayed update is written; rejects if the stored log cannot be read.
   */
  replay(): Promise<void>
  /** Starts writing live updates (buffered until the client knows the session id). */
  announce(): void
  /** Tells the client the modes and config options changed. */
  sendConfigChange(changed: 'mode' | 'config'): void
  notice(notice: Notice): void
  /** Cancels what runs, ends queued turns as canceled, closes the rudder session. */
  close(): Promise<void>
}

export type AcpSessionOptions = {
  readonly runtime: SessionRuntime
  readonly client: acp.AgentContext
  readonly features: ClientFeatures
  readonly arrivals: Arrivals
  readonly log: (message: string) => void
}

const PERSON = Object.freeze({ kind: 'user' as const })

export function createAcpSession(options: AcpSessionOptions): AcpSession {
  const { runtime, client, features, log } = options
  const id = runtime.session.header.id
  const buffered: acp.SessionUpdate[] = []
  let isAnnounced = false
  let closing: Promise<void> | undefined

  const mapperOptions = (mode: MapperOptions['mode']): MapperOptions => ({
    mode,
    cwd: runtime.cwd,
    terminalOutput: features.terminalOutput,
    notices: features.notices,
    compaction: features.compaction,
    contextWindow: () => contextWindowOf(runtime),
  })

  /** Live updates made while a replay reads the log, sent after it. */
  let held: acp.SessionUpdate[] | undefined
  let replays = 0

  function send(update: acp.SessionUpdate): void {
    if (!isAnnounced) buffered.push(update)
    else if (held) held.push(update)
    else notify(update)
  }

  function notify(update: acp.SessionUpdate): void {
    client.notify('session/update', { sessionId: id, update }).catch(() => {
      // The connection closed: there is nobody left to tell.
    })
  }

  const live = createUpdateMapper(mapperOptions('live'))
  const stopEvents = runtime.session.subscribe((event) => {
    for (const update of live.event(event)) send(update)
  })
  const stopLive = runtime.agent.subscribe((notification) => {
    // A listener aborted by the session closing is not a failure worth telling.
    if (notification.type === 'listener/error' && !closing)
      log(`${notification.source} failed: ${notification.message}`)
    for (const update of live.notification(notification)) send(update)
  })

  const turns = createTurnQueue({
    agent: runtime.agent,
    session: runtime.session,
    cancelMark: () => options.arrivals.cancelMark(id),
    log,
  })

  return {
    id,
    runtime,
    prompt(prompt, arrival, signal) {
      if (closing) return Promise.reject(closedError(id))
      return new Promise<acp.PromptResponse>((resolve, reject) => {
        // `add` may end the turn at once (a cancel already arrived), before it returns.
        let hasEnded = false
        const onAbort = () => cancelTurn()
        const cancelTurn = turns.add({
          arrival,
          prompt: { content: prompt.content, source: PERSON },
          contexts: prompt.contexts,
          onEnd(end) {
            hasEnded = true
            signal.removeEventListener('abort', onAbort)
            try {
              resolve(promptResponse(end))
            } catch (error) {
              reject(error)
            }
          },
        })
        // `$/cancel_request`, or the connection closing: cancel this turn like session/cancel.
        if (!hasEnded) signal.addEventListener('abort', onAbort, { once: true })
      })
    },
    cancel() {
      turns.cancelBefore(options.arrivals.cancelMark(id))
    },
    steer(prompt, arrival, idleBehavior) {
      if (closing) throw closedError(id)
      const data = { content: prompt.content, source: PERSON }
      const delivery = turns.steer(arrival, data, prompt.contexts)
      if (delivery) return { outcome: 'injected', _meta: { rudder: { deliveryId: delivery.id } } }
      if (idleBehavior === 'promptRequired')
        return { outcome: 'promptRequired', reason: 'noRunningTurn' }
      turns.add({
        arrival,
        prompt: data,
        contexts: prompt.contexts,
        onEnd(end) {
          if (end.kind === 'failed')
            log(`a steered turn could not start: ${toRequestError(end.error).message}`)
        },
      })
      return { outcome: 'startedNewTurn' }
    },
    inject(data) {
      if (closing) return Promise.reject(closedError(id))
      return runtime.agent.inject(data).result
    },
    async replay() {
      // Anything buffered is in the log too, so the replay carries it; what the session logs
      // or streams while the replay reads the log is held and sent after it.
      buffered.length = 0
      isAnnounced = true
      const throughSeq = runtime.session.nextSeq - 1
      held ??= []
      replays++
      try {
        const mapper = createUpdateMapper(mapperOptions('replay'))
        // Read from the store where the session does not hold its history (docs/spec.md §9.2).
        for await (const batch of runtime.session.readEvents({ throughSeq }))
          for (const event of batch) for (const update of mapper.event(event)) notify(update)
      } finally {
        // Two loads at once: live updates wait for the last replay to end.
        if (--replays === 0) {
          const updates = held ?? []
          held = undefined
          for (const update of updates) notify(update)
        }
      }
    },
    announce() {
      if (isAnnounced) return
      isAnnounced = true
      for (const update of buffered.splice(0)) send(update)
    },
    sendConfigChange(changed) {
      send(
        changed === 'mode'
          ? {
              sessionUpdate: 'current_mode_update',
              currentModeId: modeState(runtime).currentModeId,
            }
          : { sessionUpdate: 'config_option_update', configOptions: configOptions(runtime) },
      )
    },
    notice(notice) {
      log(`${notice.source}: ${notice.message}`)
      if (features.notices)
        send({
          sessionUpdate: 'notice',
          severity: notice.level,
          title: `${notice.source}: ${notice.message}`,
        })
    },
    close() {
      closing ??= (async () => {
        turns.close()
        try {
          await runtime.close()
        } finally {
          stopEvents()
          stopLive()
        }
      })()
      return closing
    },
  }
}

/** How a turn's end answers its `session/prompt` (docs/acp.md lists the mapping). */
export function promptResponse(end: TurnEnd): acp.PromptResponse {
  switch (end.kind) {
    case 'canceled':
      return { stopReason: 'cancelled' }
    case 'failed':
      throw toRequestError(end.error)
    case 'ended':
      return end.isCanceled ? { stopReason: 'cancelled' } : stopOf(end.result)
    default:
      return assertNever(end)
  }
}

function stopOf(result: DeliveryResult): acp.PromptResponse {
  switch (result.status) {
    case 'completed':
      return { stopReason: 'end_turn' }
    case 'max-tokens':
      return { stopReason: 'max_tokens' }
    case 'step-limit':
    case 'stop-limit':
      return { stopReason: 'max_turn_requests' }
    case 'canceled':
    case 'discarded':
      return { stopReason: 'cancelled' }
    case 'blocked':
      return { stopReason: 'refusal', _meta: { rudder: { reason: result.reason } } }
    case 'error':
      throw new RequestError(-32603, result.error?.message ?? 'the turn ended with an error', {
        code: result.error?.code,
        turn: result.turn,
      })
    case 'logged':
      // A prompt's delivery ends with its turn; `logged` is only ever an injected context's.
      throw new RequestError(-32603, 'rudder answered a prompt as if it were a context')
    default:
      return assertNever(result)
  }
}

function closedError(id: string): RequestError {
  return new RequestError(
    -32002,
    `session ${JSON.stringify(id)} is closing; open it again with session/load`,
    {
      sessionId: id,
    },
  )
}
