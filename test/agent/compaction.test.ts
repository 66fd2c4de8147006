/** Compaction (docs/spec.md §10): manual between turns, automatic before a step, and after an overflow. */
import { describe, expect, it } from 'vitest'
import { checkLog, project, textOf } from '../../src/index.js'
import { agentHarness } from '../support/agent-harness.js'

const long = (label: string) => `${label} ${'words '.repeat(40)}`

describe('compaction', () => {
  it('manual: summarizes older turns, keeps recent ones, and the next request starts with the summary', async () => {
    const h = agentHarness(
      [{ text: long('A1') }, { text: long('A2') }, { text: 'SUMMARY TEXT' }, { text: 'A3' }],
      {
        compaction: { keepRecentTokens: 150 },
      },
    )
    await h.agent.send(long('P1')).result
    await h.agent.send(long('P2')).result
    const result = await h.agent.compact({ instructions: 'Mention P1.' })
    expect(result).toMatchObject({ status: 'compacted' })
    const event = h.session.events.at(-1)!
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
    const summarizing = h.provider.requests[2]!
    expect(textOf(summarizing.messages.at(-1)!.content)).toContain('Mention P1.')
    expect(summarizing.tools).toEqual([])
    await h.agent.send('P3').result
    expect(h.requestTexts(3)[0]).toContain('SUMMARY TEXT')
    expect(h.requestTexts(3).slice(1)).toEqual([long('P2'), `assistant:${long('A2')}`, 'P3'])
    expect(h.notation()).toContain('T-2(completed) C T+3')
  })

  it('manual: skips when there is nothing older than what it keeps', async () => {
    const h = agentHarness([{ text: 'short' }])
    await h.agent.send('P').result
    expect(await h.agent.compact()).toMatchObject({ status: 'skipped' })
    expect(h.session.events.some((e) => e.type === 'compaction')).toBe(false)
  })

  it('manual: a failed summary leaves the log unchanged', async () => {
    const h = agentHarness(
      [{ text: long('A1') }, { error: { code: 'bad', message: 'summary failed' } }],
      { compaction: { keepRecentTokens: 1 } },
    )
    await h.agent.send(long('P1')).result
    const before = h.session.events.length
    expect(await h.agent.compact()).toEqual({
      status: 'error',
      error: { code: 'bad', message: 'summary failed' },
    })
    expect(h.session.events).toHaveLength(before)
  })

  it('auto: compacts inside the turn before a step once the prompt passes the threshold', async () => {
    const h = agentHarness([{ text: long('A1') }, { text: 'SUMMARY' }, { text: 'A2' }], {
      compaction: { contextWindow: 100, auto: { threshold: 0.5 }, keepRecentTokens: 20 },
    })
    await h.agent.send(long('P1')).result
    await h.agent.send('P2').result
    expect(h.notation().replace(/( words)+ /g, '…')).toBe(
      'T+1 U(P1…) S+1 H A S-1 T-1(completed) T+2 U(P2) C S+1 A S-1 T-2(completed)',
    )
    const compaction = h.session.events.find((e) => e.type === 'compaction')!
    expect(compaction.data).toMatchObject({ reason: 'auto', firstKeptSeq: 7 })
    expect(h.requestTexts(2)).toEqual([expect.stringContaining('SUMMARY'), 'P2'])
  })

  it('overflow: compacts after the provider reports context overflow, then retries in a new step', async () => {
    const h = agentHarness(
      [
        { text: long('A1') },
        { error: { code: 'context-overflow', message: 'prompt is too long' } },
        { text: 'SUMMARY' },
        { text: 'fits now' },
      ],
      { compaction: { keepRecentTokens: 40 } },
    )
    await h.agent.send(long('P1')).result
    expect(await h.agent.send('P2').result).toMatchObject({
      status: 'completed',
      turn: 2,
      text: 'fits now',
    })
    expect(h.notation(7)).toBe('T+2 U(P2) S+1 S-1 C S+2 A S-2 T-2(completed)')
    expect(h.session.events.find((e) => e.type === 'compaction')!.data).toMatchObject({
      reason: 'overflow',
    })
    expect(checkLog(h.session.events)).toEqual([])
    expect(project(h.session.events)[0]!.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('SUMMARY'),
    })
  })

  it('overflow: ends the turn with the error when compaction cannot help', async () => {
    const h = agentHarness([{ error: { code: 'context-overflow', message: 'prompt is too long' } }])
    const result = await h.agent.send('P').result
    expect(result).toMatchObject({ status: 'error', error: { code: 'context-overflow' } })
    expect(result.status === 'error' && result.error?.message).toContain('compaction did not help')
  })

  it('cancel discards a queued compaction', async () => {
    const h = agentHarness([{ text: 'x', hold: new Promise(() => {}) }])
    const prompt = h.agent.send('P')
    const compaction = h.agent.compact()
    await new Promise<void>((resolve) =>
      h.agent.subscribe((n) => n.type === 'assistant/delta' && resolve()),
    )
    h.agent.cancel()
    expect(await compaction).toEqual({ status: 'discarded', reason: 'canceled' })
    await prompt.result
  })
})
