/**
 * Core benchmarks: B5 (projection cost per appended event at growing log sizes) and the
 * append rate of the in-memory session against a JSON.stringify floor.
 */
import { createSession, type Session } from '../src/index.js'
import { type Append, appends } from './fixtures.js'
import { fmt, interleave, median, type Row, ratios, wallMs } from './measure.js'

function fill(session: Session, events: readonly Append[]): void {
  for (const [type, data] of events) session.append(type, data as never)
}

/** Runs a full collection when the process was started with --expose-gc. */
export function collectGarbage(): void {
  ;(globalThis as { gc?: () => void }).gc?.()
}

/**
 * B5: per-event wall time of append + incremental projection, measured at N events already
 * logged. Each size appends the same probe batches after a full GC; the median is reported.
 */
function projectionSlope(sizes: readonly number[]): Row[] {
  const batch = 10_000
  const rounds = 5
  const probe = appends(batch * rounds, 99)
  const at = (size: number) => {
    const session = createSession()
    fill(session, appends(size))
    const samples: number[] = []
    for (let round = 0; round < rounds; round++) {
      const slice = probe.slice(round * batch, (round + 1) * batch)
      collectGarbage()
      samples.push(
        (wallMs(() => {
          fill(session, slice)
          session.messages()
        }) *
          1000) /
          slice.length,
      )
    }
    return median(samples)
  }
  at(sizes[0]!) // warm the JIT so the first size is not measured cold
  const perEvent = sizes.map(at)
  const base = perEvent[0]!
  return sizes.map((size, i) => ({
    id: 'B5',
    what: `append + projection per event at ${size.toLocaleString('en')} events`,
    figure: fmt.us(perEvent[i]!),
    floor: i === 0 ? '(base)' : fmt.us(base),
    ratio: i === 0 ? '1.00×' : `${(perEvent[i]! / base).toFixed(2)}×`,
    target: i === 0 ? '' : 'slope ≤ 1.5',
  }))
}

/** Append rate of the in-memory session against JSON.stringify of the same events. */
function appendRate(): Row[] {
  const events = appends(20_000, 7)
  const pairs = interleave(
    7,
    () => fill(createSession(), events),
    () => {
      for (const [type, data] of events) JSON.stringify({ seq: 0, time: 0, type, data })
    },
  )
  const subject = median(pairs.map((p) => p.subject))
  const floor = median(pairs.map((p) => p.floor))
  return [
    {
      id: 'core',
      what: `in-memory append (copy, freeze, project), ${events.length.toLocaleString('en')} events`,
      figure: `${((events.length / subject) * 1000).toFixed(0)} ev/s (${fmt.us((subject * 1000) / events.length)}/ev)`,
      floor: `${fmt.us((floor * 1000) / events.length)}/ev stringify`,
      ratio: fmt.ratio(ratios(pairs)),
      target: 'orientation',
    },
  ]
}

export function coreBenchmarks(options: { full: boolean }): Row[] {
  const sizes = options.full ? [1_000, 10_000, 100_000, 1_000_000] : [1_000, 10_000, 100_000]
  return [...projectionSlope(sizes), ...appendRate()]
}
