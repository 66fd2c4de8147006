/** The agent's phases (src/agent/phase.ts): every legal move, illegal moves throw, what each phase means. */
import { describe, expect, it } from 'vitest'
import {
  type AgentPhase,
  isLegalMove,
  isWindowOpen,
  move,
  newRun,
  type PhaseKind,
  runOf,
  statusOf,
  takesSteering,
} from '../../src/agent/phase.js'
import { RudderError } from '../../src/index.js'

const run = newRun()
const phases: Record<PhaseKind, AgentPhase> = {
  idle: { kind: 'idle' },
  admitting: { kind: 'admitting', run, prompt: undefined, isWindowOpen: true },
  running: { kind: 'running', run, isWindowOpen: true },
  compacting: { kind: 'compacting', run },
  stopped: { kind: 'stopped', error: new RudderError('INTERNAL', 'boom') },
  disposed: { kind: 'disposed' },
}
const kinds = Object.keys(phases) as PhaseKind[]
const legal: [PhaseKind, PhaseKind][] = [
  ['idle', 'admitting'],
  ['idle', 'running'],
  ['idle', 'compacting'],
  ['idle', 'stopped'],
  ['idle', 'disposed'],
  ...(['admitting', 'running', 'compacting'] as const).flatMap((from) =>
    (['admitting', 'running', 'compacting', 'idle', 'stopped'] as const).map(
      (to): [PhaseKind, PhaseKind] => [from, to],
    ),
  ),
  ['stopped', 'disposed'],
]

describe('agent phases', () => {
  it.each(legal)('%s → %s is legal', (from, to) => {
    expect(move(phases[from], phases[to])).toBe(phases[to])
  })

  it('every other move throws INTERNAL and says it is a bug', () => {
    const isListed = (from: PhaseKind, to: PhaseKind) =>
      legal.some(([a, b]) => a === from && b === to)
    let illegal = 0
    for (const from of kinds)
      for (const to of kinds) {
        if (isListed(from, to)) continue
        illegal++
        expect(isLegalMove(from, to)).toBe(false)
        expect(() => move(phases[from], phases[to])).toThrowError(
          expect.objectContaining({
            code: 'INTERNAL',
            message: expect.stringContaining(`illegal phase change ${from} → ${to}`),
          }),
        )
      }
    // disposed is final; stopped only disposes; idle never idles again.
    expect(illegal).toBe(kinds.length ** 2 - legal.length)
    expect(isLegalMove('disposed', 'idle')).toBe(false)
    expect(isLegalMove('stopped', 'running')).toBe(false)
    expect(isLegalMove('idle', 'idle')).toBe(false)
  })

  it('maps phases to the public status, the run and the window', () => {
    expect(kinds.map((kind) => statusOf(phases[kind]))).toEqual([
      'idle',
      'admitting',
      'running',
      'running',
      'idle',
      'idle',
    ])
    expect(kinds.filter((kind) => runOf(phases[kind]) === run)).toEqual([
      'admitting',
      'running',
      'compacting',
    ])
    expect(kinds.filter((kind) => isWindowOpen(phases[kind]))).toEqual(['admitting', 'running'])
    expect(isWindowOpen({ kind: 'running', run, isWindowOpen: false })).toBe(false)
  })

  it('a canceled run takes no steering though its window is still open', () => {
    const canceled = newRun()
    const running: AgentPhase = { kind: 'running', run: canceled, isWindowOpen: true }
    expect(takesSteering(running)).toBe(true)
    canceled.controller.abort()
    expect(takesSteering(running)).toBe(false)
    expect(isWindowOpen(running)).toBe(true)
  })
})
