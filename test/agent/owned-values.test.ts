/**
 * The agent hands the log the values it builds without a copy (decision 0077). What a tool or
 * the provider gave it is still copied: changing their objects afterwards never changes the
 * log, and every event the agent appends is frozen through and through.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  checkLog,
  defineTool,
  isEventOf,
  type SessionEvent,
  type ToolCallBlock,
} from '../../src/index.js'
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

  it("a tool/call takes the assistant message's frozen arguments, equal to what the provider sent", async () => {
    const sent = [
      { path: 'a.ts', lines: [1, 2], options: { deep: { yes: true } } },
      { path: 'b.ts', lines: [], options: {} },
    ]
    const tool = defineTool({
      name: 'read',
      description: 'reads',
      parameters: z.object({}).passthrough(),
      execute: () => 'ok',
    })
    const harness = agentHarness(
      [
        // One call alone (the usual path), then two in one message (a batch).
        { toolCalls: [{ id: 'c1', name: 'read', args: sent[0]! }] },
        {
          toolCalls: [
            { id: 'c2', name: 'read', args: sent[1]! },
            { id: 'c3', name: 'read', args: sent[0]! },
          ],
        },
        { text: 'done' },
      ],
      { tools: [tool] },
    )
    await harness.agent.send('P').result
    const events = harness.session.residentEvents
    const blocks = new Map<string, ToolCallBlock>()
    for (const event of events)
      if (isEventOf(event, 'assistant/message'))
        for (const block of event.data.content ?? [])
          if (block.type === 'tool-call') blocks.set(block.id, block)
    const starts = events.filter((event) => isEventOf(event, 'tool/call'))
    expect(starts.map((event) => event.data.callId)).toEqual(['c1', 'c2', 'c3'])
    const expected: Record<string, unknown> = { c1: sent[0], c2: sent[1], c3: sent[0] }
    for (const start of starts) {
      const block = blocks.get(start.data.callId)!
      expect(start.data.args).toBe(block.args)
      expect(start.data.args).toEqual(expected[start.data.callId])
      expect(start.data.args).not.toBe(expected[start.data.callId])
      expectDeepFrozen(start.data, `tool/call ${start.data.callId}`)
    }
    for (const args of sent) expect(Object.isFrozen(args)).toBe(false)
  })

  it('a tool/call with arguments a tool-pre hook put in logs a frozen copy of them', async () => {
    const replacement = { text: 'replaced', nested: { n: 1 } }
    const tool = defineTool({
      name: 'echo',
      description: 'echoes',
      parameters: z.object({ text: z.string(), nested: z.object({ n: z.number() }).optional() }),
      execute: ({ text }) => text,
    })
    const harness = agentHarness(
      [{ toolCalls: [{ id: 'c1', name: 'echo', args: { text: 'original' } }] }, { text: 'done' }],
      { tools: [tool], hooks: { 'tool-pre': () => ({ action: 'run', args: replacement }) } },
    )
    await harness.agent.send('P').result
    const events = harness.session.residentEvents
    const start = events.find((event) => isEventOf(event, 'tool/call'))
    if (!isEventOf(start, 'tool/call')) throw new Error('no tool/call')
    expect(start.data.args).toEqual(replacement)
    expect(start.data.args).not.toBe(replacement)
    expect(Object.isFrozen(replacement)).toBe(false)
    expectDeepFrozen(start.data, 'tool/call')
    const message = events.find((event) => isEventOf(event, 'assistant/message'))
    if (!isEventOf(message, 'assistant/message')) throw new Error('no assistant message')
    expect(message.data.content).toContainEqual({
      type: 'tool-call',
      id: 'c1',
      name: 'echo',
      args: { text: 'original' },
    })
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
