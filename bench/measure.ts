/**
 * Measuring helpers: interleaved A/B pairs against an in-run floor, medians and slopes.
 * Nothing here asserts on speed; it prints figures beside their floors.
 */
import { threadCpuClock } from './thread-cpu.js'

export type Pair = { subject: number; floor: number }

/** Runs `subject` and `floor` alternately `pairs` times; returns the timings in ms. */
export function interleave(pairs: number, subject: () => void, floor: () => void): Pair[] {
  const out: Pair[] = []
  for (let i = 0; i < pairs; i++) {
    const a = cpuMs(subject)
    const b = cpuMs(floor)
    out.push({ subject: a, floor: b })
  }
  return out
}

/** CPU time (user + system) of a synchronous function, in ms. */
export function cpuMs(run: () => void): number {
  const start = process.cpuUsage()
  run()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

/**
 * A clock of the main thread's CPU time in ms (thread-cpu.ts), else of the process's. Slopes
 * use it: `process.cpuUsage` also counts V8's compiler and concurrent-marking threads, which
 * Linux accounts in 4 ms ticks, so a sample of 2,000 steps (a few ms) now and then carried a
 * whole tick of another thread's work and a slope read 3× or 0.1× from one size to the next.
 */
export function mainThreadClock(): () => number {
  const thread = threadCpuClock()
  if (thread) return thread
  return () => {
    const { user, system } = process.cpuUsage()
    return (user + system) / 1000
  }
}

/** Wall time of a synchronous function, in ms. */
export function wallMs(run: () => void): number {
  const start = process.hrtime.bigint()
  run()
  return Number(process.hrtime.bigint() - start) / 1e6
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Median ratio subject/floor with its min–max over the pairs. */
export function ratios(pairs: readonly Pair[]): { median: number; min: number; max: number } {
  const values = pairs.map((pair) => pair.subject / Math.max(pair.floor, 1e-6))
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) }
}

export type Row = {
  id: string
  what: string
  figure: string
  floor: string
  ratio: string
  target: string
}

/** Prints rows as an aligned table. */
export function printTable(rows: readonly Row[]): void {
  const headers: Row = {
    id: 'id',
    what: 'what',
    figure: 'figure',
    floor: 'floor',
    ratio: 'ratio',
    target: 'target',
  }
  const keys = Object.keys(headers) as (keyof Row)[]
  const widths = keys.map((key) => Math.max(...[headers, ...rows].map((row) => row[key].length)))
  const line = (row: Row) => keys.map((key, i) => row[key].padEnd(widths[i]!)).join('  ')
  console.log(line(headers))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const row of rows) console.log(line(row))
}

export const fmt = {
  ms: (value: number) => `${value.toFixed(value < 10 ? 3 : 1)} ms`,
  us: (value: number) => `${value.toFixed(2)} µs`,
  ratio: (r: { median: number; min: number; max: number }) =>
    `${r.median.toFixed(2)}× (${r.min.toFixed(2)}–${r.max.toFixed(2)})`,
}
