/** The approver's friendly replies become one ApprovalDecision at the edge (src/agent/approval.ts). */
import { describe, expect, it } from 'vitest'
import { toApprovalDecision } from '../../src/agent/approval.js'

describe('toApprovalDecision', () => {
  it.each([
    [true, { approved: true }],
    [false, { approved: false }],
    ['allow', { approved: true }],
    ['run', { approved: true }],
    ['deny', { approved: false }],
    ['maybe', { approved: false }],
    [{ approved: true }, { approved: true }],
    [
      { approved: false, reason: 'no' },
      { approved: false, reason: 'no' },
    ],
    [
      { action: 'run', reason: 'ok' },
      { approved: true, reason: 'ok' },
    ],
    [
      { action: 'deny', reason: 'no' },
      { approved: false, reason: 'no' },
    ],
    [{ action: 'other' }, { approved: false }],
    [{ approved: 'yes' }, { approved: false }],
  ])('%j means %j', (reply, decision) => {
    expect(toApprovalDecision(reply)).toEqual(decision)
  })

  it('has no decision for no reply at all, so the model is told what the approver said', () => {
    for (const reply of [undefined, null, 1]) expect(toApprovalDecision(reply)).toBeUndefined()
  })
})
