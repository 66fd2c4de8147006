/**
 * The agent hands the log the values it builds without a copy (decision 0077). What a tool or
 * the provider gave it is still copied: changing their objects afterwards never changes the
 * log, and every event the agent appends is frozen through and through.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { checkLog, defineTool, isEventOf, type SessionEvent } from '../../src/index.js'
import { agentHarness } from '../support/agent-harness.js'

function expectDeepFrozen(value: unknown, path: string): void {
  if (typeof value !== 'object' || value === null) return
  expect(Object.isFrozen(value), `${path} is frozen`).toBe(true)
  for (const [key, item] of Object.entries(value)) expectDeepFrozen(item, `${path}.${key}`)
}

const snapshot = (events: readonly SessionEvent[]) => JSON.stringify(events)

describe('values the agent hands to the log', () => {
  it('a tool that changes the blocks it returned does not change the log', async () => {
    const returned = [{ type: 'text' as const, text: 'first' }]
    const tool = defineTool({
      name: 'blocks',
      description: 'returns blocks it keeps',
      parameters: z.object({}),
      execute: () => returned,
    })
    const harness = agentHarness(
      [{ toolCalls: [{ id: 'c1', name: 'blocks', args: {} }] }, { text: 'done' }],
      { tools: [tool] },
    )
    await harness.agent.send('P').result
    const before = snapshot(harness.session.residentEvents)
    returned[0]!.text = 'changed'
    returned.push({ type: 'text', text: 'more' })
    expect(Object.isFrozen(returned)).toBe(false)
    expect(snapshot(harness.session.residentEvents)).toBe(before)
    const result = harness.session.residentEvents.find((event) => isEventOf(event, 'tool/result'))
    expect(JSON.stringify(result?.data)).toContain('"text":"first"')
  })

  it("the provider's call arguments stay the provider's: not frozen, and changing them changes no event", async () => {
    const args: { text: string; extra?: number } = { text: 'hi' }
    let received: unknown
    const tool = defineTool({
      name: 'echo',
      description: 'echoes',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        received = text
        return `echo: ${text}`
      },
    })
    const harness = agentHarness(
      [{ toolCalls: [{ id: 'c1', name: 'echo', args }] }, { text: 'done' }],
      { tools: [tool] },
    )
    await harness.agent.send('P').result
    expect(received).toBe('hi')
    expect(Object.isFrozen(args)).toBe(false)
    const before = snapshot(harness.session.residentEvents)
    args.text = 'changed'
    args.extra = 1
    expect(snapshot(harness.session.residentEvents)).toBe(before)
  })

  it('every event of a run is frozen through and through, and the log is valid', async () => {
    const harness = agentHarness(
      [
        { thinking: 'hmm', text: 'looking', toolCalls: [{ id: 'c1', name: 'echo', args: {} }] },
        { toolCalls: [{ id: 'c2', name: 'missing', args: { a: [1, { b: 2 }] } }] },
        { text: 'done' },
      ],
      {
        tools: [
          defineTool({
            name: 'echo',
            description: 'ok',
            parameters: z.object({}),
            execute: () => 'ok',
          }),
        ],
      },
    )
    await harness.agent.send('P').result
    const events = harness.session.residentEvents
    for (const event of events) expectDeepFrozen(event, `seq ${event.seq}`)
    expect(checkLog(events)).toEqual([])
    expect(events.map((event) => event.type)).toContain('tool/result')
  })
})
