/**
 * Durability points per step (docs/spec.md §9.1, decision 0145), counted through the store
 * counters with the window timer out of the way: one sync before each request, one before each
 * group of tools that runs, one after `turn/end`. At each request and in each tool body the
 * durable log (read back through the store) already holds what the request is built from, or
 * the running call's `tool/call`.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineTool, type SessionEvent } from '../../src/index.js'
import type { SessionStore, StoreCounters, StoredSession } from '../../src/stores/index.js'
import { type ScriptEntry, type ScriptStep, scriptedProvider } from '../../src/testing.js'
import { notation } from '../support/agent-harness.js'
import { FILE_STORE_KINDS, storeOf, tempDirectory } from './support/stores.js'

/** Longer than any test: only explicit durability points write. */
const NO_WINDOW_MS = 2 ** 31 - 1

describe.each(FILE_STORE_KINDS)('durability points over the %s store', (kind) => {
  async function setUp() {
    const counters: StoreCounters = { syncs: 0, bytesWritten: 0, batches: 0 }
    const store = await storeOf(kind, tempDirectory(), { counters, flushWindowMs: NO_WINDOW_MS })
    const session = await store.create()
    return { counters, store, session }
  }

  /** The durable log, read back without the lease, in notation. */
  async function durable(store: SessionStore, session: StoredSession): Promise<string> {
    const snapshot = await store.read(session.header.id)
    return notation(snapshot.events as SessionEvent[])
  }

  it('a one-answer turn syncs twice: before its request and after turn/end', async () => {
    const { counters, store, session } = await setUp()
    const atRequest: string[] = []
    const answer: ScriptEntry = async () => {
      atRequest.push(await durable(store, session))
      return { text: 'hello' }
    }
    const agent = createAgent({ session, provider: scriptedProvider([answer]) })
    const before = { ...counters }
    await agent.send('hi').result
    expect(counters.syncs - before.syncs).toBe(2)
    expect(counters.batches - before.batches).toBe(2)
    expect(atRequest).toEqual(['T+1 U(hi) S+1 H'])
    expect(await durable(store, session)).toBe('T+1 U(hi) S+1 H A S-1 T-1(completed)')
    await agent.dispose()
  })

  it('a step with tools syncs before its request and before each group of tools', async () => {
    const { counters, store, session } = await setUp()
    const atRequest: string[] = []
    const inTool: Record<string, string> = {}
    const syncsInTool: Record<string, number> = {}
    const before = { ...counters }
    const probe = (name: string, concurrency: 'parallel' | 'exclusive') =>
      defineTool({
        name,
        description: 'Records what is durable while it runs.',
        parameters: z.object({}),
        concurrency,
        async execute(_args, context) {
          syncsInTool[context.callId] = counters.syncs - before.syncs
          inTool[context.callId] = await durable(store, session)
          return 'ok'
        },
      })
    const step =
      (result: ScriptStep): ScriptEntry =>
      async () => {
        atRequest.push(await durable(store, session))
        return result
      }
    const agent = createAgent({
      session,
      tools: [probe('look', 'parallel'), probe('write', 'exclusive')],
      provider: scriptedProvider([
        // One group of two parallel calls.
        step({
          toolCalls: [
            { id: 'c1', name: 'look', args: {} },
            { id: 'c2', name: 'look', args: {} },
          ],
        }),
        // Two groups: the exclusive call alone, then the parallel one.
        step({
          toolCalls: [
            { id: 'c3', name: 'write', args: {} },
            { id: 'c4', name: 'look', args: {} },
          ],
        }),
        step({ text: 'done' }),
      ]),
    })
    await agent.send('go').result
    // Step 1: request + one group; step 2: request + two groups; step 3: request; turn/end.
    expect(counters.syncs - before.syncs).toBe(7)
    expect(counters.batches - before.batches).toBe(7)
    expect(syncsInTool).toEqual({ c1: 2, c2: 2, c3: 4, c4: 5 })
    expect(atRequest).toEqual([
      'T+1 U(go) S+1 H',
      'T+1 U(go) S+1 H A TC(c1) TC(c2) TR(c1) TR(c2) S-1 S+2',
      'T+1 U(go) S+1 H A TC(c1) TC(c2) TR(c1) TR(c2) S-1 S+2 A TC(c3) TR(c3) TC(c4) TR(c4) S-2 S+3',
    ])
    // A tool runs only once its own tool/call (and everything before it) is durable.
    expect(inTool.c1).toBe('T+1 U(go) S+1 H A TC(c1) TC(c2)')
    expect(inTool.c2).toBe(inTool.c1)
    expect(inTool.c3).toMatch(/A TC\(c3\)$/)
    expect(inTool.c4).toMatch(/TC\(c3\) TR\(c3\) TC\(c4\)$/)
    await agent.dispose()
  })
})
