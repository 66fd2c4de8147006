/**
 * Approval questions of a running turn: allow once, always (for this session), or deny with
 * a reason the model is told. A question waits until someone answers or the turn is canceled.
 */
import { useState } from 'preact/hooks'
import type { ApprovalPrompt } from '../wire.js'
import { api, attempt } from './api-client.js'

export function Approvals(props: {
  sessionId: string
  approvals: ReadonlyMap<string, ApprovalPrompt>
  onError: (message: string) => void
}) {
  if (props.approvals.size === 0) return null
  return (
    <div class="approvals">
      {[...props.approvals.values()].map((approval) => (
        <Question key={approval.id} {...props} approval={approval} />
      ))}
    </div>
  )
}

function Question({
  sessionId,
  approval,
  onError,
}: {
  sessionId: string
  approval: ApprovalPrompt
  onError: (message: string) => void
}) {
  const [reason, setReason] = useState('')
  const answer = (body: { answer: 'allow' | 'deny'; always?: boolean; reason?: string }) =>
    void attempt(
      () =>
        api(
          'POST',
          `/api/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(approval.id)}`,
          body,
        ),
      onError,
    )
  const what = approval.rule.command ?? JSON.stringify(approval.args)
  return (
    <div class="approval" data-testid="approval">
      <div>
        <strong>{approval.name}</strong> wants to run: <code>{what}</code>
      </div>
      <div class="meta">{approval.reason}</div>
      <div class="buttons">
        <button type="button" onClick={() => answer({ answer: 'allow' })}>
          Allow once
        </button>
        <button type="button" onClick={() => answer({ answer: 'allow', always: true })}>
          Always allow {approval.rule.command === undefined ? approval.rule.tool : 'this command'}
        </button>
        <input
          placeholder="reason (optional)"
          value={reason}
          onInput={(event) => setReason(event.currentTarget.value)}
        />
        <button
          type="button"
          class="danger"
          onClick={() => answer({ answer: 'deny', ...(reason.trim() === '' ? {} : { reason }) })}
        >
          Deny
        </button>
      </div>
    </div>
  )
}
