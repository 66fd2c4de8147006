/**
 * A step builds its `request/start` and `assistant/delta` notifications only while someone
 * listens (bench B5+). Listeners that come and go mid-turn hear exactly the steps they were
 * there for, and the log is the same whether anyone listens or not.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  type Agent,
  type AgentNotification,
  createAgent,
  createSession,
  defineTool,
  type SessionEvent,
} from '../../src/index.js'
import { type ScriptStep, scriptedProvider } from '../../src/testing.js'

const script: ScriptStep[] = [
  { text: 'one', toolCalls: [{ id: 'a', name: 'mark', args: { at: 1 } }] },
  { text: 'two', toolCalls: [{ id: 'b', name: 'mark', args: { at: 2 } }] },
  { text: 'three', toolCalls: [{ id: 'c', name: 'mark', args: { at: 3 } }] },
  { text: 'done' },
]

/** A turn of `script` whose tool calls `onMark(at)` as each step's tool runs. */
async function runTurn(
  onMark: (agent: Agent, at: number) => void,
  listenFromStart?: (notification: AgentNotification) => void,
) {
  const session = createSession({ checkInvariants: true })
  let agent: Agent | undefined
  const mark = defineTool({
    name: 'mark',
    description: 'marks a step',
    parameters: z.object({ at: z.number() }),
    execute: ({ at }) => {
      onMark(agent!, at)
      return `marked ${at}`
    },
  })
  agent = createAgent({
    session,
    provider: scriptedProvider(script, { chunkSize: 2 }),
    tools: [mark],
  })
  if (listenFromStart) agent.subscribe(listenFromStart)
  expect(await agent.send('go').result).toMatchObject({ status: 'completed', text: 'done' })
  await agent.dispose()
  return session.residentEvents
}

const heard = (notifications: readonly AgentNotification[]) =>
  notifications.flatMap((n) =>
    n.type === 'request/start'
      ? [`start ${n.step}`]
      : n.type === 'assistant/delta'
        ? [`delta ${n.step} ${n.block} ${n.text}`]
        : [],
  )

/** The log without what differs from run to run: times and message ids. */
const comparable = (events: readonly SessionEvent[]) =>
  JSON.stringify(events, (key, value) => (key === 'time' || key === 'id' ? undefined : value))

describe('notifications built only for listeners', () => {
  it('a listener that subscribes mid-turn hears the next steps; one that leaves, no more', async () => {
    const notifications: AgentNotification[] = []
    let unsubscribe: (() => void) | undefined
    await runTurn((agent, at) => {
      if (at === 1) unsubscribe = agent.subscribe((n) => notifications.push(n))
      if (at === 2) unsubscribe?.()
    })
    // Step 1 ran unheard, step 2 heard, steps 3 and 4 unheard again.
    expect(heard(notifications)).toEqual(['start 2', 'delta 2 0 tw', 'delta 2 0 o'])
  })

  it('a listener from the start hears every step, in order, as before', async () => {
    const notifications: AgentNotification[] = []
    await runTurn(
      () => {},
      (n) => notifications.push(n),
    )
    expect(heard(notifications)).toEqual([
      'start 1',
      'delta 1 0 on',
      'delta 1 0 e',
      'start 2',
      'delta 2 0 tw',
      'delta 2 0 o',
      'start 3',
      'delta 3 0 th',
      'delta 3 0 re',
      'delta 3 0 e',
      'start 4',
      'delta 4 0 do',
      'delta 4 0 ne',
    ])
    expect(notifications.find((n) => n.type === 'request/start')).toEqual({
      type: 'request/start',
      turn: 1,
      step: 1,
      attempt: 1,
      maxAttempts: 5,
    })
    expect(notifications.find((n) => n.type === 'assistant/delta')).toEqual({
      type: 'assistant/delta',
      turn: 1,
      step: 1,
      attempt: 1,
      block: 0,
      kind: 'text',
      text: 'on',
    })
  })

  it('the log is the same with and without a listener', async () => {
    const unheard = await runTurn(() => {})
    const listened = await runTurn(
      () => {},
      () => {},
    )
    expect(unheard.map((event) => event.type)).toEqual(listened.map((event) => event.type))
    expect(comparable(unheard)).toBe(comparable(listened))
    const text = unheard.find((event) => event.type === 'assistant/message')
    expect(text?.data).toMatchObject({ content: [{ type: 'text', text: 'one' }, { id: 'a' }] })
  })
})

describe('arguments that are not JSON', () => {
  it('are refused naming the block they are in, for each of the calls', async () => {
    for (const at of [0, 1, 2]) {
      const calls = [0, 1, 2].map((index) => ({
        id: `c${index}`,
        name: 'mark',
        args: index === at ? { n: Number.NaN } : { n: index },
      }))
      const session = createSession()
      const agent = createAgent({ session, provider: scriptedProvider([{ toolCalls: calls }]) })
      expect(await agent.send('go').result).toMatchObject({
        status: 'error',
        error: {
          code: 'INVALID_EVENT_DATA',
          message: expect.stringContaining(
            `cannot append "assistant/message": data.content[${at}].args.n is NaN`,
          ),
        },
      })
      await agent.dispose().catch(() => {})
    }
  })
})
