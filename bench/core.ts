/**
 * Core benchmarks: B5 (projection cost per appended event at growing log sizes) and the
 * append rate of the in-memory session against a JSON.stringify floor.
 */
import { createSession, type Message, type Session } from '../src/index.js'
import { type Append, appends } from './fixtures.js'
import { fmt, interleave, mainThreadClock, median, type Row, ratios, wallMs } from './measure.js'
import { threadMs } from './thread-cpu.js'

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

/** A user message of a few words: the smallest event that adds a message. */
function said(index: number) {
  return {
    id: `m${index}`,
    content: [{ type: 'text' as const, text: `step ${index} of the bench` }],
    source: { kind: 'user' as const },
  }
}

/**
 * B5+: one step's projection work, one append that adds a message and one `messages()`, at
 * 1k to 1M messages already projected. Every session stays alive for the whole run and the
 * sizes are measured round-robin, so each sees the same heap and the same GC work: what is
 * left of a slope is the algorithm's. The floor is the same append without `messages()`;
 * "a frozen copy" is what `messages()` did before decision 0140, measured beside it. The main
 * thread's CPU time: the machines here are shared, and a wall clock counts the neighbours'
 * work too; the process's CPU time counts V8's background threads in 4 ms ticks. Fifteen
 * rounds: a full collection of the 1M-message heap lands in some sample of every size.
 */
export function stepSlope(sizes: readonly number[]): Row[] {
  const steps = 2_000
  const rounds = 15
  const clock = mainThreadClock()
  const cpuMs = (run: () => void) => threadMs(clock, run)
  let next = 0
  let sink = 0
  const build = (size: number) => {
    const session = createSession()
    for (let index = 0; index < size; index++) session.append('user/message', said(next++))
    return { size, session, copyLog: [...session.messages()] as Message[], samples: [] as Sample[] }
  }
  type Sample = { subject: number; floor: number; copy: number }
  const all = sizes.map(build)
  const perStep = (ms: number, count: number) => (ms * 1000) / count
  for (let round = 0; round <= rounds; round++) {
    for (const entry of all) {
      collectGarbage()
      const subject = cpuMs(() => {
        for (let step = 0; step < steps; step++) {
          entry.session.append('user/message', said(next++))
          sink += entry.session.messages().length
        }
      })
      const floor = cpuMs(() => {
        for (let step = 0; step < steps; step++) {
          sink += entry.session.append('user/message', said(next++)).seq
        }
      })
      // Copying costs O(size) a step: fewer steps at the large sizes keep the run short.
      const copySteps = Math.max(5, Math.min(steps, 1e6 / entry.size))
      const copy = cpuMs(() => {
        for (let step = 0; step < copySteps; step++) {
          entry.copyLog.push(Object.freeze({ role: 'user', content: said(step).content }))
          sink += Object.freeze(entry.copyLog.slice()).length
        }
      })
      // Round 0 warms the JIT and is not counted.
      if (round > 0)
        entry.samples.push({
          subject: perStep(subject, steps),
          floor: perStep(floor, steps),
          copy: perStep(copy, copySteps),
        })
    }
  }
  if (sink === 0) throw new Error('unreachable: keeps the loops from being optimised away')
  const results = all.map(({ samples }) => ({
    subject: median(samples.map((p) => p.subject)),
    floor: median(samples.map((p) => p.floor)),
    copy: median(samples.map((p) => p.copy)),
    ratio: ratios(samples),
  }))
  const base = results[0]!
  return results.flatMap((result, i) => [
    {
      id: 'B5+',
      what: `append + messages() per step at ${sizes[i]!.toLocaleString('en')} messages`,
      figure: fmt.us(result.subject),
      floor: `${fmt.us(result.floor)} append alone`,
      ratio: fmt.ratio(result.ratio),
      target: 'orientation',
    },
    {
      id: 'B5+',
      what: `  t(${sizes[i]!.toLocaleString('en')}) / t(${sizes[0]!.toLocaleString('en')}); a frozen copy a step took ${fmt.us(result.copy)}`,
      figure: `${(result.subject / base.subject).toFixed(2)}×`,
      floor: `${(result.floor / base.floor).toFixed(2)}× append alone`,
      ratio: `copy ${(result.copy / base.copy).toFixed(0)}×`,
      target: i === 0 ? '' : 'slope ≤ 1.2',
    },
  ])
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
  return [
    ...projectionSlope(sizes),
    ...stepSlope([1_000, 10_000, 100_000, 1_000_000]),
    ...appendRate(),
  ]
}
