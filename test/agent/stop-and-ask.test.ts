/**
 * Two small extension-point additions the command-hook bridges need
 * (docs/decisions/0111-hook-stop-and-ask-with-arguments.md): a `step` or `turn-stopping`
 * listener may end the turn with `stop()`, and a `tool-pre` `ask` may carry replaced arguments.
 */
import { describe, expect, it } from 'vitest'
import type { ApprovalRequest, EventMap } from '../../src/index.js'
import { agentHarness } from '../support/agent-harness.js'
import { echo } from './tools.js'

const call = (id: string, text: string) => ({ id, name: 'echo', args: { text } })

describe('stop() from a listener', () => {
  it('turn-stopping stop() ends the turn even when another listener steered', async () => {
    const harness = agentHarness([{ text: 'first' }, { text: 'never' }], {
      hooks: {
        'turn-stopping': [
          () => void harness.agent.steer('keep going'),
          ({ stop }) => {
            stop()
          },
        ],
      },
    })
    const result = await harness.agent.send('P').result
    expect(result).toMatchObject({ status: 'completed', turn: 1, text: 'first' })
    // The staged steering is still logged before turn/end; no second step runs.
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A S-1 G(keep going) T-1(completed)')
    expect(harness.provider.requests).toHaveLength(1)
  })

  it('step stop() ends the turn before the step runs, after the tool results', async () => {
    let steps = 0
    const harness = agentHarness([{ toolCalls: [call('c1', 'x')] }, { text: 'never' }], {
      tools: [echo],
      hooks: {
        step: ({ step, stop }) => {
          steps++
          if (step === 2) stop()
        },
      },
    })
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed', turn: 1 })
    expect(harness.notation()).toBe('T+1 U(P) S+1 H A TC(c1) TR(c1) S-1 T-1(completed)')
    expect(steps).toBe(2)
    expect(harness.provider.requests).toHaveLength(1)
  })
})

describe('tool-pre ask with replaced arguments', () => {
  it('asks about the replaced arguments and runs them when approved; the log records them', async () => {
    const asked: ApprovalRequest[] = []
    const harness = agentHarness([{ toolCalls: [call('c1', 'original')] }, { text: 'done' }], {
      tools: [echo],
      hooks: {
        'tool-pre': () => ({ action: 'ask', reason: 'check it', args: { text: 'replaced' } }),
      },
      approve: (request) => {
        asked.push(request)
        return true
      },
    })
    await harness.agent.send('P').result
    expect(asked.map((request) => [request.call.args, request.reason])).toEqual([
      [{ text: 'replaced' }, 'check it'],
    ])
    const toolCall = harness.session.residentEvents.find((event) => event.type === 'tool/call')
    expect((toolCall!.data as EventMap['tool/call']).args).toEqual({ text: 'replaced' })
    const result = harness.session.residentEvents.find((event) => event.type === 'tool/result')
    expect((result!.data as EventMap['tool/result']).content).toEqual([
      { type: 'text', text: 'echo: replaced' },
    ])
  })

  it('refuses replaced arguments the tool rejects, without asking', async () => {
    let asked = 0
    const harness = agentHarness([{ toolCalls: [call('c1', 'original')] }, { text: 'done' }], {
      tools: [echo],
      hooks: { 'tool-pre': () => ({ action: 'ask', args: { text: 42 } }) },
      approve: () => {
        asked++
        return true
      },
    })
    await harness.agent.send('P').result
    expect(asked).toBe(0)
    const result = harness.session.residentEvents.find((event) => event.type === 'tool/result')
    expect((result!.data as EventMap['tool/result']).error?.code).toBe('invalid-arguments')
  })
})
