/**
 * The approval control's protected files and stacked policies: protected changes always ask
 * and are approved only by a person asked about them (issue 9 item 2); a second policy only
 * tightens the first.
 */
import { describe, expect, it } from 'vitest'
import type { ToolPreResult } from '../../src/agent/index.js'
import { createApprovalControl } from '../../src/runtime/approval-control.js'
import { protectedPaths } from '../../src/tools/index.js'

const signal = new AbortController().signal

function control(options: { yes: boolean; notices?: string[]; mode?: 'ask' | 'yolo' }) {
  return createApprovalControl({
    policies: [
      { default: 'allow' },
      { default: 'allow', bash: [{ pattern: 'rm *', action: 'deny' }] },
    ],
    protectedPaths: protectedPaths({ workspace: '/w' }),
    approveUnattended: options.yes,
    unattendedHint:
      'The user can allow it with --yes or in the "approval" section of /home/me/.rudder/config.json.',
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    onNotice: (message) => options.notices?.push(message),
  })
}

describe('approval control: protected files and stacked policies', () => {
  it('lets later hooks run when the policy allows, and judges arguments they replace', async () => {
    const { toolPre } = control({ yes: true })
    const call = { id: 'c1', name: 'write', args: { path: 'a.txt', content: '' } }
    const replaced: ToolPreResult = {
      action: 'run',
      args: { path: '.rudder/config.json', content: '' },
    }
    expect(await toolPre({ call, signal }, async () => ({ action: 'run' }))).toEqual({
      action: 'run',
    })
    expect(await toolPre({ call, signal }, async () => replaced)).toMatchObject({
      action: 'ask',
      reason: expect.stringContaining(".rudder/config.json (rudder's project configuration)"),
    })
  })

  it('applies the strictest of its policies: a second policy can only tighten', async () => {
    const { toolPre } = control({ yes: true })
    const call = { id: 'c2', name: 'bash', args: { command: 'ls && rm -rf x' } }
    expect(await toolPre({ call, signal }, async () => ({ action: 'run' }))).toMatchObject({
      action: 'deny',
    })
  })

  it('--yes (and yolo) approve ordinary asks but never a protected change, which is reported', async () => {
    const notices: string[] = []
    const { toolPre, approve } = control({ yes: true, notices, mode: 'yolo' })
    const call = {
      id: 'c3',
      name: 'edit',
      args: { path: '.git/hooks/pre-commit', oldText: 'a', newText: 'b' },
    }
    const decision = await toolPre({ call, signal }, async () => ({ action: 'run' }))
    expect(decision.action).toBe('ask')
    const answer = await approve({ call, reason: (decision as { reason: string }).reason, signal })
    expect(answer).toMatchObject({
      approved: false,
      reason: expect.stringContaining('--yes does not cover them'),
    })
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatch(/^refused edit of \.git\/hooks\/pre-commit/)
    expect(await approve({ call: { id: 'c4', name: 'write', args: {} }, signal })).toBe(true)
  })

  it('a person may approve one protected change; "always" is not remembered for them', async () => {
    const asked: string[] = []
    const approval = control({ yes: false })
    approval.setAsker(async (question) => {
      asked.push(question.call.id)
      return { kind: 'allow', always: true }
    })
    const call = (id: string) => ({ id, name: 'write', args: { path: '.mcp.json', content: '{}' } })
    for (const id of ['p1', 'p2']) {
      const decision = await approval.toolPre({ call: call(id), signal }, async () => ({
        action: 'run',
      }))
      expect(decision.action).toBe('ask')
      expect(await approval.approve({ call: call(id), signal })).toBe(true)
    }
    expect(asked).toEqual(['p1', 'p2'])
    expect(approval.rules).toEqual([])
  })

  it('without --yes, an ordinary ask is refused with where to configure approvals', async () => {
    const { approve } = control({ yes: false })
    expect(
      await approve({ call: { id: 'c5', name: 'bash', args: {} }, reason: 'bash: make', signal }),
    ).toEqual({
      approved: false,
      reason:
        'Not run: bash: make, and nobody was there to approve it. The user can allow it with --yes or in the "approval" section of /home/me/.rudder/config.json.',
    })
  })
})
