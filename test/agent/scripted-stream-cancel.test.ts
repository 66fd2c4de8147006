/**
 * A plain scripted step streams from a hand-written iterator, a step given as a function from
 * an async generator (decision 0168). A cancel mid-stream must leave the same log either way:
 * the streamed text kept as an interrupted message, the turn canceled, the stream ended with
 * `return()` so that the next request gets the next step.
 */
import { describe, expect, it } from 'vitest'
import { createAgent, createSession, type SessionEvent } from '../../src/index.js'
import { type ScriptEntry, type ScriptStep, scriptedProvider } from '../../src/testing.js'

const script: ScriptStep[] = [
  { text: 'abcdefgh', toolCalls: [{ id: 'never', name: 'missing', args: {} }] },
  { text: 'second answer' },
]

/** Two prompts; the first is canceled by a listener once `cancelAt` deltas were heard. */
async function run(entries: readonly ScriptEntry[], cancelAt: number) {
  const session = createSession({ checkInvariants: true })
  const provider = scriptedProvider(entries, { chunkSize: 2 })
  const agent = createAgent({ session, provider })
  let deltas = 0
  agent.subscribe((notification) => {
    if (notification.type === 'assistant/delta' && ++deltas === cancelAt) agent.cancel()
  })
  const first = await agent.send('one').result
  const second = await agent.send('two').result
  await agent.dispose()
  return { first, second, events: session.residentEvents, requests: provider.requests.length }
}

/** The log without what differs from run to run: times and message ids. */
const comparable = (events: readonly SessionEvent[]) =>
  JSON.stringify(events, (key, value) => (key === 'time' || key === 'id' ? undefined : value))

describe('a scripted stream canceled mid-stream', () => {
  it('keeps the streamed text as interrupted, ends the turn canceled, and the next request gets the next step', async () => {
    const plain = await run(script, 2)
    expect(plain.first).toMatchObject({ status: 'canceled' })
    expect(plain.second).toMatchObject({ status: 'completed', text: 'second answer' })
    expect(plain.requests).toBe(2)
    const interrupted = plain.events.filter((event) => event.type === 'assistant/message')[0]
    expect(interrupted?.data).toMatchObject({
      content: [{ type: 'text', text: 'abcd' }],
      stopReason: 'canceled',
      interrupted: true,
    })
    expect(plain.events.some((event) => event.type === 'tool/call')).toBe(false)
  })

  it('leaves the same log as the generator that answers a step given as a function', async () => {
    for (const cancelAt of [1, 2, 3, 4, 5]) {
      const plain = await run(script, cancelAt)
      const generated = await run(
        script.map((step) => () => step),
        cancelAt,
      )
      expect(comparable(plain.events)).toBe(comparable(generated.events))
      expect(plain.first).toEqual(generated.first)
      expect(plain.second).toEqual(generated.second)
    }
  })
})
