/**
 * Keys a model supplies are data, whatever their name (issue 9 item 5): a tool call's
 * `__proto__` argument reaches the live log, the stored log and the tool unchanged.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createAgent, isEventOf, openStore } from '../../src/index.js'
import { scriptedProvider } from '../../src/testing.js'
import { agentHarness } from '../support/agent-harness.js'
import { toolWith } from './tools.js'

const argumentsText = '{"__proto__":{"polluted":true},"text":"hi"}'

describe('model-supplied keys', () => {
  it('keeps a __proto__ tool argument in the assistant message and the tool/call event', async () => {
    let seen: unknown
    const probe = toolWith('probe', () => 'ok')
    const harness = agentHarness(
      [
        { toolCalls: [{ id: 'c1', name: 'probe', args: JSON.parse(argumentsText) }] },
        { text: 'done' },
      ],
      {
        tools: [probe],
        hooks: {
          'tool-pre': (event, next) => {
            seen = event.call.args
            return next()
          },
        },
      },
    )
    await harness.agent.send('P').result
    const call = harness.session.residentEvents.find((event) => isEventOf(event, 'tool/call'))
    if (!isEventOf(call, 'tool/call')) throw new Error('no tool/call event')
    expect(JSON.stringify(call?.data)).toBe(
      `{"callId":"c1","name":"probe","args":${argumentsText}}`,
    )
    const message = harness.session.residentEvents.find(
      (event) => event.type === 'assistant/message',
    )
    expect(JSON.stringify(message?.data)).toContain(argumentsText)
    expect(JSON.stringify(seen)).toBe(argumentsText)
    expect(Object.getPrototypeOf(call?.data.args)).toBe(Object.prototype)
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined()
  })

  it('the stored event equals the live one after a reopen', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rudder-core-proto-'))
    try {
      const store = await openStore(`jsonl:${root}`)
      const session = await store.create({})
      const agent = createAgent({
        session,
        provider: scriptedProvider([
          { toolCalls: [{ id: 'c1', name: 'missing', args: JSON.parse(argumentsText) }] },
          { text: 'done' },
        ]),
      })
      await agent.send('P').result
      await agent.dispose()
      const live = JSON.stringify(session.residentEvents)
      await session.close()
      const reopened = await store.open(session.header.id)
      expect(JSON.stringify(reopened.residentEvents)).toBe(live)
      expect(live).toContain(argumentsText)
      await reopened.close()
      await store.close()
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})
