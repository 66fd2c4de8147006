/**
 * B2 with the projection checkpoint (decisions 0148, 0161): opening a large session from its
 * checkpoint and loading its projection (every event read), and the same log without a
 * checkpoint (the full check), each against
 * reading and JSON.parse of the same lines, interleaved in one run; part of `npm run bench`, or alone:
 * `node --expose-gc --import tsx bench/checkpoint.ts [--full]` (`--full`: 100 MB).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import Database from 'better-sqlite3'
import {
  createLogChecker,
  createProjector,
  freezeProjected,
  isEventType,
  type LogChecker,
  type Projector,
  type SessionEvent,
} from '../src/core/index.js'
import { checksumOfTexts } from '../src/stores/checkpoint.js'
import { crc32 } from '../src/stores/crc32.js'
import { openStore, type SessionStore } from '../src/stores/index.js'
import { EVENT_DATA_CHECK } from '../src/stores/stored-shapes.js'
import { fmt, median, type Pair, printTable, type Row, ratios } from './measure.js'
import { bigLog, type Kind, urlOf, WARM_RUNS, writeSession } from './stores.js'
import { threadCpuClock } from './thread-cpu.js'

const MiB = 1024 * 1024
/** Sessions written through this policy keep no checkpoint. */
const NEVER = { minCharacters: Infinity, everyCharacters: Infinity, everyEvents: Infinity }

const threadClock = threadCpuClock()

/**
 * CPU ms of `run` (every thread: GC helpers and the thread pool included), after a collection;
 * records the longest event-loop block and the main thread's CPU ms.
 */
async function cpu(
  run: () => Promise<void>,
  blocks?: number[],
  mainThread?: number[],
): Promise<number> {
  ;(globalThis as { gc?: () => void }).gc?.()
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const thread = threadClock?.()
  const start = process.cpuUsage()
  await run()
  const used = process.cpuUsage(start)
  if (thread !== undefined) mainThread?.push(threadClock!() - thread)
  delay.disable()
  blocks?.push(delay.max / 1e6)
  return (used.user + used.system) / 1000
}

/** `main thread a× (floor b ms)`, the median ratio of main-thread CPU over the pairs. */
function mainThreadRatio(subject: readonly number[], floor: readonly number[]): string {
  if (subject.length === 0 || subject.length !== floor.length) return ''
  const ratio = median(subject.map((value, index) => value / Math.max(floor[index]!, 1e-6)))
  return `; main thread ${fmt.ms(median(subject))} vs ${fmt.ms(median(floor))}, ${ratio.toFixed(2)}×`
}

/** The stored lines of session `id` in the SQLite store at `directory`, in seq order. */
function sqliteLines(directory: string, id: string): string[] {
  const db = new Database(join(directory, 'sessions.db'), { readonly: true })
  try {
    return db
      .prepare('SELECT line FROM events WHERE session_id = ? ORDER BY seq')
      .pluck()
      .all(id) as string[]
  } finally {
    db.close()
  }
}

function floorOf(kind: Kind, directory: string, id: string): () => Promise<void> {
  return async () => {
    const kept: unknown[] = []
    if (kind === 'sqlite') {
      for (const line of sqliteLines(directory, id)) kept.push(JSON.parse(line))
      return
    }
    const buffer = readFileSync(join(directory, 'jsonl', 'sessions', id, 'events.jsonl'))
    for (
      let start = buffer.indexOf(10) + 1, end = buffer.indexOf(10, start);
      end >= 0;
      start = end + 1, end = buffer.indexOf(10, start)
    )
      kept.push(JSON.parse(buffer.toString('utf8', start, end)))
  }
}

/**
 * The physical floor of an open and its projection: the floor's read and parse plus what an
 * open owes for every event, done by the store's own functions in one plain loop: the CRC-32
 * of what it read (the next checkpoint's ranges), the projection with what it keeps frozen,
 * and, with `check` (no checkpoint to vouch for the events), each event's type and data check
 * and the invariants. What the subject adds over it is the loader itself (decisions 0181, 0183).
 */
function physicalFloorOf(
  kind: Kind,
  directory: string,
  id: string,
  check: boolean,
): () => Promise<void> {
  return async () => {
    const open = new PhysicalOpen(check)
    if (kind === 'sqlite') {
      const lines = sqliteLines(directory, id)
      checksumOfTexts('text', lines, 0, lines.length, textOf, 0)
      for (const line of lines) open.take(line)
    } else {
      const buffer = readFileSync(join(directory, 'jsonl', 'sessions', id, 'events.jsonl'))
      const first = buffer.indexOf(10) + 1
      crc32(buffer.subarray(first))
      for (
        let start = first, end = buffer.indexOf(10, start);
        end >= 0;
        start = end + 1, end = buffer.indexOf(10, start)
      )
        open.take(buffer.toString('utf8', start, end))
    }
    open.projector.messages()
  }
}

/** What `physicalFloorOf` does per event: a class, so its code outlives every run (0187). */
class PhysicalOpen {
  readonly events: SessionEvent[] = []
  readonly checker: LogChecker | undefined
  readonly projector: Projector

  constructor(check: boolean) {
    this.checker = check ? createLogChecker({ allowOpenTurn: true }) : undefined
    const events = this.events
    this.projector = createProjector((seq) => events[seq])
  }

  take(text: string): void {
    const event = JSON.parse(text) as SessionEvent
    if (this.checker) {
      if (!isEventType(event.type) || EVENT_DATA_CHECK[event.type](event.data) !== undefined)
        throw new Error(`seq ${event.seq} does not pass the data check`)
      if (this.checker.record(event).length > 0) throw new Error(`seq ${event.seq} breaks a rule`)
    }
    this.events.push(event)
    freezeProjected(event)
    this.projector.apply(event)
  }
}

/** One held for the process (see `PhysicalOpen`). */
export const PHYSICAL_OPEN_SHAPES: readonly PhysicalOpen[] = [
  new PhysicalOpen(false),
  new PhysicalOpen(true),
]

const textOf = (text: string) => text

export async function checkpointBenchmarks(options: { full: boolean }): Promise<Row[]> {
  const rows: Row[] = []
  const size = options.full ? 100 * MiB : 20 * MiB
  const events = bigLog(size, 2)
  for (const kind of ['jsonl', 'sqlite'] as const) {
    const directory = mkdtempSync(join(tmpdir(), `rudder-bench-checkpoint-${kind}-`))
    try {
      const url = urlOf(kind, directory)
      const store = await openStore(url)
      const plain = await openStore(url, { checkpointPolicy: NEVER })
      const withCheckpoint = await writeSession(store, events)
      const without = await writeSession(plain, events)
      const open = (on: SessionStore, id: string) => async () => {
        const session = await on.open(id)
        // Ready at open (B1, bench/resume.ts); here the whole transcript is read as well.
        await session.loadProjection()
        session.messages()
        await session.close()
      }
      const floor = floorOf(kind, directory, withCheckpoint)
      const fastPhysical = physicalFloorOf(kind, directory, withCheckpoint, false)
      const slowPhysical = physicalFloorOf(kind, directory, withCheckpoint, true)
      // Warm caches and JIT (see WARM_RUNS).
      for (let run = 0; run < WARM_RUNS; run++) {
        await open(store, withCheckpoint)()
        await open(plain, without)()
        await floor()
        await fastPhysical()
        await slowPhysical()
      }
      // Each subject is followed by its own floor run, so a ratio compares neighbours in time
      // (the machine is shared and noisy); figures are medians over the pairs.
      const fast: Pair[] = []
      const slow: Pair[] = []
      const fastBlocks: number[] = []
      const slowBlocks: number[] = []
      const threads = { fast: [], fastFloor: [], slow: [], slowFloor: [] } as Record<
        string,
        number[]
      >
      for (let pair = 0; pair < 7; pair++) {
        fast.push({
          subject: await cpu(open(store, withCheckpoint), fastBlocks, threads.fast),
          floor: await cpu(floor, undefined, threads.fastFloor),
        })
        slow.push({
          subject: await cpu(open(plain, without), slowBlocks, threads.slow),
          floor: await cpu(floor, undefined, threads.slowFloor),
        })
      }
      // Each subject beside its physical floor, interleaved as above.
      const fastAtFloor: Pair[] = []
      const slowAtFloor: Pair[] = []
      for (let pair = 0; pair < 7; pair++) {
        fastAtFloor.push({
          subject: await cpu(open(store, withCheckpoint)),
          floor: await cpu(fastPhysical),
        })
        slowAtFloor.push({
          subject: await cpu(open(plain, without)),
          floor: await cpu(slowPhysical),
        })
      }
      await plain.close()
      await store.close()
      const of = (pairs: Pair[], key: keyof Pair) => median(pairs.map((one) => one[key]))
      const label = `${kind}: open ${(size / MiB).toFixed(0)} MB / ${events.length.toLocaleString('en')} events (CPU)`
      rows.push({
        id: 'B2+',
        what: `${label} from its checkpoint, projection loaded (every event read, checked against its CRC); longest block ${Math.max(...fastBlocks).toFixed(0)} ms${mainThreadRatio(threads.fast!, threads.fastFloor!)}`,
        figure: fmt.ms(of(fast, 'subject')),
        floor: `${fmt.ms(of(fast, 'floor'))} read+parse`,
        ratio: fmt.ratio(ratios(fast)),
        target: '≤ 1.25×',
      })
      rows.push({
        id: 'B2+',
        what: `  the same against its physical floor: read+parse, the CRC-32 of what was read, the projection (store's functions, one plain loop)`,
        figure: fmt.ms(of(fastAtFloor, 'subject')),
        floor: `${fmt.ms(of(fastAtFloor, 'floor'))} physical floor`,
        ratio: fmt.ratio(ratios(fastAtFloor)),
        target: 'orientation',
      })
      rows.push({
        id: 'B2',
        what: `${label} without a checkpoint (full check); longest block ${Math.max(...slowBlocks).toFixed(0)} ms${mainThreadRatio(threads.slow!, threads.slowFloor!)}`,
        figure: fmt.ms(of(slow, 'subject')),
        floor: `${fmt.ms(of(slow, 'floor'))} read+parse`,
        ratio: fmt.ratio(ratios(slow)),
        target: '≤ 1.25×',
      })
      rows.push({
        id: 'B2',
        what: `  the same against its physical floor: read+parse, the CRC-32, each event's data check and the invariants, the projection (store's functions, one plain loop)`,
        figure: fmt.ms(of(slowAtFloor, 'subject')),
        floor: `${fmt.ms(of(slowAtFloor, 'floor'))} physical floor`,
        ratio: fmt.ratio(ratios(slowAtFloor)),
        target: 'orientation',
      })
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`)
  printTable(await checkpointBenchmarks({ full: process.argv.includes('--full') }))
