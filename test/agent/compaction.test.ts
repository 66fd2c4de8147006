/** Compaction (docs/spec.md §10): manual between turns, automatic before a step, and after an overflow. */
import { describe, expect, it } from 'vitest'
import { checkLog, project, textOf } from '../../src/index.js'
import { agentHarness } from '../support/agent-harness.js'

const long = (label: string) => `${label} ${'words '.repeat(40)}`

describe('compaction', () => {
  it('manual: summarizes older turns, keeps recent ones, and the next request starts with the summary', async () => {
    const harness = agentHarness(
      [{ text: long('A1') }, { text: long('A2') }, { text: 'SUMMARY TEXT' }, { text: 'A3' }],
      {
        compaction: { keepRecentTokens: 150 },
      },
    )
    await harness.agent.send(long('P1')).result
    await harness.agent.send(long('P2')).result
    const result = await harness.agent.compact({ instructions: 'Mention P1.' })
    expect(result).toMatchObject({ status: 'compacted' })
    const event = harness.session.residentEvents.at(-1)!
    expect(event.type).toBe('compaction')
    const data = event.data as {
      firstKeptSeq: number
      reason: string
      tokensBefore: number
      tokensAfter: number
      summary: { text: string }[]
    }
    // The cut keeps the second turn (it starts at seq 7) and summarizes the first.
    expect(data.firstKeptSeq).toBe(7)
    expect(data.reason).toBe('manual')
    expect(data.tokensAfter).toBeLessThan(data.tokensBefore)
    expect(data.summary[0]!.text).toContain('SUMMARY TEXT')
    const summarizing = harness.provider.requests[2]!
    expect(textOf(summarizing.messages.at(-1)!.content)).toContain('Mention P1.')
    expect(summarizing.tools).toEqual([])
    await harness.agent.send('P3').result
    expect(harness.requestTexts(3)[0]).toContain('SUMMARY TEXT')
    expect(harness.requestTexts(3).slice(1)).toEqual([long('P2'), `assistant:${long('A2')}`, 'P3'])
    expect(harness.notation()).toContain('T-2(completed) C T+3')
  })

  it('manual: skips when there is nothing older than what it keeps', async () => {
    const harness = agentHarness([{ text: 'short' }])
    await harness.agent.send('P').result
    expect(await harness.agent.compact()).toMatchObject({ status: 'skipped' })
    expect(harness.session.residentEvents.some((e) => e.type === 'compaction')).toBe(false)
  })

  it('manual: a failed summary leaves the log unchanged', async () => {
    const harness = agentHarness(
      [{ text: long('A1') }, { error: { code: 'bad', message: 'summary failed' } }],
      { compaction: { keepRecentTokens: 1 } },
    )
    await harness.agent.send(long('P1')).result
    const before = harness.session.residentEvents.length
    expect(await harness.agent.compact()).toEqual({
      status: 'error',
      error: { code: 'bad', message: 'summary failed' },
    })
    expect(harness.session.residentEvents).toHaveLength(before)
  })

  it('auto: compacts inside the turn before a step once the prompt passes the threshold', async () => {
    const harness = agentHarness([{ text: long('A1') }, { text: 'SUMMARY' }, { text: 'A2' }], {
      compaction: { contextWindow: 100, auto: { threshold: 0.5 }, keepRecentTokens: 20 },
    })
    await harness.agent.send(long('P1')).result
    await harness.agent.send('P2').result
    expect(harness.notation().replace(/( words)+ /g, '…')).toBe(
      'T+1 U(P1…) S+1 H A S-1 T-1(completed) T+2 U(P2) C S+1 A S-1 T-2(completed)',
    )
    const compaction = harness.session.residentEvents.find((e) => e.type === 'compaction')!
    expect(compaction.data).toMatchObject({ reason: 'auto', firstKeptSeq: 7 })
    expect(harness.requestTexts(2)).toEqual([expect.stringContaining('SUMMARY'), 'P2'])
  })

  it('overflow: compacts after the provider reports context overflow, then retries in a new step', async () => {
    const harness = agentHarness(
      [
        { text: long('A1') },
        { error: { code: 'context-overflow', message: 'prompt is too long' } },
        { text: 'SUMMARY' },
        { text: 'fits now' },
      ],
      { compaction: { keepRecentTokens: 40 } },
    )
    await harness.agent.send(long('P1')).result
    expect(await harness.agent.send('P2').result).toMatchObject({
      status: 'completed',
      turn: 2,
      text: 'fits now',
    })
    expect(harness.notation(7)).toBe('T+2 U(P2) S+1 S-1 C S+2 A S-2 T-2(completed)')
    expect(harness.session.residentEvents.find((e) => e.type === 'compaction')!.data).toMatchObject(
      {
        reason: 'overflow',
      },
    )
    expect(checkLog(harness.session.residentEvents)).toEqual([])
    expect(project(harness.session.residentEvents)[0]!.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('SUMMARY'),
    })
  })

  it('overflow: ends the turn with the error when compaction cannot help', async () => {
    const harness = agentHarness([
      { error: { code: 'context-overflow', message: 'prompt is too long' } },
    ])
    const result = await harness.agent.send('P').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'context-overflow' } })
    expect(result.status === 'error' && result.error?.message).toContain('compaction did not help')
  })

  it('cancel discards a queued compaction', async () => {
    const harness = agentHarness([{ text: 'x', hold: new Promise(() => {}) }])
    const prompt = harness.agent.send('P')
    const compaction = harness.agent.compact()
    await new Promise<void>((resolve) =>
      harness.agent.subscribe((n) => n.type === 'assistant/delta' && resolve()),
    )
    harness.agent.cancel()
    expect(await compaction).toEqual({ status: 'discarded', reason: 'canceled' })
    await prompt.result
  })
})
