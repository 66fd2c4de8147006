/** `agent.configure()`: model, system prompt and tools change from the next step, logged as a header. */
import { describe, expect, it } from 'vitest'
import {
  checkLog,
  createAgent,
  createSession,
  type EventMap,
  project,
  RudderError,
  type SessionEvent,
} from '../../src/index.js'
import { scriptedProvider } from '../../src/testing.js'
import { agentHarness } from '../support/agent-harness.js'
import { echo, toolWith } from './tools.js'

const headers = (events: readonly SessionEvent[]) =>
  events
    .filter((event) => event.type === 'request/header')
    .map((event) => event.data as EventMap['request/header'])

describe('agent.configure', () => {
  it('changes the model and tools from the next step of a running turn, logging a new header', async () => {
    let configured = false
    const switcher = toolWith('switch', ({ agent }) => {
      // A tool may reconfigure the agent it runs in (as an MCP tool-list change would).
      const running = harness.agent
      running.configure({ model: 'bigger', system: 'be brief', tools: [echo] })
      configured = agent === running
    })
    const harness = agentHarness(
      [{ toolCalls: [{ name: 'switch', args: {} }] }, { text: 'done' }],
      { tools: [switcher], model: 'small' },
    )
    expect(await harness.agent.send('P').result).toMatchObject({ status: 'completed' })
    expect(configured).toBe(true)
    expect(harness.notation()).toBe(
      'T+1 U(P) S+1 H A TC(call_1_1) TR(call_1_1) S-1 S+2 H A S-2 T-1(completed)',
    )
    const [first, second] = headers(harness.session.residentEvents)
    expect(first).toMatchObject({ model: 'small', system: '', tools: [{ name: 'switch' }] })
    expect(second).toMatchObject({ model: 'bigger', system: 'be brief', tools: [{ name: 'echo' }] })
    expect(harness.provider.requests.map((request) => request.model)).toEqual(['small', 'bigger'])
    expect(harness.agent.settings.model).toBe('bigger')
  })

  it('switches the provider between turns; each request goes to the provider its header names', async () => {
    const first = scriptedProvider([{ text: 'one' }])
    const second = scriptedProvider([{ text: 'two' }])
    const session = createSession({ checkInvariants: true })
    const agent = createAgent({ session, provider: first, model: 'a' })
    await agent.send('P1').result
    agent.configure({ provider: second, model: 'b' })
    expect(await agent.send('P2').result).toMatchObject({ status: 'completed', text: 'two' })
    await agent.dispose()
    expect(first.requests).toHaveLength(1)
    expect(second.requests).toHaveLength(1)
    expect(second.requests[0]?.messages).toEqual(
      project(
        session.residentEvents.slice(
          0,
          session.residentEvents.findLastIndex((e) => e.type === 'step/start'),
        ),
      ),
    )
    expect(headers(session.residentEvents).map((header) => header.model)).toEqual(['a', 'b'])
    expect(checkLog(session.residentEvents)).toEqual([])
  })

  it('refuses duplicate tool names and keeps the previous settings', () => {
    const harness = agentHarness([], { tools: [echo] })
    expect(() => harness.agent.configure({ tools: [echo, echo] })).toThrow(RudderError)
    expect(harness.agent.settings.tools.map((tool) => tool.name)).toEqual(['echo'])
  })
})
