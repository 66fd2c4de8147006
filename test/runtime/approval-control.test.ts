/** Approval modes, session rules and askers, through a real agent and scripted model. */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { EventMap, ToolCallInfo } from '../../src/index.js'
import { defineTool } from '../../src/index.js'
import {
  type ApprovalAnswer,
  type ApprovalQuestion,
  createApprovalControl,
} from '../../src/runtime/approval-control.js'
import { DEFAULT_APPROVAL_POLICY } from '../../src/tools/approval-policy.js'
import { agentHarness } from '../support/agent-harness.js'

/** Stand-ins with the built-in names, so the policy treats them as it treats the real tools. */
const ran: string[] = []
const fake = (name: string) =>
  defineTool({
    name,
    description: name,
    parameters: z.object({ command: z.string().optional(), path: z.string().optional() }),
    execute: (args) => {
      ran.push(`${name}:${args.command ?? args.path ?? ''}`)
      return 'done'
    },
  })
const tools = [fake('bash'), fake('edit'), fake('read')]

function run(
  calls: { name: string; args: Record<string, string> }[],
  control: ReturnType<typeof createApprovalControl>,
) {
  ran.length = 0
  const harness = agentHarness([{ toolCalls: calls }, { text: 'end' }], {
    tools,
    hooks: { 'tool-pre': control.toolPre },
    approve: control.approve,
  })
  return harness
}

const firstError = (events: readonly { type: string; data: unknown }[]) =>
  events
    .filter((event) => event.type === 'tool/result')
    .map((event) => (event.data as EventMap['tool/result']).error?.message)[0]

const results = (events: readonly { type: string; data: unknown }[]) =>
  events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const data = event.data as EventMap['tool/result']
      return data.isError ? `${data.name}:${data.error?.code}` : `${data.name}:ok`
    })

describe('approval control', () => {
  it('asks the asker for what the policy asks about; "always" remembers the answer for the session', async () => {
    const questions: ApprovalQuestion[] = []
    const answers: ApprovalAnswer[] = [{ kind: 'allow', always: true }]
    const control = createApprovalControl({
      policies: [DEFAULT_APPROVAL_POLICY],
      asker: async (question) => {
        questions.push(question)
        return answers.shift() ?? { kind: 'deny' }
      },
    })
    const harness = run(
      [
        { name: 'read', args: { path: 'a' } },
        { name: 'bash', args: { command: 'npm test' } },
        { name: 'bash', args: { command: 'npm test' } },
        { name: 'bash', args: { command: 'rm x' } },
      ],
      control,
    )
    await harness.agent.send('go').result
    expect(questions.map((question) => question.rule)).toEqual([
      { tool: 'bash', command: 'npm test' },
      { tool: 'bash', command: 'rm x' },
    ])
    expect(results(harness.session.residentEvents)).toEqual([
      'read:ok',
      'bash:ok',
      'bash:ok',
      'bash:not-approved',
    ])
    expect(ran).toEqual(['read:a', 'bash:npm test', 'bash:npm test'])
    expect(control.rules).toEqual([{ tool: 'bash', command: 'npm test', action: 'allow' }])
  })

  it("gives the model the person's reason for a refusal, and 'always' refuses later calls unasked", async () => {
    let asked = 0
    const control = createApprovalControl({
      policies: [DEFAULT_APPROVAL_POLICY],
      asker: async () => {
        asked++
        return { kind: 'deny', always: true, reason: 'use the staging database' }
      },
    })
    const harness = run(
      [
        { name: 'edit', args: { path: 'db.ts' } },
        { name: 'edit', args: { path: 'other.ts' } },
      ],
      control,
    )
    await harness.agent.send('go').result
    expect(asked).toBe(1)
    const texts = harness.session.residentEvents
      .filter((event) => event.type === 'tool/result')
      .map((event) => (event.data as EventMap['tool/result']).error?.message)
    expect(texts[0]).toContain('use the staging database')
    expect(texts[1]).toContain('refused this call for the rest of the session')
    expect(ran).toEqual([])
  })

  it('auto-edit lets edits through and still asks for commands; yolo never overrides a deny rule', async () => {
    const policy = {
      ...DEFAULT_APPROVAL_POLICY,
      bash: [{ pattern: 'rm *', action: 'deny' as const }],
    }
    const control = createApprovalControl({ policies: [policy], mode: 'auto-edit' })
    const harness = run(
      [
        { name: 'edit', args: { path: 'a.ts' } },
        { name: 'bash', args: { command: 'ls' } },
      ],
      control,
    )
    await harness.agent.send('go').result
    expect(results(harness.session.residentEvents)).toEqual(['edit:ok', 'bash:not-approved'])

    control.setMode('yolo')
    const second = run(
      [
        { name: 'bash', args: { command: 'ls' } },
        { name: 'bash', args: { command: 'rm -rf build' } },
      ],
      control,
    )
    await second.agent.send('go').result
    expect(results(second.session.residentEvents)).toEqual(['bash:ok', 'bash:denied'])
    expect(() => control.setMode('careless' as never)).toThrow(/unknown approval mode/)
  })

  it('fails closed when the asker throws, and tells the model why', async () => {
    const control = createApprovalControl({
      policies: [DEFAULT_APPROVAL_POLICY],
      asker: async () => {
        throw new Error('the editor closed the dialog')
      },
    })
    const harness = run([{ name: 'bash', args: { command: 'ls' } }], control)
    await harness.agent.send('go').result
    expect(firstError(harness.session.residentEvents)).toContain('the editor closed the dialog')
    expect(ran).toEqual([])
  })

  it('with nobody to ask, refuses with the hint, or approves when told to (--yes)', async () => {
    const refusing = createApprovalControl({
      policies: [DEFAULT_APPROVAL_POLICY],
      unattendedHint: 'Pass --yes.',
    })
    const harness = run([{ name: 'bash', args: { command: 'ls' } }], refusing)
    await harness.agent.send('go').result
    expect(firstError(harness.session.residentEvents)).toMatch(
      /nobody was there to approve it\. Pass --yes\.$/,
    )
    const approving = createApprovalControl({
      policies: [DEFAULT_APPROVAL_POLICY],
      approveUnattended: true,
    })
    const second = run([{ name: 'bash', args: { command: 'ls' } }], approving)
    await second.agent.send('go').result
    expect(results(second.session.residentEvents)).toEqual(['bash:ok'])
  })

  it('setAsker swaps who answers and returns the previous one', async () => {
    const first = async (): Promise<ApprovalAnswer> => ({ kind: 'allow' })
    const control = createApprovalControl({ policies: [DEFAULT_APPROVAL_POLICY], asker: first })
    const seen: ToolCallInfo[] = []
    expect(
      control.setAsker(async (question) => {
        seen.push(question.call)
        return { kind: 'allow' }
      }),
    ).toBe(first)
    const harness = run([{ name: 'bash', args: { command: 'make' } }], control)
    await harness.agent.send('go').result
    expect(seen.map((call) => call.args)).toEqual([{ command: 'make' }])
  })

  it('runs inner tool-pre listeners even when the policy asks; their deny wins, their rewrite is judged again', async () => {
    const policy = {
      ...DEFAULT_APPROVAL_POLICY,
      bash: [{ pattern: 'rm *', action: 'deny' as const }],
    }
    let asked = 0
    const control = createApprovalControl({
      policies: [policy],
      asker: async () => {
        asked++
        return { kind: 'allow' }
      },
    })
    ran.length = 0
    const harness = agentHarness(
      [
        {
          toolCalls: [
            { name: 'bash', args: { command: 'make' } },
            { name: 'bash', args: { command: 'ls' } },
            { name: 'read', args: { path: 'a' } },
          ],
        },
        { text: 'end' },
      ],
      {
        tools,
        hooks: {
          'tool-pre': [
            control.toolPre,
            ({ call }) => {
              const args = call.args as { command?: string; path?: string }
              if (args.command === 'make') return { action: 'deny', reason: 'no make here' }
              // A rewrite into what the policy denies is denied, not asked about.
              if (args.command === 'ls') return { action: 'run', args: { command: 'rm -rf /' } }
              // A rewrite of an allowed read stays allowed.
              return { action: 'run', args: { path: 'b' } }
            },
          ],
        },
        approve: control.approve,
      },
    )
    await harness.agent.send('go').result
    expect(results(harness.session.residentEvents)).toEqual([
      'bash:denied',
      'bash:denied',
      'read:ok',
    ])
    expect(firstError(harness.session.residentEvents)).toContain('no make here')
    expect(asked).toBe(0)
    expect(ran).toEqual(['read:b'])
  })
})
