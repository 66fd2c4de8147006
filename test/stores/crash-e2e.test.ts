/**
 * End to end: an agent in a child process over a SQLite or JSONL store is SIGKILLed (a) while
 * the model streams, (b) inside a side-effecting tool body, (c) between turns right after an
 * idle inject. Reopening shows the exact repaired tail, the injected message is kept, and a
 * resumed `send` works (docs/spec.md scenarios 25, 27 and 30).
 */
import { describe, expect, it } from 'vitest'
import { checkLog, type SessionEvent } from '../../src/index.js'
import { agentHarness, notation } from '../support/agent-harness.js'
import '../support/verify-agents.js'
import { startChild } from './support/child-process.js'
import { FILE_STORE_KINDS, storeOf, tempDirectory, urlOf } from './support/stores.js'

describe.each(FILE_STORE_KINDS)('an agent killed over the %s store', (kind) => {
  async function killedAt(scenario: string) {
    const directory = tempDirectory()
    const child = startChild('agent-child.ts', [urlOf(kind, directory), scenario])
    const ready = await child.next()
    await child.kill()
    const store = await storeOf(kind, directory)
    const session = await store.open(ready.id as string)
    return { session, before: ready.events as SessionEvent[] }
  }

  /** Resumes with a new prompt and checks the new turn continues the numbering. */
  async function resume(session: Awaited<ReturnType<typeof killedAt>>['session']) {
    const from = session.residentEvents.length
    const harness = agentHarness([{ text: 'resumed fine' }], { session })
    const result = await harness.agent.send('carry on').result
    expect(result).toMatchObject({ status: 'completed', text: 'resumed fine' })
    return { harness, tail: harness.notation(from) }
  }

  it('(a) while the model streams: the open step and turn are closed as interrupted', async () => {
    const { session, before } = await killedAt('streaming')
    expect(notation(before)).toBe('T+1 U(write the file) S+1 H')
    expect(notation(session.residentEvents)).toBe(
      'T+1 U(write the file) S+1 H S-1 T-1(interrupted)',
    )
    expect(session.residentEvents.slice(0, before.length)).toEqual(before)
    expect(session.repairs).toEqual([
      { kind: 'turn-closed', turn: 1, fromSeq: 4, toSeq: 5, results: [] },
    ])
    const { harness, tail } = await resume(session)
    expect(tail).toBe('T+2 U(carry on) S+1 A S-1 T-2(completed)')
    expect(harness.requestTexts(0)).toEqual(['write the file', 'carry on'])
  })

  it('(b) inside a side-effecting tool: outcome-unknown for it, interrupted for the next', async () => {
    const { session, before } = await killedAt('tool')
    expect(notation(before)).toBe('T+1 U(write a.txt, then list) S+1 H A TC(c1)')
    expect(notation(session.residentEvents.slice(before.length))).toBe(
      'TR(c1) TR(c2) S-1 T-1(interrupted)',
    )
    const [unknown, interrupted] = session.residentEvents.slice(before.length)
    expect(unknown!.data).toMatchObject({
      callId: 'c1',
      name: 'write_file',
      isError: true,
      error: { code: 'outcome-unknown' },
    })
    expect(JSON.stringify(unknown!.data)).toContain('Do not retry side-effecting work blindly')
    expect(interrupted!.data).toMatchObject({
      callId: 'c2',
      name: 'list',
      isError: true,
      error: { code: 'interrupted' },
    })
    const { harness, tail } = await resume(session)
    // The resumed agent has no tools, so its request header differs and is logged again.
    expect(tail).toBe('T+2 U(carry on) S+1 H A S-1 T-2(completed)')
    // The model sees both crash results before the new prompt.
    expect(harness.requestTexts(0).slice(-3, -1)).toEqual([
      expect.stringMatching(/^tool:The tool call write_file started.*outcome is unknown/),
      expect.stringMatching(/^tool:The tool call list never started/),
    ])
  })

  it('(c) between turns right after an idle inject: the message is kept, unchanged', async () => {
    const { session, before } = await killedAt('idle-inject')
    const injected = 'U(<system-reminder>the build is green</system-reminder>)'
    expect(notation(before)).toBe(`T+1 U(hi) S+1 H A S-1 T-1(completed) ${injected}`)
    expect(session.residentEvents).toEqual(before)
    expect(session.repairs).toEqual([])
    expect(session.residentEvents.at(-1)!.data).toMatchObject({
      source: { kind: 'plugin', name: 'e2e' },
    })
    const { harness, tail } = await resume(session)
    expect(tail).toBe('T+2 U(carry on) S+1 A S-1 T-2(completed)')
    expect(harness.requestTexts(0)).toEqual([
      'hi',
      'assistant:hello',
      '<system-reminder>the build is green</system-reminder>',
      'carry on',
    ])
    expect(checkLog(session.residentEvents)).toEqual([])
  })
})
