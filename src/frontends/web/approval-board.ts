/**
 * Approval questions put to whoever watches a session in a browser. A question waits until a
 * person answers it (from any page connected to the session) or its turn is canceled (the
 * question's signal aborts; the call is then refused). It does not time out and does not
 * depend on a page being connected: a page that reconnects gets the open questions again
 * (docs/decisions/0103-web-approvals.md).
 */
import type { ApprovalAnswer, ApprovalQuestion, Asker } from '../../runtime/approval-control.js'
import type { ApprovalOutcome, ApprovalPrompt } from './wire.js'

export type ApprovalBoardListener = (
  change:
    | { readonly type: 'approval'; readonly approval: ApprovalPrompt }
    | { readonly type: 'approval/end'; readonly id: string; readonly outcome: ApprovalOutcome },
) => void

export interface ApprovalBoard {
  /** The session's asker (hand it to `host.openSession`). */
  readonly asker: Asker
  /** Questions waiting now, oldest first. */
  open(): ApprovalPrompt[]
  /** Answers a waiting question. Returns false when there is none with this id (answered, canceled). */
  answer(id: string, answer: ApprovalAnswer): boolean
  /** Listens to questions asked and ended. Returns the unsubscribe function. */
  subscribe(listener: ApprovalBoardListener): () => void
}

type Waiting = {
  readonly prompt: ApprovalPrompt
  readonly settle: (answer: ApprovalAnswer | undefined) => void
}

export function createApprovalBoard(): ApprovalBoard {
  const waiting = new Map<string, Waiting>()
  const listeners = new Set<ApprovalBoardListener>()
  let counter = 0
  const emit: ApprovalBoardListener = (change) => {
    for (const listener of listeners) listener(change)
  }

  const asker: Asker = (question: ApprovalQuestion) =>
    new Promise<ApprovalAnswer>((resolve, reject) => {
      const id = `approval-${++counter}`
      const prompt: ApprovalPrompt = {
        id,
        callId: question.call.id,
        name: question.call.name,
        args: question.call.args,
        reason: question.reason,
        rule: question.rule,
      }
      const onAbort = () => settle(undefined)
      const settle = (answer: ApprovalAnswer | undefined) => {
        if (!waiting.delete(id)) return
        question.signal.removeEventListener('abort', onAbort)
        emit({ type: 'approval/end', id, outcome: answer?.kind ?? 'canceled' })
        if (answer) resolve(answer)
        // The approval control refuses the call when the asker rejects (fail closed).
        else reject(new Error('the turn was canceled before anyone answered'))
      }
      if (question.signal.aborted) {
        reject(new Error('the turn was canceled before anyone answered'))
        return
      }
      waiting.set(id, { prompt, settle })
      question.signal.addEventListener('abort', onAbort, { once: true })
      emit({ type: 'approval', approval: prompt })
    })

  return {
    asker,
    open: () => [...waiting.values()].map((entry) => entry.prompt),
    answer(id, answer) {
      const entry = waiting.get(id)
      if (!entry) return false
      entry.settle(answer)
      return true
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
