import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { boundariesBefore, createLogChecker, isBoundary } from '../../src/core/index.js'
import { checkLog, type LogRule, type SessionEvent } from '../../src/index.js'
import { validLog, validLogWithTurn } from '../support/arbitraries.js'
import {
  assistant,
  buildLog,
  compaction,
  header,
  renumber,
  steering,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'

const rules = (events: SessionEvent[]) => checkLog(events).map((problem) => problem.rule)

describe('checkLog accepts valid logs', () => {
  it('accepts an empty log', () => {
    expect(checkLog([])).toEqual([])
  })

  it('accepts a tool round trip with between-turn messages and a compaction', () => {
    const log = buildLog([
      user('context'),
      turnStart(1),
      user('P'),
      stepStart(1, 1),
      header(),
      assistant('', [{ id: 'c1' }, { id: 'c2' }]),
      toolCall('c1'),
      toolCall('c2'),
      toolResult('c1'),
      toolResult('c2'),
      stepEnd(1, 1),
      steering('S', 1),
      stepStart(1, 2),
      assistant('done'),
      stepEnd(1, 2),
      turnEnd(1),
      compaction(1),
      user('X'),
      turnStart(2, 'continue'),
      stepStart(2, 1),
      assistant('again'),
      stepEnd(2, 1),
      turnEnd(2),
    ])
    expect(checkLog(log)).toEqual([])
  })

  it('accepts a result without a tool/call (a call that never started)', () => {
    const log = buildLog([
      turnStart(1),
      stepStart(1, 1),
      assistant('', [{ id: 'c1' }]),
      toolResult('c1'),
      stepEnd(1, 1),
      turnEnd(1),
    ])
    expect(checkLog(log)).toEqual([])
  })

  it('accepts an open turn only when asked to', () => {
    const log = buildLog([turnStart(1), user('P'), stepStart(1, 1)])
    expect(checkLog(log, { allowOpenTurn: true })).toEqual([])
    expect(rules(log)).toEqual(['step-balance', 'turn-balance'])
  })

  it('accepts every random valid log (property)', () => {
    fc.assert(
      fc.property(validLog(), (log) => {
        expect(checkLog(log)).toEqual([])
      }),
      { numRuns: 300 },
    )
  })
})

describe('a checker continued from its snapshot', () => {
  const options = { allowOpenTurn: true }

  it('judges every later event and compaction as the checker that read the whole log (property)', () => {
    fc.assert(
      fc.property(validLog(), fc.nat(), (log, pick) => {
        const cut = pick % (log.length + 1)
        const whole = createLogChecker(options)
        for (const event of log.slice(0, cut)) whole.record(event)
        const snapshot = whole.snapshot()
        // One bit per seq before the cut, none past it.
        expect(snapshot.boundaries.length).toBe((cut + 7) >> 3)
        for (let seq = cut; seq < snapshot.boundaries.length * 8; seq++)
          expect(isBoundary(snapshot.boundaries, seq)).toBe(false)
        const continued = createLogChecker(options, snapshot)
        for (const event of log.slice(cut)) {
          expect(continued.check(event)).toEqual(whole.check(event))
          whole.record(event)
          continued.record(event)
        }
        // A compaction keeping from any seq is judged alike: the boundaries carried over.
        if (whole.openTurn === undefined)
          for (let kept = 0; kept < log.length; kept++) {
            const [type, data] = compaction(kept)
            const event = { seq: log.length, time: 0, type, data } as SessionEvent
            expect(continued.check(event)).toEqual(whole.check(event))
          }
      }),
      { numRuns: 200 },
    )
  })

  it('copies the boundaries before a count with the later bits cleared', () => {
    const all = new Uint8Array([0xff, 0xff])
    expect([...boundariesBefore(all, 11)]).toEqual([0xff, 0b111])
    expect([...boundariesBefore(all, 8)]).toEqual([0xff])
    expect([...boundariesBefore(undefined, 3)]).toEqual([0])
    expect(isBoundary(all, 10)).toBe(true)
    expect(isBoundary(boundariesBefore(all, 10), 10)).toBe(false)
  })
})

describe('rule 1: seqs, turns and steps', () => {
  it('rejects a seq gap, naming the seq', () => {
    const log = buildLog([user('a'), user('b'), user('c')])
    const gapped = [log[0]!, { ...log[2]!, seq: 2 }]
    const problems = checkLog(gapped)
    expect(problems).toEqual([expect.objectContaining({ seq: 2, rule: 'seq-contiguous' })])
    expect(problems[0]!.message).toContain('expected seq 1')
  })

  it('rejects a turn started inside an open turn', () => {
    expect(rules(buildLog([turnStart(1), turnStart(2), turnEnd(2)]))).toContain('turn-balance')
  })

  it('rejects turns out of order (1 then 3)', () => {
    const problems = checkLog(buildLog([turnStart(1), turnEnd(1), turnStart(3), turnEnd(3)]))
    expect(problems).toEqual([expect.objectContaining({ seq: 2, rule: 'turn-balance' })])
    expect(problems[0]!.message).toContain('the next is 2')
  })

  it('rejects turn/end with no open turn', () => {
    expect(rules(buildLog([turnEnd(1)]))).toEqual(['turn-balance'])
  })

  it('rejects turn/end while a step is open', () => {
    expect(rules(buildLog([turnStart(1), stepStart(1, 1), turnEnd(1)]))).toContain('step-balance')
  })

  it('rejects steps numbered out of order and nested steps', () => {
    expect(rules(buildLog([turnStart(1), stepStart(1, 2), stepEnd(1, 2), turnEnd(1)]))).toEqual([
      'step-balance',
    ])
    expect(
      rules(buildLog([turnStart(1), stepStart(1, 1), stepStart(1, 2), stepEnd(1, 2), turnEnd(1)])),
    ).toContain('step-balance')
  })

  it('accepts steps restarting from 1 in each turn', () => {
    const log = buildLog([
      turnStart(1),
      stepStart(1, 1),
      stepEnd(1, 1),
      turnEnd(1),
      turnStart(2),
      stepStart(2, 1),
      stepEnd(2, 1),
      turnEnd(2),
    ])
    expect(checkLog(log)).toEqual([])
  })
})

describe('rule 2: placement', () => {
  it('rejects steering outside a turn, and accepts it inside', () => {
    expect(rules(buildLog([steering('S', 1)]))).toEqual(['placement'])
    expect(checkLog(buildLog([turnStart(1), steering('S', 1), turnEnd(1)]))).toEqual([])
  })

  it('rejects steering naming another turn', () => {
    expect(rules(buildLog([turnStart(1), steering('S', 2), turnEnd(1)]))).toEqual(['placement'])
  })

  it('rejects a user message inside a step', () => {
    expect(
      rules(buildLog([turnStart(1), stepStart(1, 1), user('x'), stepEnd(1, 1), turnEnd(1)])),
    ).toEqual(['placement'])
  })

  it('rejects execution events outside a step', () => {
    for (const entry of [header(), assistant('hi'), toolCall('c1'), toolResult('c1')]) {
      expect(rules(buildLog([turnStart(1), entry, turnEnd(1)]))).toContain('placement')
    }
  })

  it('rejects a second assistant message in one step', () => {
    expect(
      rules(
        buildLog([
          turnStart(1),
          stepStart(1, 1),
          assistant('a'),
          assistant('b'),
          stepEnd(1, 1),
          turnEnd(1),
        ]),
      ),
    ).toEqual(['placement'])
  })

  it('rejects a request header after the assistant message', () => {
    expect(
      rules(
        buildLog([
          turnStart(1),
          stepStart(1, 1),
          assistant('a'),
          header(),
          stepEnd(1, 1),
          turnEnd(1),
        ]),
      ),
    ).toEqual(['placement'])
  })

  it('rejects a compaction inside a step, and one that cuts between a call and its result', () => {
    expect(
      rules(buildLog([turnStart(1), stepStart(1, 1), compaction(0), stepEnd(1, 1), turnEnd(1)])),
    ).toContain('placement')
    const log = buildLog([
      turnStart(1),
      stepStart(1, 1),
      assistant('', [{ id: 'c1' }]),
      toolResult('c1'),
      stepEnd(1, 1),
      turnEnd(1),
      compaction(3),
    ])
    expect(rules(log)).toEqual(['compaction'])
    const valid = buildLog([
      turnStart(1),
      stepStart(1, 1),
      assistant('', [{ id: 'c1' }]),
      toolResult('c1'),
      stepEnd(1, 1),
      turnEnd(1),
      compaction(1),
    ])
    expect(checkLog(valid)).toEqual([])
  })

  it('rejects an extension event between turns and accepts it inside a turn', () => {
    const ext = (seq: number) => ({
      seq,
      time: 0,
      type: 'plugin/note',
      data: { n: 1 },
      ignorable: true as const,
    })
    expect(checkLog([ext(0)]).map((p) => p.rule)).toEqual(['placement'])
    expect(checkLog([ext(0)], { eventsAllowedBetweenTurns: ['plugin/note'] })).toEqual([])
    const inTurn = buildLog([turnStart(1), turnEnd(1)])
    expect(checkLog([inTurn[0]!, ext(1), { ...inTurn[1]!, seq: 2 }])).toEqual([])
  })
})

describe('rule 3: tool pairing', () => {
  const step = (...entries: Parameters<typeof buildLog>[0]) =>
    buildLog([turnStart(1), stepStart(1, 1), ...entries, stepEnd(1, 1), turnEnd(1)])

  it('rejects a result without a call', () => {
    expect(rules(step(assistant('hi'), toolResult('c9')))).toEqual(['tool-pairing'])
  })

  it('rejects a call without a result when the step ends', () => {
    const problems = checkLog(step(assistant('', [{ id: 'c1' }])))
    expect(problems.map((p) => p.rule)).toEqual(['tool-pairing'])
    expect(problems[0]!.message).toContain('c1')
  })

  it('rejects results out of call order', () => {
    const problems = checkLog(
      step(assistant('', [{ id: 'c1' }, { id: 'c2' }]), toolResult('c2'), toolResult('c1')),
    )
    expect(problems[0]).toEqual(expect.objectContaining({ rule: 'tool-pairing' }))
    expect(problems[0]!.message).toContain('expected the result of c1 before c2')
  })

  it('rejects two results for one call', () => {
    expect(
      rules(step(assistant('', [{ id: 'c1' }]), toolResult('c1'), toolResult('c1'))),
    ).toContain('tool-pairing')
  })

  it('rejects a tool/call after its result, twice, or for an unknown call', () => {
    expect(rules(step(assistant('', [{ id: 'c1' }]), toolResult('c1'), toolCall('c1')))).toContain(
      'tool-pairing',
    )
    expect(
      rules(step(assistant('', [{ id: 'c1' }]), toolCall('c1'), toolCall('c1'), toolResult('c1'))),
    ).toContain('tool-pairing')
    expect(rules(step(assistant('', [{ id: 'c1' }]), toolCall('c2'), toolResult('c1')))).toContain(
      'tool-pairing',
    )
  })

  it('rejects a result whose tool name differs from the call', () => {
    expect(
      rules(step(assistant('', [{ id: 'c1', name: 'read' }]), toolResult('c1', 'ok', 'write'))),
    ).toEqual(['tool-pairing'])
  })

  it('rejects duplicate call ids in one message', () => {
    expect(
      rules(step(assistant('', [{ id: 'c1' }, { id: 'c1' }]), toolResult('c1'), toolResult('c1'))),
    ).toContain('tool-pairing')
  })
})

describe('single-event corruptions are rejected (property)', () => {
  type Corruption = { rule: LogRule; corrupt: (log: SessionEvent[]) => SessionEvent[] | undefined }
  const indexOf = (log: SessionEvent[], type: string, from = 0) =>
    log.findIndex((e, i) => i >= from && e.type === type)
  const corruptions: Record<string, Corruption> = {
    'seq gap': {
      rule: 'seq-contiguous',
      corrupt: (log) => (log.length < 3 ? undefined : log.filter((_, i) => i !== 1)),
    },
    'unbalanced turn': {
      rule: 'turn-balance',
      corrupt: (log) => {
        const end = indexOf(log, 'turn/end')
        return end < 0 ? undefined : renumber(log.filter((_, i) => i !== end))
      },
    },
    'result without call': {
      rule: 'tool-pairing',
      corrupt: (log) => {
        const message = log.findIndex((e) => e.type === 'assistant/message')
        if (message < 0) return undefined
        const result = {
          seq: 0,
          time: 0,
          type: 'tool/result',
          data: { callId: 'ghost', name: 'ghost', content: [], isError: false },
        } as SessionEvent
        return renumber([...log.slice(0, message + 1), result, ...log.slice(message + 1)])
      },
    },
    'result out of call order': {
      rule: 'tool-pairing',
      corrupt: (log) => {
        const first = log.findIndex(
          (e, i) => e.type === 'tool/result' && log[i + 1]?.type === 'tool/result',
        )
        if (first < 0) return undefined
        const swapped = [...log]
        ;[swapped[first], swapped[first + 1]] = [log[first + 1]!, log[first]!]
        return renumber(swapped)
      },
    },
    'steering outside a turn': {
      rule: 'placement',
      corrupt: (log) => {
        const steer = {
          seq: 0,
          time: 0,
          type: 'steering/message',
          data: { id: 'x', content: [], source: { kind: 'user' }, turn: 1 },
        } as SessionEvent
        return renumber([steer, ...log])
      },
    },
    'execution event outside a step': {
      rule: 'placement',
      corrupt: (log) => {
        const start = indexOf(log, 'turn/start')
        if (start < 0) return undefined
        const stray = {
          seq: 0,
          time: 0,
          type: 'tool/call',
          data: { callId: 'c', name: 't', args: {} },
        } as SessionEvent
        return renumber([...log.slice(0, start + 1), stray, ...log.slice(start + 1)])
      },
    },
  }

  for (const [name, { rule, corrupt }] of Object.entries(corruptions)) {
    it(`rejects: ${name}`, () => {
      let applied = 0
      fc.assert(
        fc.property(validLogWithTurn(), (log) => {
          const bad = corrupt(log)
          if (!bad) return
          applied++
          expect(checkLog(bad).map((problem) => problem.rule)).toContain(rule)
        }),
        { numRuns: 200 },
      )
      expect(applied).toBeGreaterThan(0)
    })
  }
})

describe('checkers share their code', () => {
  // A store makes a checker at every open; optimised code that calls a checker's method holds
  // that very function, so checkers must share them, not make closures each (decision 0182).
  it('two checkers have the same record, check and finish functions', () => {
    const a = createLogChecker({ allowOpenTurn: true })
    const b = createLogChecker({}, a.snapshot())
    expect(a.record).toBe(b.record)
    expect(a.check).toBe(b.check)
    expect(a.finish).toBe(b.finish)
    expect(a.snapshot).toBe(b.snapshot)
  })

  it('checkers keep their own state', () => {
    const log = buildLog([turnStart(1), user('hi'), turnEnd(1)])
    const a = createLogChecker({ allowOpenTurn: true })
    const b = createLogChecker({ allowOpenTurn: true })
    expect(a.record(log[0]!)).toEqual([])
    expect(a.openTurn).toBe(1)
    expect(b.openTurn).toBeUndefined()
    expect(b.record(log[1]!).map((problem) => problem.rule)).toEqual(['seq-contiguous'])
    expect(a.record(log[1]!)).toEqual([])
    expect(a.lastTurn).toBe(1)
    expect(b.lastTurn).toBe(0)
  })
})
