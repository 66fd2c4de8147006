/**
 * One session's turns, in arrival order: each `session/prompt` (and each steering message that
 * found no turn to join) is one turn, run one at a time. Three rules keep the wire honest:
 * 1. Turns start in a later macrotask than whatever made them startable, so the SDK has written
 *    the previous prompt's response before the next turn's first update.
 * 2. Turns are ordered by arrival number (arrivals.ts), not by when their handler ran.
 * 3. A `session/cancel` cancels every turn that arrived before it, even one whose handler runs
 *    after the cancel's: a turn checks the session's cancel mark when it is added and started.
 */
import type { Agent, Delivery, DeliveryResult, Session, UserMessageData } from '../../index.js'

/** How a queued turn ended, as its requester hears it. */
export type TurnEnd =
  /** The turn ran and ended; `isCanceled` when a cancel was asked for it meanwhile. */
  | { readonly kind: 'ended'; readonly result: DeliveryResult; readonly isCanceled: boolean }
  /** Canceled (or the session closed) before it started. */
  | { readonly kind: 'canceled' }
  /** The agent refused to take it (disposed, stopped after a fatal error). */
  | { readonly kind: 'failed'; readonly error: unknown }

export type TurnRequest = {
  readonly arrival: number
  readonly prompt: UserMessageData
  /** Contexts that belong to this prompt (embedded resources), logged right after it. */
  readonly contexts: readonly UserMessageData[]
  readonly onEnd: (end: TurnEnd) => void
}

export interface TurnQueue {
  /** Queues a turn; returns a function that cancels it (queued or running). */
  add(request: TurnRequest): () => void
  /** Cancels every turn that arrived before `mark` (queued ones end at once). */
  cancelBefore(mark: number): void
  /**
   * Steers the running turn when one is open and arrived before `arrival`: the message is
   * staged for its next step boundary. Undefined when there is no such turn.
   */
  steer(
    arrival: number,
    prompt: UserMessageData,
    contexts: readonly UserMessageData[],
  ): Delivery | undefined
  /** Ends queued turns as canceled and takes no more. The running turn ends with the agent. */
  close(): void
}

type Turn = TurnRequest & { isCanceled: boolean }

export type TurnQueueOptions = {
  readonly agent: Agent
  readonly session: Session
  /** The arrival number of the latest `session/cancel` for this session. */
  readonly cancelMark: () => number
  readonly log: (message: string) => void
}

export function createTurnQueue(options: TurnQueueOptions): TurnQueue {
  const { agent } = options
  const queue: Turn[] = []
  let current: Turn | undefined
  // From the prompt's send until its turn/end: steering sent now joins this turn.
  let isWindowOpen = false
  let isScheduled = false
  let isClosed = false

  // The contexts of the prompt being admitted. The prompt-submit hook is the one way to put
  // them inside its turn right after it, even while session-start listeners still run (when
  // an inject would land at once, before the turn).
  let admitting: readonly UserMessageData[] = []

  const stopWatching = options.session.subscribe((event) => {
    if (event.type === 'turn/end') isWindowOpen = false
  })
  const stopAdding = agent.on('prompt-submit', async (_event, next) => {
    const contexts = admitting
    admitting = []
    const result = await next()
    if (result.action !== 'admit' || contexts.length === 0) return result
    return { ...result, additionalContexts: [...contexts, ...result.additionalContexts] }
  })

  function end(turn: Turn, result: TurnEnd): void {
    try {
      turn.onEnd(result)
    } catch (error) {
      options.log(
        `a turn's requester failed: ${error instanceof Error ? error.message : String(error)}`,
      )
    }
  }

  function injectAll(contexts: readonly UserMessageData[]): void {
    for (const context of contexts) {
      try {
        agent.inject(context)
      } catch (error) {
        options.log(
          `an attached resource was not added: ${error instanceof Error ? error.message : String(error)}`,
        )
      }
    }
  }

  function schedule(): void {
    if (isScheduled || isClosed || current || queue.length === 0) return
    isScheduled = true
    // A macrotask: the response of the turn that just ended is on the wire before this starts.
    setImmediate(startNext)
  }

  function startNext(): void {
    isScheduled = false
    if (isClosed || current) return
    const turn = queue.shift()
    if (!turn) return
    if (turn.isCanceled || turn.arrival < options.cancelMark()) {
      end(turn, { kind: 'canceled' })
      schedule()
      return
    }
    let delivery: Delivery
    current = turn
    isWindowOpen = true
    admitting = turn.contexts
    try {
      delivery = agent.send(turn.prompt)
    } catch (error) {
      current = undefined
      isWindowOpen = false
      admitting = []
      end(turn, { kind: 'failed', error })
      schedule()
      return
    }
    delivery.result.then((result) => {
      current = undefined
      isWindowOpen = false
      end(turn, { kind: 'ended', result, isCanceled: turn.isCanceled })
      schedule()
    })
  }

  function cancel(turn: Turn): void {
    if (turn.isCanceled) return
    turn.isCanceled = true
    const index = queue.indexOf(turn)
    if (index >= 0) {
      queue.splice(index, 1)
      end(turn, { kind: 'canceled' })
    } else if (current === turn) agent.cancel()
  }

  return {
    add(request) {
      const turn: Turn = { ...request, isCanceled: false }
      if (isClosed || turn.arrival < options.cancelMark()) {
        end(turn, { kind: 'canceled' })
        return () => {}
      }
      const at = queue.findIndex((queued) => queued.arrival > turn.arrival)
      if (at < 0) queue.push(turn)
      else queue.splice(at, 0, turn)
      schedule()
      return () => cancel(turn)
    },
    cancelBefore(mark) {
      for (const turn of [...queue]) if (turn.arrival < mark) cancel(turn)
      if (current && current.arrival < mark) cancel(current)
    },
    steer(arrival, prompt, contexts) {
      if (!current || !isWindowOpen || current.isCanceled || current.arrival > arrival)
        return undefined
      const delivery = agent.steer(prompt)
      injectAll(contexts)
      return delivery
    },
    close() {
      if (isClosed) return
      isClosed = true
      stopWatching()
      stopAdding()
      for (const turn of queue.splice(0)) end(turn, { kind: 'canceled' })
    },
  }
}
