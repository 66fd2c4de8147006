/**
 * The runtime's approval wiring: the policy as the outermost tool-pre listener and the approve
 * callback. Protected changes always ask and are never approved unasked (issue 9 item 2).
 */
import { describe, expect, it } from 'vitest'
import type { ToolPreResult } from '../../src/agent/index.js'
import { approvalWiring } from '../../src/runtime/approval.js'
import type { RuntimeNotice } from '../../src/runtime/notices.js'
import { protectedPaths } from '../../src/tools/index.js'

const signal = new AbortController().signal

function wiring(yes: boolean, notices: RuntimeNotice[] = []) {
  return approvalWiring({
    policies: [
      { default: 'allow' },
      { default: 'allow', bash: [{ pattern: 'rm *', action: 'deny' }] },
    ],
    protectedPaths: protectedPaths({ workspace: '/w' }),
    yes,
    userConfigFile: '/home/me/.rudder/config.json',
    onNotice: (notice) => notices.push(notice),
  })
}

describe('approvalWiring', () => {
  it('lets later hooks run when the policy allows, and judges arguments they replace', async () => {
    const { toolPre } = wiring(true)
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
    const { toolPre } = wiring(true)
    const call = { id: 'c2', name: 'bash', args: { command: 'ls && rm -rf x' } }
    expect(await toolPre({ call, signal }, async () => ({ action: 'run' }))).toMatchObject({
      action: 'deny',
    })
  })

  it('--yes approves ordinary asks but never a protected change, which it reports', async () => {
    const notices: RuntimeNotice[] = []
    const { toolPre, approve } = wiring(true, notices)
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
    expect(notices.map((notice) => notice.kind)).toEqual(['protected-change-refused'])
    expect(await approve({ call: { id: 'c4', name: 'write', args: {} }, signal })).toBe(true)
  })

  it('without --yes, an ordinary ask is refused with where to configure approvals', async () => {
    const { approve } = wiring(false)
    expect(
      await approve({ call: { id: 'c5', name: 'bash', args: {} }, reason: 'bash: make', signal }),
    ).toEqual({
      approved: false,
      reason:
        'Not run: bash: make, and nobody was there to approve it. The user can allow it with --yes or in the "approval" section of /home/me/.rudder/config.json.',
    })
  })
})
