/**
 * Store benchmarks (issue 4): B2 full load, B3/B4 durable append and tail read, B8 list, B11
 * fork and B13 large payloads, each beside a floor measured in the same run (BENCHMARKS.md).
 * Fixtures are generated from a seed into a temp directory and removed afterwards. Default
 * sizes are a fifth to a tenth of the targets' sizes; `--full` uses the targets' sizes.
 */
import {
  closeSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs'
import { type FileHandle, mkdir, open, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import Database from 'better-sqlite3'
import {
  createLogChecker,
  createProjector,
  type Projector,
  type SessionEvent,
  toFrozenJson,
} from '../src/core/index.js'
import { createAgent } from '../src/index.js'
import { checksumOfLines } from '../src/stores/checkpoint.js'
import { decodeLine } from '../src/stores/codec.js'
import { crc32 } from '../src/stores/crc32.js'
import { checkForWrite } from '../src/stores/event-check.js'
import {
  openStore,
  type SessionStore,
  type StoreCounters,
  type StoredSession,
} from '../src/stores/index.js'
import { EVENT_DATA_CHECK } from '../src/stores/stored-shapes.js'
import { scriptedProvider } from '../src/testing.js'
import { type Append, appends } from './fixtures.js'
import { fmt, median, type Pair, type Row, ratios } from './measure.js'
import { threadCpuClock } from './thread-cpu.js'

const MiB = 1024 * 1024
export type Kind = 'jsonl' | 'sqlite'
export const KINDS: readonly Kind[] = ['jsonl', 'sqlite']

export function urlOf(kind: Kind, directory: string): string {
  return kind === 'jsonl'
    ? `jsonl:${join(directory, 'jsonl')}`
    : `sqlite:${join(directory, 'sessions.db')}`
}

function counters(): StoreCounters {
  return { syncs: 0, bytesWritten: 0, batches: 0 }
}

const envelope = (seq: number, [type, data]: Append) =>
  JSON.stringify({ seq, time: 1_700_000_000_000 + seq, type, data })

/**
 * Runs async `subject` and `floor` alternately; `clock` is CPU (CPU-bound) or wall (latency).
 * Each pair's order swaps with the next (subject first, then floor first): a run that always
 * follows the other inherits its after-effects (the disk's writeback of a 20 MB copy, a
 * collection the other owed), and with a fixed order those landed on one side only
 * (decision 0191).
 */
async function interleaveAsync(
  pairs: number,
  clock: 'cpu' | 'wall',
  subject: () => Promise<void>,
  floor: () => Promise<void>,
  /** Run after each timed run, untimed (B11 removes what the run wrote). */
  tidy?: () => void,
): Promise<Pair[]> {
  const time = async (run: () => Promise<void>) => {
    ;(globalThis as { gc?: () => void }).gc?.()
    let ms: number
    if (clock === 'cpu') {
      const start = process.cpuUsage()
      await run()
      const used = process.cpuUsage(start)
      ms = (used.user + used.system) / 1000
    } else {
      const start = process.hrtime.bigint()
      await run()
      ms = Number(process.hrtime.bigint() - start) / 1e6
    }
    tidy?.()
    return ms
  }
  const out: Pair[] = []
  for (let index = 0; index < pairs; index++) {
    if (index % 2 === 0) out.push({ subject: await time(subject), floor: await time(floor) })
    else {
      const floorTime = await time(floor)
      out.push({ subject: await time(subject), floor: floorTime })
    }
  }
  return out
}

const medianOf = (pairs: readonly Pair[], key: keyof Pair) => median(pairs.map((pair) => pair[key]))
const mb = (bytes: number) => `${(bytes / MiB).toFixed(0)} MB`

/** Writes `events` into a new session (flushing every 2,000) and returns its id. */
export async function writeSession(
  store: SessionStore,
  events: readonly Append[],
): Promise<string> {
  const session = await store.create({ title: 'bench' })
  for (let index = 0; index < events.length; index++) {
    const [type, data] = events[index]!
    session.append(type, data as never)
    if (index % 2000 === 1999) await session.flush()
  }
  await session.close()
  return session.header.id
}

/** Events of about `bytes` in total, about 1.1 KB each (BENCHMARKS.md: 100 MB / ~90k). */
export function bigLog(bytes: number, seed: number): Append[] {
  const sample = appends(2_000, seed).map(widen)
  const average =
    sample.reduce((sum, append, seq) => sum + envelope(seq, append).length + 1, 0) / sample.length
  return appends(Math.round(bytes / average), seed).map(widen)
}
/** Makes tool results and prompts longer so events average about 1.1 KB. */
function widen(append: Append): Append {
  const [type, data] = append
  if (type !== 'tool/result' && type !== 'user/message') return append
  const block = data.content[0]
  if (block?.type !== 'text') return append
  return [type, { ...data, content: [{ type: 'text', text: block.text.repeat(5) }] }] as Append
}

/**
 * Untimed runs of a load benchmark's subject and floor before the timed pairs. The store's load
 * path is large: V8 spent about 370, 165 and 120 ms compiling it on its background threads
 * during the first three opens of a 20 MB log from its checkpoint, under 15 ms per open after
 * (`--trace-opt-verbose`, wall time on a loaded machine), and process CPU counts those threads;
 * the floor's loop is compiled during its first run. Three runs bring both to their steady
 * state, so the pairs compare the work of a load, not the compiler's.
 */
export const WARM_RUNS = 3

async function openAndProject(store: SessionStore, id: string): Promise<number> {
  const session = await store.open(id)
  // Open reads only past the checkpoint; loading the projection reads and checks the rest.
  await session.loadProjection()
  const count = session.messages().length
  await session.close()
  return count
}

/** What `watchStretches` saw: all in ms. */
type Stretches = {
  /** The most main-thread CPU between two ticks of a 1 ms timer (0 without a thread clock). */
  readonly cpu: number
  /** The longest wall time between two ticks, and how much of it the thread waited for a CPU. */
  readonly wall: number
  readonly waiting: number | undefined
}

/**
 * Runs `run` with a 1 ms timer beside it and returns its longest stretches (decision 0173). The
 * wall figure of B2's histogram counts the time the main thread was runnable but not running:
 * on this shared 2-core machine, the run queue's wait made most of the 107–284 ms blocks seen
 * at `--full` size. The main thread's CPU between ticks (bench/thread-cpu.ts) is the loader's
 * work plus the collector's share on the main thread; the run-queue wait is read from Linux's
 * `/proc/self/task/<pid>/schedstat` (undefined elsewhere). Untimed: a tick costs a few µs.
 */
async function watchStretches(run: () => Promise<unknown>): Promise<Stretches> {
  const clock = threadCpuClock() ?? (() => 0)
  const schedstat = `/proc/self/task/${process.pid}/schedstat`
  const waited = () => {
    try {
      return Number(readFileSync(schedstat, 'utf8').split(' ')[1]) / 1e6
    } catch {
      // Not Linux, or no schedstat: the wait is not known.
      return Number.NaN
    }
  }
  let longest = { cpu: 0, wall: 0, waiting: 0 }
  let last = { cpu: clock(), wall: performance.now(), waiting: waited() }
  const tick = () => {
    const now = { cpu: clock(), wall: performance.now(), waiting: waited() }
    const cpu = Math.max(longest.cpu, now.cpu - last.cpu)
    longest =
      now.wall - last.wall > longest.wall
        ? { cpu, wall: now.wall - last.wall, waiting: now.waiting - last.waiting }
        : { ...longest, cpu }
    last = now
  }
  const timer = setInterval(tick, 1)
  try {
    await run()
  } finally {
    clearInterval(timer)
  }
  tick()
  return {
    cpu: longest.cpu,
    wall: longest.wall,
    waiting: Number.isNaN(longest.waiting) ? undefined : longest.waiting,
  }
}

/** Untimed loads of B2 watched by `watchStretches`. */
const WATCHED_RUNS = 3

/** B2: full load (parse, check, project) against reading and JSON.parse of the same lines. */
async function fullLoad(directory: string, full: boolean): Promise<Row[]> {
  const rows: Row[] = []
  const size = full ? 100 * MiB : 20 * MiB
  const events = bigLog(size, 2)
  for (const kind of KINDS) {
    const store = await openStore(urlOf(kind, join(directory, `b2-${kind}`)))
    const id = await writeSession(store, events)
    const path = join(directory, `b2-${kind}`, 'jsonl', 'sessions', id, 'events.jsonl')
    const db =
      kind === 'sqlite'
        ? new Database(join(directory, `b2-${kind}`, 'sessions.db'), { readonly: true })
        : undefined
    // The floor keeps what it parses, as any loader must (discarding is about half the cost).
    const floor = async () => {
      const kept: unknown[] = []
      if (db) {
        const lines = db
          .prepare('SELECT line FROM events WHERE session_id = ? ORDER BY seq')
          .pluck()
          .all(id) as string[]
        for (const line of lines) kept.push(JSON.parse(line))
        return
      }
      const buffer = await readFile(path)
      for (
        let start = buffer.indexOf(10) + 1, end = buffer.indexOf(10, start);
        end >= 0;
        start = end + 1, end = buffer.indexOf(10, start)
      )
        kept.push(JSON.parse(buffer.toString('utf8', start, end)))
    }
    // Warm caches and JIT.
    for (let run = 0; run < WARM_RUNS; run++) {
      await openAndProject(store, id)
      await floor()
    }
    // A fresh histogram per run: one re-enabled after a pause would count the pause as a block.
    let longestBlock = 0
    const subject = async () => {
      const delay = monitorEventLoopDelay({ resolution: 5 })
      delay.enable()
      await openAndProject(store, id)
      delay.disable()
      longestBlock = Math.max(longestBlock, delay.max / 1e6)
    }
    const pairs = await interleaveAsync(5, 'cpu', subject, floor)
    // After the pairs, so the timer's ticks are not in their CPU.
    const watched: Stretches[] = []
    for (let run = 0; run < WATCHED_RUNS; run++) {
      ;(globalThis as { gc?: () => void }).gc?.()
      watched.push(await watchStretches(() => openAndProject(store, id)))
    }
    const longestGap = watched.reduce((a, b) => (b.wall > a.wall ? b : a))
    const waiting =
      longestGap.waiting === undefined
        ? ''
        : `, ${longestGap.waiting.toFixed(0)} ms of it waiting for a CPU`
    db?.close()
    const bytes =
      kind === 'jsonl'
        ? statSync(path).size
        : sqliteBytes(join(directory, `b2-${kind}`, 'sessions.db'), id)
    rows.push({
      id: 'B2',
      what: `${kind}: full load of ${mb(bytes)} / ${events.length.toLocaleString('en')} events (CPU); longest event-loop block ${longestBlock.toFixed(0)} ms; in ${WATCHED_RUNS} more loads the longest stretch used ${Math.max(...watched.map((w) => w.cpu)).toFixed(0)} ms of main-thread CPU, the longest gap ${longestGap.wall.toFixed(0)} ms${waiting} (decision 0173)`,
      figure: fmt.ms(medianOf(pairs, 'subject')),
      floor: `${fmt.ms(medianOf(pairs, 'floor'))} read+parse`,
      ratio: fmt.ratio(ratios(pairs)),
      target: '≤ 1.25×; block ≤ 50 ms',
    })
    await store.close()
  }
  return rows
}

/**
 * Timed pairs of B3/B4, after the untimed ones of `WARM_APPENDS`. Their ratios swing widely on a shared
 * machine (decision 0076), so the median is taken over more pairs than elsewhere.
 */
const APPEND_PAIRS = 15

/**
 * Appends made in untimed pairs before them. V8 optimises the append path only once it is hot: in
 * a fresh process the per-event functions (`take`, the invariant checker, the writers) are
 * compiled between the 10,000th and the 35,000th append, 15–60 ms of compiler CPU each, and the
 * per-batch ones (`writeBatch`, `noteDurable`, the WAL sync; 7–20 ms each) only near their 1,500th
 * batch (seen with `--trace-opt`; decision 0181). B3/B4 measure appends at a steady state, so the
 * warm-up is counted in appends, not sessions: with the default 2,002 events a session that is 20
 * sessions, with `--full` (10,000) four. The warm-up's CPU per append is reported on a row of its
 * own, beside the timed rate: a process pays it once.
 */
export const WARM_APPENDS = 40_000

/** Untimed runs of a floor variant before its pairs (it runs little code: a few suffice). */
const WARM_OFF_MAIN = 3

/** B3/B4: durable append with a durability point every 50 events, against raw write+sync. */
async function durableAppend(
  directory: string,
  full: boolean,
  kinds: readonly Kind[],
): Promise<Row[]> {
  const rows: Row[] = []
  const events = appends(full ? 10_000 : 2_000, 3)
  const batches: Append[][] = []
  for (let index = 0; index < events.length; index += 50)
    batches.push(events.slice(index, index + 50))
  const warmPairs = Math.ceil(WARM_APPENDS / events.length)
  for (const kind of kinds) {
    const count = counters()
    const store = await openStore(urlOf(kind, join(directory, `b34-${kind}`)), { counters: count })
    const subjectPoints: number[] = []
    const floorPoints: number[] = []
    // Main-thread time (event loop active, including a synchronous wait for the disk) per point.
    const subjectBusy: number[] = []
    const floorBusy: number[] = []
    let syncsPerRun = 0
    // Sessions are created before, and closed after, the timed runs: only appends count.
    const sessions = await Promise.all(
      Array.from({ length: APPEND_PAIRS * (kind === 'sqlite' ? 2 : 1) + warmPairs }, () =>
        store.create(),
      ),
    )
    const subject = async () => {
      const session = sessions.pop()!
      const before = count.syncs
      for (const batch of batches) {
        for (const [type, data] of batch) session.append(type, data as never)
        const start = process.hrtime.bigint()
        const busy = performance.eventLoopUtilization()
        await session.flush()
        subjectBusy.push(performance.eventLoopUtilization(busy).active)
        subjectPoints.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
      syncsPerRun = count.syncs - before
      finished.push(session)
    }
    const finished: StoredSession[] = []
    let run = 0
    const floor =
      kind === 'jsonl'
        ? jsonlFloor(directory, batches, floorPoints, floorBusy, () => run++)
        : sqliteFloor(directory, batches, floorPoints, floorBusy, () => run++)
    // Untimed pairs first: the subject runs far more code than the floor, and its first runs
    // pay the JIT's compilation of it, which a process pays once, not at every append.
    let warmCpu = 0
    for (let warm = 0; warm < warmPairs; warm++) {
      const start = process.cpuUsage()
      await subject()
      const used = process.cpuUsage(start)
      warmCpu += (used.user + used.system) / 1000
      await floor()
    }
    for (const figures of [subjectPoints, floorPoints, subjectBusy, floorBusy]) figures.length = 0
    const pairs = await interleaveAsync(APPEND_PAIRS, 'cpu', subject, floor)
    const unused: number[] = []
    /** An untimed variant of this kind's floor: another encoder, the sync off the main thread. */
    const variant = (encoder: () => Encoder, syncOffMain = false) =>
      kind === 'jsonl'
        ? jsonlFloor(directory, batches, unused, unused, () => run++, encoder)
        : sqliteFloor(directory, batches, unused, unused, () => run++, encoder, syncOffMain)
    // SQLite: the subject against its physical floor, interleaved: the floor with its sync off
    // the main thread as the store makes it (decision 0146) and the in-memory work every
    // durable append owes (`guarded`).
    let physicalPairs: Pair[] | undefined
    if (kind === 'sqlite') {
      const physicalFloor = variant(() => guarded('text'), true)
      // As long as the subject's: it runs the same in-memory code, in a loop of its own.
      for (let warm = 0; warm < warmPairs; warm++) await physicalFloor()
      physicalPairs = await interleaveAsync(APPEND_PAIRS, 'cpu', subject, physicalFloor)
    }
    for (const session of finished) await session.close()
    // The floor plus the in-memory work every durable append owes (`guarded`), against the
    // floor: how much of the subject's ratio the guarantees take, whatever the code.
    const guardedFloor = variant(() => guarded(kind === 'jsonl' ? 'bytes' : 'text'))
    for (let warm = 0; warm < warmPairs; warm++) await guardedFloor()
    const guardedPairs = await interleaveAsync(APPEND_PAIRS, 'cpu', guardedFloor, floor)
    // SQLite: the floor with its sync where the store makes it, off the main thread (decision
    // 0146), against the floor: what keeping the event loop free of the disk costs in CPU.
    let offMainPairs: Pair[] | undefined
    if (kind === 'sqlite') {
      const offMainFloor = variant(plain, true)
      for (let warm = 0; warm < WARM_OFF_MAIN; warm++) await offMainFloor()
      offMainPairs = await interleaveAsync(APPEND_PAIRS, 'cpu', offMainFloor, floor)
    }
    // SQLite indexes for search when a search runs (decision 0068): what the appends above
    // left to index, paid once by the first search, beside the appends' own CPU.
    let firstSearch: number | undefined
    if (kind === 'sqlite') {
      const start = process.cpuUsage()
      await store.search('model')
      const used = process.cpuUsage(start)
      firstSearch = (used.user + used.system) / 1000
    }
    // The same appends into a memory store: the live session, the checks and the encoding,
    // without I/O. What B3/B4 add over it is the cost of the file or database path.
    const memory = await openStore('memory:')
    const inMemory = await Promise.all(
      Array.from({ length: APPEND_PAIRS + warmPairs }, () => memory.create()),
    )
    const inMemorySubject = async () => {
      const session = inMemory.pop()!
      for (const batch of batches) {
        for (const [type, data] of batch) session.append(type, data as never)
        await session.flush()
      }
    }
    for (let warm = 0; warm < warmPairs; warm++) await inMemorySubject()
    const memoryPairs = await interleaveAsync(APPEND_PAIRS, 'cpu', inMemorySubject, floor)
    await memory.close()
    const id = kind === 'jsonl' ? 'B3' : 'B4'
    rows.push(
      {
        id,
        what: `${kind}: append ${events.length.toLocaleString('en')} events, durability point every 50 (CPU)`,
        figure: fmt.ms(medianOf(pairs, 'subject')),
        floor: `${fmt.ms(medianOf(pairs, 'floor'))} ${kind === 'jsonl' ? 'stringify+write+fdatasync' : 'stringify+batched insert+commit'}`,
        ratio: fmt.ratio(ratios(pairs)),
        target: kind === 'jsonl' ? '≤ 1.5×' : '≤ 1.3×',
      },
      {
        id,
        what: `  a fresh process's first ${(warmPairs * events.length).toLocaleString('en')} appends (untimed above), CPU per append, against the timed runs' (the JIT compiles the append path once a process)`,
        figure: `${((1000 * warmCpu) / (warmPairs * events.length)).toFixed(2)} µs`,
        floor: `${((1000 * medianOf(pairs, 'subject')) / events.length).toFixed(2)} µs timed`,
        ratio: `${(warmCpu / (warmPairs * medianOf(pairs, 'subject'))).toFixed(2)}×`,
        target: 'orientation',
      },
      {
        id,
        what: `  the floor plus what every durable append must do in memory (frozen copy, data check, invariants, projection, checksum; no session, no store)`,
        figure: fmt.ms(medianOf(guardedPairs, 'subject')),
        floor: `${fmt.ms(medianOf(guardedPairs, 'floor'))} (same floor)`,
        ratio: fmt.ratio(ratios(guardedPairs)),
        target: 'orientation',
      },
      {
        id,
        what: `  of which in memory: the same appends into a memory: store (live session, checks, encoding; no I/O)`,
        figure: fmt.ms(medianOf(memoryPairs, 'subject')),
        floor: `${fmt.ms(medianOf(memoryPairs, 'floor'))} (same floor)`,
        ratio: fmt.ratio(ratios(memoryPairs)),
        target: 'orientation',
      },
      {
        id,
        what: `${kind}: durability point latency p50 (wall), ${syncsPerRun} syncs for ${batches.length} points`,
        figure: fmt.ms(median(subjectPoints)),
        floor: `${fmt.ms(median(floorPoints))} raw ${kind === 'jsonl' ? 'write+fdatasync' : 'commit'}`,
        ratio: `${(median(subjectPoints) / median(floorPoints)).toFixed(2)}×`,
        target: kind === 'jsonl' ? '≤ 1.5×' : 'orientation',
      },
      {
        id,
        what: `${kind}: main-thread time per durability point p50 (event loop active, incl. a synchronous sync)`,
        figure: fmt.ms(median(subjectBusy)),
        floor: `${fmt.ms(median(floorBusy))} raw ${kind === 'jsonl' ? 'write+fdatasync (async)' : 'commit (synchronous=FULL)'}`,
        ratio: `${(median(subjectBusy) / median(floorBusy)).toFixed(2)}×`,
        target: 'orientation',
      },
    )
    if (offMainPairs)
      rows.push({
        id,
        what: `  the floor with its sync off the main thread as the store makes it (commit without a sync, then fdatasync of the WAL on the thread pool; decision 0146)`,
        figure: fmt.ms(medianOf(offMainPairs, 'subject')),
        floor: `${fmt.ms(medianOf(offMainPairs, 'floor'))} (same floor)`,
        ratio: fmt.ratio(ratios(offMainPairs)),
        target: 'orientation',
      })
    if (physicalPairs)
      rows.push({
        id,
        what: `  the subject against this store's physical floor, interleaved: the floor with its sync off the main thread, plus what every durable append must do in memory (as above)`,
        figure: fmt.ms(medianOf(physicalPairs, 'subject')),
        floor: `${fmt.ms(medianOf(physicalPairs, 'floor'))} physical floor`,
        ratio: fmt.ratio(ratios(physicalPairs)),
        target: 'orientation',
      })
    if (firstSearch !== undefined)
      rows.push({
        id,
        what: `  first search after those appends: indexes the ${(finished.length * events.length).toLocaleString('en')} events they wrote (CPU, once)`,
        figure: fmt.ms(firstSearch),
        floor: `${fmt.ms(medianOf(pairs, 'subject') * finished.length)} the appends`,
        ratio: `${(firstSearch / (medianOf(pairs, 'subject') * finished.length)).toFixed(2)}×`,
        target: 'orientation',
      })
    rows.push(await syncsPerDelta(kind, directory))
    if (kind === 'sqlite') rows.push(await tailRead(store, directory))
    await store.close()
  }
  return rows
}

/**
 * The work a durable append must do in memory whatever the code around it, by the rules of
 * docs/spec.md §3 and §9 (decision 0076): a frozen copy of the data, its check against the
 * event's shape, the invariants, the projection, the events kept, the lines and their
 * checksum (for the checkpoint) in the store's form. Returns the encoder of one batch: its
 * lines. In the `bytes` form (JSONL) the checksum is the CRC of the bytes written, summed by
 * the floor's writer as the store's writer sums them (decision 0167): the encoder sums nothing.
 */
function guarded(form: 'bytes' | 'text'): Encoder {
  return new GuardedEncoder(form)
}

/**
 * Encodes a batch into lines; `sumsBytes`: the floor's writer must CRC the bytes it writes.
 * Encoders are objects of a class, one per run, not closures: V8 keeps a closure's optimised
 * code only while a closure made at that place is alive, so after the full collection before
 * each timed run the floors compiled their loops again, and the compiling was timed with them
 * (decision 0187). One of each is held for the process (`HELD_ENCODERS`), so their classes
 * outlive the runs too.
 */
interface Encoder {
  encode(batch: readonly Append[]): string[]
  readonly sumsBytes: boolean
}

/** Encodes a batch as the floor does: the envelope of each append, and nothing else. */
class PlainEncoder implements Encoder {
  readonly sumsBytes = false
  #seq = 0
  encode(batch: readonly Append[]): string[] {
    const lines: string[] = new Array(batch.length)
    for (let index = 0; index < batch.length; index++)
      lines[index] = envelope(this.#seq++, batch[index]!)
    return lines
  }
}

/** See `guarded`. */
class GuardedEncoder implements Encoder {
  readonly sumsBytes: boolean
  readonly #form: 'bytes' | 'text'
  readonly #events: SessionEvent[] = []
  readonly #checker = createLogChecker({ allowOpenTurn: true })
  readonly #projector: Projector
  #checksum = 0

  constructor(form: 'bytes' | 'text') {
    this.#form = form
    this.sumsBytes = form === 'bytes'
    const events = this.#events
    this.#projector = createProjector((seq) => events[seq])
  }

  encode(batch: readonly Append[]): string[] {
    const lines: string[] = new Array(batch.length)
    for (let index = 0; index < batch.length; index++) {
      const [type, data] = batch[index]!
      const seq = this.#events.length
      const event = Object.freeze({
        seq,
        time: 1_700_000_000_000 + seq,
        type,
        data: toFrozenJson(data, type),
      }) as SessionEvent
      checkForWrite(event)
      if (this.#checker.record(event).length > 0) throw new Error(`the fixture breaks an invariant`)
      this.#events.push(event)
      this.#projector.apply(event)
      lines[index] = JSON.stringify(event)
    }
    if (this.#form === 'text') this.#checksum = checksumOfLines('text', lines, this.#checksum)
    return lines
  }
}

/** One encoder of each kind, held for the process (see `Encoder`). */
export const HELD_ENCODERS: readonly Encoder[] = [
  new PlainEncoder(),
  new GuardedEncoder('bytes'),
  new GuardedEncoder('text'),
]

/** The floor's encoder (see `PlainEncoder`). */
function plain(): Encoder {
  return new PlainEncoder()
}

function jsonlFloor(
  directory: string,
  batches: readonly Append[][],
  points: number[],
  busy: number[],
  next: () => number,
  encoder: () => Encoder = plain,
) {
  return async () => {
    const path = join(directory, `floor-${next()}.jsonl`)
    const handle = await open(path, 'a')
    const encode = encoder()
    let checksum = 0
    for (const batch of batches) {
      const start = process.hrtime.bigint()
      const loop = performance.eventLoopUtilization()
      const bytes = Buffer.from(`${encode.encode(batch).join('\n')}\n`)
      if (encode.sumsBytes) checksum = crc32(bytes, checksum)
      await handle.write(bytes)
      await handle.datasync()
      busy.push(performance.eventLoopUtilization(loop).active)
      points.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
    // Kept until the directory goes: removing it here would time an unlink the subject never does.
    await handle.close()
  }
}

function sqliteFloor(
  directory: string,
  batches: readonly Append[][],
  points: number[],
  busy: number[],
  next: () => number,
  encoder: () => Encoder = plain,
  syncOffMain = false,
) {
  const path = join(directory, `floor-${next()}.db`)
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  // Off the main thread as the store syncs (decision 0146): commits write the WAL unsynced,
  // then one fdatasync of the WAL on the thread pool makes them durable.
  db.pragma(syncOffMain ? 'synchronous = NORMAL' : 'synchronous = FULL')
  let wal: FileHandle | undefined
  db.exec(
    'CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL, PRIMARY KEY (session_id, seq)) STRICT',
  )
  // Batched as the store inserts: rows per statement, largest first (one row a statement costs
  // about half as much CPU again, which flattered the subject; decision 0076).
  const sizes = [32, 8, 1] as const
  const inserts = sizes.map((rows) =>
    db.prepare(
      `INSERT INTO events (session_id, seq, line) VALUES ${'(?, ?, ?), '.repeat(rows - 1)}(?, ?, ?)`,
    ),
  )
  const insertAll = (session: string, first: number, lines: readonly string[]) => {
    let index = 0
    for (let size = 0; size < sizes.length; size++) {
      const rows = sizes[size]!
      for (; lines.length - index >= rows; index += rows) {
        const values: unknown[] = new Array(rows * 3)
        for (let row = 0; row < rows; row++) {
          values[row * 3] = session
          values[row * 3 + 1] = first + index + row
          values[row * 3 + 2] = lines[index + row]
        }
        inserts[size]!.run(values)
      }
    }
  }
  // Built once, as the store builds its transaction (wal-sync.ts): a transaction function per
  // batch costs its wrappers every batch, and its closure's code at each full collection.
  const insertBatch = db.transaction(insertAll)
  return async () => {
    const session = `floor-${next()}`
    const encode = encoder()
    let seq = 0
    for (const batch of batches) {
      const start = process.hrtime.bigint()
      const loop = performance.eventLoopUtilization()
      const lines = encode.encode(batch)
      insertBatch.immediate(session, seq, lines)
      if (syncOffMain) {
        wal ??= await open(`${path}-wal`, 'r')
        await wal.datasync()
      }
      seq += lines.length
      busy.push(performance.eventLoopUtilization(loop).active)
      points.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
  }
}

/**
 * Zero syncs per streamed delta: the same agent run (20 turns) streamed in 10× more deltas
 * must do exactly as many syncs, since deltas are live notifications and never stored.
 */
async function syncsPerDelta(kind: Kind, directory: string): Promise<Row> {
  const run = async (chunkSize: number) => {
    const count = counters()
    const store = await openStore(urlOf(kind, join(directory, `delta-${kind}-${chunkSize}`)), {
      counters: count,
    })
    const session = await store.create()
    const steps = Array.from({ length: 20 }, (_, turn) => ({ text: `answer ${turn} `.repeat(200) }))
    const agent = createAgent({ session, provider: scriptedProvider(steps, { chunkSize }) })
    let deltas = 0
    agent.subscribe((notification) => {
      if (notification.type === 'assistant/delta') deltas++
    })
    const before = count.syncs
    for (let turn = 0; turn < 20; turn++) await agent.send(`prompt ${turn}`).result
    const syncs = count.syncs - before
    await agent.dispose()
    await store.close()
    return { deltas, syncs, events: session.residentEvents.length }
  }
  const few = await run(200)
  const many = await run(20)
  const perDelta = (many.syncs - few.syncs) / (many.deltas - few.deltas)
  return {
    id: kind === 'jsonl' ? 'B3' : 'B4',
    what: `${kind}: agent, 20 turns: ${few.deltas} vs ${many.deltas} deltas → ${few.syncs} vs ${many.syncs} syncs (${many.events} events)`,
    figure: `${perDelta.toFixed(3)} syncs/delta`,
    floor: '0',
    ratio: '-',
    target: '0 per delta',
  }
}

/** B4: the last 50 events of a 2,000-event session, rows to checked events, vs SELECT + JSON.parse. */
async function tailRead(store: SessionStore, directory: string): Promise<Row> {
  const events = appends(2_000, 4)
  const id = await writeSession(store, events)
  const db = new Database(join(directory, 'b34-sqlite', 'sessions.db'), { readonly: true })
  const select = db.prepare(
    'SELECT seq, line FROM events WHERE session_id = ? AND seq >= ? ORDER BY seq',
  )
  const from = events.length - 50
  const repeat = 500
  const floor = async () => {
    for (let index = 0; index < repeat; index++)
      for (const row of select.all(id, from) as { line: string }[]) JSON.parse(row.line)
  }
  const subject = async () => {
    for (let index = 0; index < repeat; index++)
      for (const row of select.all(id, from) as { seq: number; line: string }[]) {
        const line = decodeLine(row.line)
        const check = EVENT_DATA_CHECK[line.type as keyof typeof EVENT_DATA_CHECK]
        if (!check || check(line.data)) throw new Error(`bench: seq ${row.seq} invalid`)
      }
  }
  const pairs = await interleaveAsync(7, 'cpu', subject, floor)
  db.close()
  return {
    id: 'B4',
    what: 'sqlite: tail read of 50 events (rows → checked events; CPU)',
    figure: fmt.us((medianOf(pairs, 'subject') * 1000) / repeat),
    floor: `${fmt.us((medianOf(pairs, 'floor') * 1000) / repeat)} SELECT+parse`,
    ratio: fmt.ratio(ratios(pairs)),
    target: '≤ 3×',
  }
}

/** B8: list over 1,000 sessions, before and after their logs grow; time must not follow size. */
async function listing(directory: string, full: boolean): Promise<Row[]> {
  const rows: Row[] = []
  for (const kind of KINDS) {
    const root = join(directory, `b8-${kind}`)
    const store = await openStore(urlOf(kind, root))
    const ids: string[] = []
    for (let index = 0; index < 1000; index++) {
      const session = await store.create({ cwd: `/work/${index % 10}`, title: `session ${index}` })
      session.append('user/message', {
        id: 'm',
        content: [{ type: 'text', text: 'hello' }],
        source: { kind: 'user' },
      })
      await session.close()
      ids.push(session.header.id)
    }
    await store.close()
    const time = async () => {
      const samples: { first: number; all: number }[] = []
      for (let round = 0; round < 7; round++) {
        const reader = await openStore(urlOf(kind, root))
        let start = process.hrtime.bigint()
        await reader.list({ limit: 50 })
        const first = Number(process.hrtime.bigint() - start) / 1e6
        start = process.hrtime.bigint()
        await reader.list({ limit: 1000 })
        samples.push({ first, all: Number(process.hrtime.bigint() - start) / 1e6 })
        await reader.close()
      }
      return { first: median(samples.map((s) => s.first)), all: median(samples.map((s) => s.all)) }
    }
    const small = await time()
    const grown = growLogs(kind, root, ids, full)
    const big = await time()
    rows.push({
      id: 'B8',
      what: `${kind}: list 1,000 sessions: first 50 rows / all, logs ${mb(grown.before)} → ${mb(grown.after)} (largest ${mb(grown.largest)}) (wall)`,
      figure: `${fmt.ms(big.first)} / ${fmt.ms(big.all)}`,
      floor: `${fmt.ms(small.first)} / ${fmt.ms(small.all)} small logs`,
      ratio: `${(big.first / small.first).toFixed(2)}× / ${(big.all / small.all).toFixed(2)}×`,
      target: 'first rows ≤ 100 ms; ≈ 1×',
    })
  }
  return rows
}

/**
 * Grows the logs behind the store's back (list must not notice): one session to the largest
 * size, the others by a share of the rest. JSONL gets raw lines appended to its files; SQLite
 * gets rows inserted with one statement.
 */
function growLogs(kind: Kind, root: string, ids: readonly string[], full: boolean) {
  const largest = full ? 1800 * MiB : 40 * MiB
  const rest = full ? 3200 * MiB : 0
  const line = `${envelope(1, ['user/message', { id: 'x', content: [{ type: 'text', text: 'filler '.repeat(150) }], source: { kind: 'user' } }])}\n`
  const sizeOf = (index: number) => (index === 0 ? largest : Math.floor(rest / (ids.length - 1)))
  let before = 0
  let after = 0
  if (kind === 'jsonl') {
    const chunk = Buffer.from(line.repeat(Math.ceil(MiB / line.length)))
    ids.forEach((id, index) => {
      const path = join(root, 'jsonl', 'sessions', id, 'events.jsonl')
      before += statSync(path).size
      const fd = openSync(path, 'a')
      for (let written = 0; written < sizeOf(index); written += chunk.length) writeSync(fd, chunk)
      // Written back now, so disk writeback does not run during the timed listing.
      fsyncSync(fd)
      closeSync(fd)
      after += statSync(path).size
    })
  } else {
    const path = join(root, 'sessions.db')
    before = statSync(path).size
    const db = new Database(path)
    const insert = db.prepare(
      'WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO events (session_id, seq, line) SELECT ?, i, ? FROM n',
    )
    ids.forEach((id, index) => {
      const rows = Math.floor(sizeOf(index) / line.length)
      if (rows > 0) insert.run(999 + rows, id, line)
    })
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.close()
    after = statSync(path).size
  }
  return { before, after, largest }
}

/**
 * Pairs per B11 row. A JSONL fork's wall time is mostly the sync of its kept bytes, which
 * varies by several ms run to run here (15–22 ms for 20 MB); with five pairs one slow sync
 * moved the median ratio by 0.2× (decision 0191). A SQLite fork grows the one database file
 * by its kept bytes, subject and floor alike, so its rows keep five.
 */
const FORK_PAIRS: Readonly<Record<Kind, number>> = { jsonl: 11, sqlite: 5 }

/** The seq of the `turn/end` nearest the middle of `events`. */
function middleTurnEnd(events: readonly Append[]): number {
  for (let seq = Math.floor(events.length / 2); seq < events.length; seq++)
    if (events[seq]![0] === 'turn/end') return seq
  return events.length - 1
}

/**
 * B11: fork at a middle seq (copy + open the child + close it), against a durable copy of the
 * kept bytes. For SQLite also beside a copy into the same table, as a fork must make it:
 * SQLite reads rows inserted into their own table through a temporary copy (decision 0069),
 * in one statement (which spills that copy to a temporary file) and in ranges of 1,000 seqs
 * (as the fork copies, each range's temporary copy in memory; decision 0171). For JSONL also
 * against its physical floor (decision 0186): the durable copy plus the syncs a crash-safe fork
 * owes beyond it, and without the removal of the copy the plain floor times.
 */
async function forking(directory: string, full: boolean): Promise<Row[]> {
  const rows: Row[] = []
  const events = bigLog(full ? 200 * MiB : 40 * MiB, 5)
  const atSeq = middleTurnEnd(events)
  for (const kind of KINDS) {
    const root = join(directory, `b11-${kind}`)
    const store = await openStore(urlOf(kind, root))
    const id = await writeSession(store, events)
    let keptBytes = 0
    let floor: () => Promise<void>
    let sameTableFloors: { what: string; floor: () => Promise<void> }[] = []
    let closeFloor = () => {}
    let physicalFloor: (() => Promise<void>) | undefined
    /**
     * What a JSONL run wrote (the fork's child, the floor's copy), removed after it, untimed
     * (`interleaveAsync`'s `tidy`). On this VM, writing 20 MB into page cache never used before
     * took 37 ms where the same write into pages a removed file gave back took 4.9 ms: the
     * host backs a guest page at its first touch. With each run's file kept, every run paid
     * that, by turns and phases, and a ratio swung 0.6–2.0× (decision 0191).
     */
    const made: string[] = []
    const tidy = () => {
      for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true })
    }
    if (kind === 'jsonl') {
      const source = join(root, 'jsonl', 'sessions', id, 'events.jsonl')
      const text = readFileSync(source)
      let end = 0
      for (let line = 0; line <= atSeq + 1; line++) end = text.indexOf(10, end) + 1
      keptBytes = end
      let copies = 0
      floor = async () => {
        const target = join(root, `copy-${copies++}.jsonl`)
        const input = await open(source, 'r')
        const output = await open(target, 'w')
        const buffer = Buffer.allocUnsafe(4 * MiB)
        for (let offset = 0; offset < keptBytes; ) {
          const { bytesRead } = await input.read(
            buffer,
            0,
            Math.min(buffer.length, keptBytes - offset),
            offset,
          )
          await output.write(buffer, 0, bytesRead)
          offset += bytesRead
        }
        await output.datasync()
        await Promise.all([input.close(), output.close()])
        made.push(target)
      }
      const headerLine = Buffer.from(`${text.subarray(0, text.indexOf(10)).toString()}\n`)
      const syncDirectory = async (path: string) => {
        const handle = await open(path, 'r')
        await handle.sync()
        await handle.close()
      }
      // What any crash-safe fork does beyond the plain copy: a new directory, the kept bytes
      // behind room for the header and synced before it (a crash must not leave a header over
      // a shorter body), the new directory's entry synced meanwhile, then the header and its
      // sync beside the sync of the directory's own entries. And the CRC-32 of the kept bytes,
      // which the child's checkpoint owes (decision 0178; summed as the store sums). No lease,
      // metadata or checkpoint file.
      physicalFloor = async () => {
        const directory = join(root, `physical-${copies++}`)
        made.push(directory)
        await mkdir(directory)
        const input = await open(source, 'r')
        const output = await open(join(directory, 'events.jsonl'), 'wx')
        // Pipelined as well as a copy can be: the next chunk is read while this one is written
        // and summed (a serial read-then-write loop took 21 ms where the fork's copy took 13).
        const buffers = [Buffer.allocUnsafe(2 * MiB), Buffer.allocUnsafe(2 * MiB)] as const
        const readAt = (buffer: Buffer, offset: number) =>
          input.read(buffer, 0, Math.min(buffer.length, keptBytes - offset), offset)
        let reading: ReturnType<typeof readAt> | undefined = readAt(buffers[0], 0)
        let writing: Promise<unknown> | undefined
        let checksum = 0
        for (let offset = 0, which = 0; reading; which ^= 1) {
          const { bytesRead }: { bytesRead: number } = await reading
          const buffer = buffers[which]!
          const next: number = offset + bytesRead
          // The other buffer is read into again once its write is done.
          await writing
          reading = next < keptBytes ? readAt(buffers[which ^ 1]!, next) : undefined
          writing = output.write(buffer, 0, bytesRead, headerLine.length + offset)
          checksum = crc32(buffer.subarray(0, bytesRead), checksum)
          offset = next
        }
        await writing
        await Promise.all([output.datasync(), syncDirectory(root)])
        await output.write(headerLine, 0, headerLine.length, 0)
        await Promise.all([output.datasync(), syncDirectory(directory)])
        await Promise.all([input.close(), output.close()])
      }
    } else {
      const db = new Database(join(root, 'sessions.db'))
      db.exec(
        'CREATE TABLE IF NOT EXISTS copy_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL, PRIMARY KEY (session_id, seq)) STRICT',
      )
      keptBytes = db
        .prepare('SELECT sum(length(line)) FROM events WHERE session_id = ? AND seq <= ?')
        .pluck()
        .get(id, atSeq) as number
      const copy = db.prepare(
        'INSERT INTO copy_events SELECT ?, seq, line FROM events WHERE session_id = ? AND seq <= ?',
      )
      const copyHere = db.prepare(
        'INSERT INTO events SELECT ?, seq, line FROM events WHERE session_id = ? AND seq <= ?',
      )
      const copyRange = db.prepare(
        'INSERT INTO events SELECT ?, seq, line FROM events WHERE session_id = ? AND seq >= ? AND seq <= ?',
      )
      let copies = 0
      floor = async () => {
        db.transaction(() => copy.run(`copy-${copies++}`, id, atSeq)).immediate()
      }
      sameTableFloors = [
        {
          what: 'within the events table',
          floor: async () => {
            db.transaction(() => copyHere.run(`copy-${copies++}`, id, atSeq)).immediate()
          },
        },
        {
          what: 'within the events table, 1,000 seqs per statement',
          floor: async () => {
            const child = `copy-${copies++}`
            db.transaction(() => {
              for (let from = 0; from <= atSeq; from += 1000)
                copyRange.run(child, id, from, Math.min(atSeq, from + 999))
            }).immediate()
          },
        },
      ]
      closeFloor = () => db.close()
    }
    for (const isOpen of [true, false]) {
      // Open here (the usual /fork): the source's checker stands for the kept events. Closed:
      // its checkpoint does. Either way the kept records are copied and scanned in one pass.
      const source = isOpen ? await store.open(id) : undefined
      const fork = async () => {
        const child = await store.fork(id, { atSeq })
        await child.close()
        if (kind === 'jsonl') made.push(join(root, 'jsonl', 'sessions', child.header.id))
      }
      const jsonlTidy = kind === 'jsonl' ? tidy : undefined
      const pairs = await interleaveAsync(FORK_PAIRS[kind], 'wall', fork, floor, jsonlTidy)
      const what = `${kind}: fork of a ${mb(events.length * 1100)} session at seq ${atSeq.toLocaleString('en')} (${mb(keptBytes)} kept), source ${isOpen ? 'open here' : 'closed'} (wall)`
      rows.push({
        id: 'B11',
        what,
        figure: fmt.ms(medianOf(pairs, 'subject')),
        floor: `${fmt.ms(medianOf(pairs, 'floor'))} durable copy`,
        ratio: fmt.ratio(ratios(pairs)),
        target: '≤ 1.2×',
      })
      if (physicalFloor) {
        const physical = await interleaveAsync(
          FORK_PAIRS[kind],
          'wall',
          fork,
          physicalFloor,
          jsonlTidy,
        )
        rows.push({
          id: 'B11',
          what: `${what}, against its physical floor`,
          figure: fmt.ms(medianOf(physical, 'subject')),
          floor: `${fmt.ms(medianOf(physical, 'floor'))} durable copy + owed syncs`,
          ratio: fmt.ratio(ratios(physical)),
          target: 'orientation',
        })
      }
      for (const sameTable of sameTableFloors) {
        const here = await interleaveAsync(FORK_PAIRS[kind], 'wall', fork, sameTable.floor)
        rows.push({
          id: 'B11',
          what: `${what}, beside a copy ${sameTable.what}`,
          figure: fmt.ms(medianOf(here, 'subject')),
          floor: `${fmt.ms(medianOf(here, 'floor'))} durable copy ${sameTable.what}`,
          ratio: fmt.ratio(ratios(here)),
          target: '≤ 1.2×',
        })
      }
      await source?.close()
    }
    closeFloor()
    await store.close()
  }
  return rows
}

/** B13: resume of a log with a large tool output and image, against the same log without them. */
async function largePayloads(directory: string, full: boolean): Promise<Row[]> {
  const rows: Row[] = []
  const base = bigLog(full ? 100 * MiB : 20 * MiB, 6)
  const output = 'a line of build output, long enough to look real\n'.repeat(
    Math.ceil(((full ? 50 : 10) * MiB) / 49),
  )
  const image = Buffer.alloc(((full ? 20 : 4) * MiB * 3) / 4, 9).toString('base64')
  const turn = base.filter(([type]) => type === 'turn/start').length + 1
  const payloadTurn: Append[] = [
    ['turn/start', { turn, trigger: 'prompt' }],
    [
      'user/message',
      {
        id: 'p',
        content: [{ type: 'text', text: 'build and screenshot' }],
        source: { kind: 'user' },
      },
    ],
    ['step/start', { turn, step: 1 }],
    [
      'assistant/message',
      {
        id: 'a',
        content: [
          { type: 'tool-call', id: 'c1', name: 'bash', args: {} },
          { type: 'tool-call', id: 'c2', name: 'screenshot', args: {} },
        ],
        provider: 'bench',
        model: 'bench',
        stopReason: 'tool-calls',
        usage: { inputTokens: 1, outputTokens: 1 },
      },
    ],
    ['tool/call', { callId: 'c1', name: 'bash', args: {} }],
    [
      'tool/result',
      { callId: 'c1', name: 'bash', content: [{ type: 'text', text: output }], isError: false },
    ],
    ['tool/call', { callId: 'c2', name: 'screenshot', args: {} }],
    [
      'tool/result',
      {
        callId: 'c2',
        name: 'screenshot',
        content: [{ type: 'image', mediaType: 'image/png', data: image }],
        isError: false,
      },
    ],
    ['step/end', { turn, step: 1 }],
    ['turn/end', { turn, reason: { kind: 'completed' } }],
  ]
  const plain: Append[] = payloadTurn.map((append) => {
    const [type, data] = append
    if (type !== 'tool/result') return append
    return [type, { ...data, content: [{ type: 'text', text: 'small' }] }] as Append
  })
  for (const kind of KINDS) {
    const root = join(directory, `b13-${kind}`)
    const store = await openStore(urlOf(kind, root))
    const withPayloads = await writeSession(store, [...base, ...payloadTurn])
    const without = await writeSession(store, [...base, ...plain])
    // One untimed pair first, as B2 does: the first resume compiles the loader.
    await openAndProject(store, withPayloads)
    await openAndProject(store, without)
    // A fresh histogram per run, as in B2: the longest block of a resume with the payloads.
    const longestBlock = { subject: 0, floor: 0 }
    const watched = async (id: string, which: keyof typeof longestBlock) => {
      const delay = monitorEventLoopDelay({ resolution: 5 })
      delay.enable()
      await openAndProject(store, id)
      delay.disable()
      longestBlock[which] = Math.max(longestBlock[which], delay.max / 1e6)
    }
    const pairs = await interleaveAsync(
      5,
      'wall',
      () => watched(withPayloads, 'subject'),
      () => watched(without, 'floor'),
    )
    rows.push({
      id: 'B13',
      what: `${kind}: resume with a ${mb(output.length)} output and a ${mb(image.length)} image (base64) on a ${mb(base.length * 1100)} log; largest line ${(largestLine(kind, root) / 1024).toFixed(0)} KiB; longest event-loop block ${longestBlock.subject.toFixed(0)} ms (${longestBlock.floor.toFixed(0)} ms without them) (wall)`,
      figure: fmt.ms(medianOf(pairs, 'subject')),
      floor: `${fmt.ms(medianOf(pairs, 'floor'))} without them`,
      ratio: fmt.ratio(ratios(pairs)),
      target: '≤ 1.2×; no line > 1024 KiB; block ≤ 50 ms',
    })
    await store.close()
  }
  return rows
}

/** The largest stored line or row of a store, in bytes. */
function largestLine(kind: Kind, root: string): number {
  if (kind === 'sqlite') {
    const db = new Database(join(root, 'sessions.db'), { readonly: true })
    const size = db
      .prepare('SELECT max(length(CAST(line AS BLOB))) FROM events')
      .pluck()
      .get() as number
    db.close()
    return size
  }
  let largest = 0
  const sessions = join(root, 'jsonl', 'sessions')
  for (const id of readdirSync(sessions)) {
    const text = readFileSync(join(sessions, id, 'events.jsonl'))
    for (
      let start = 0, end = text.indexOf(10);
      end >= 0;
      start = end + 1, end = text.indexOf(10, start)
    )
      largest = Math.max(largest, end - start)
  }
  return largest
}

/**
 * Runs B2, B3, B4, B8, B11 and B13 and returns their rows. `only` picks some of them by id
 * (`B2`, `B3`, `B4`, `B8`, `B11`, `B13`; B3 is the JSONL append, B4 the SQLite one).
 */
export async function storeBenchmarks(options: {
  full: boolean
  only?: readonly string[]
}): Promise<Row[]> {
  const directory = mkdtempSync(join(tmpdir(), 'rudder-bench-stores-'))
  const runs = (id: string) => options.only === undefined || options.only.includes(id)
  try {
    return [
      ...(runs('B2') ? await fullLoad(directory, options.full) : []),
      ...(runs('B3') || runs('B4')
        ? await durableAppend(
            directory,
            options.full,
            KINDS.filter((kind) => runs(kind === 'jsonl' ? 'B3' : 'B4')),
          )
        : []),
      ...(runs('B8') ? await listing(directory, options.full) : []),
      ...(runs('B11') ? await forking(directory, options.full) : []),
      ...(runs('B13') ? await largePayloads(directory, options.full) : []),
    ]
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

function sqliteBytes(path: string, id: string): number {
  const db = new Database(path, { readonly: true })
  const bytes = db
    .prepare('SELECT sum(length(line)) FROM events WHERE session_id = ?')
    .pluck()
    .get(id) as number
  db.close()
  return bytes
}
