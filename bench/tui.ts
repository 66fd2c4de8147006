/**
 * The terminal UI's own costs (BENCHMARKS.md):
 * - B10 (TUI): `rudder` in a real pseudo-terminal until it is ready for input (the editor drawn:
 *   `starting…` or `idle` in the status line, docs/decisions/0083), against `node -e 0`,
 *   interleaved; and, without a target, until the session is open (`idle`).
 * - B7: the CPU of one frame (a streamed delta folded in and the screen re-rendered through
 *   pi-tui's differential renderer) behind a transcript of 100 and of 100k lines; and a
 *   keystroke in the editor with the 100k-line transcript behind it, p50/p99, in main-thread
 *   CPU (`keystrokeCosts`), beside the same keystrokes behind 100 lines and counters of its work.
 * - B6 (TUI): one model delta from the live notification to the terminal write, p50/p99, with
 *   the 100k-line transcript behind: the work a delta costs when its frame is drawn; then
 *   with the renderer's scheduling (the first delta after a quiet spell), and the frames a
 *   stream of deltas costs (≤ 1 per 16 ms).
 * Floors, measured A B in the same run: pi-tui's renderer alone drawing a screen of ready lines
 * with one line changed (what any frame costs with pi-tui pinned), and pi-tui's own scheduling.
 * Frames are drawn into a terminal that keeps what is written (no tty in the way).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Component, type Terminal, TUI } from '@mariozechner/pi-tui'
import { CachedEditor } from '../src/frontends/tui/cached-editor.js'
import { PacedTUI } from '../src/frontends/tui/paced-tui.js'
import { createTheme } from '../src/frontends/tui/theme.js'
import { TranscriptView } from '../src/frontends/tui/transcript-view.js'
import {
  createTranscriptModel,
  type TranscriptModel,
} from '../src/frontends/view/transcript-model.js'
import type { SessionEvent } from '../src/index.js'
import { random } from './fixtures.js'
import { cpuMs, fmt, median, type Row, wallMs } from './measure.js'
import { threadCpuClock, threadMs } from './thread-cpu.js'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const BIN = join(ROOT, 'bin/rudder.js')

class MemoryTerminal implements Terminal {
  written = 0
  lastWriteAt = 0n
  start(): void {}
  stop(): void {}
  async drainInput(): Promise<void> {}
  write(data: string): void {
    this.written += data.length
    this.lastWriteAt = process.hrtime.bigint()
  }
  get columns(): number {
    return 120
  }
  get rows(): number {
    return 40
  }
  get kittyProtocolActive(): boolean {
    return false
  }
  moveBy(): void {}
  hideCursor(): void {}
  showCursor(): void {}
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(): void {}
  setProgress(): void {}
}

/** A transcript of about `lines` rendered lines: turns of a prompt and a 4-line answer. */
function transcriptOf(lines: number): TranscriptModel {
  const model = createTranscriptModel()
  let seq = 0
  const add = (type: string, data: unknown) =>
    model.applyEvent({ seq: seq++, type, time: 0, data } as unknown as SessionEvent)
  for (let turn = 1; turn * 6 <= lines; turn++) {
    add('turn/start', { turn, trigger: 'prompt' })
    add('user/message', {
      id: `m${turn}`,
      content: [{ type: 'text', text: `question ${turn}` }],
      source: { kind: 'user' },
    })
    add('step/start', { turn, step: 1 })
    add('assistant/message', {
      content: [{ type: 'text', text: `answer ${turn}\n\nline two\n\nline three` }],
      stop: 'stop',
      usage: { inputTokens: 10, outputTokens: 10 },
    })
    add('step/end', { turn, step: 1 })
    add('turn/end', { turn, reason: { kind: 'completed' } })
  }
  const turn = Math.floor(lines / 6) + 1
  add('turn/start', { turn, trigger: 'prompt' })
  add('step/start', { turn, step: 1 })
  return model
}

type Screen = {
  readonly tui: TUI
  readonly terminal: MemoryTerminal
  readonly model: TranscriptModel
  readonly editor: CachedEditor
  frame(): void
}

/**
 * The App's screen over a transcript of about `lines` lines: the transcript view, the editor
 * and a status line, through the App's renderer (`PacedTUI`, or pi-tui's own `TUI` to compare
 * its scheduling). The heap is settled once built: the first collections after building a
 * 100k-line transcript move it to the old generation, a cost of loading it (B1), not of the
 * frames measured here.
 */
export function screenOf(lines: number, renderer: 'paced' | 'pi-tui' = 'paced'): Screen {
  const terminal = new MemoryTerminal()
  const tui = renderer === 'paced' ? new PacedTUI(terminal) : new TUI(terminal)
  const theme = createTheme(true)
  const model = transcriptOf(lines)
  const view = new TranscriptView(() => model.items, theme)
  const editor = new CachedEditor(tui, theme.editor)
  const root: Component = {
    render: (width) => {
      const bottom = [...editor.render(width), 'status']
      return [...view.render(width, terminal.rows - bottom.length), ...bottom]
    },
    invalidate: () => {},
  }
  tui.addChild(root)
  tui.setFocus(editor)
  // The renderer's own frame, without its 16 ms pacing timer.
  const draw = (tui as unknown as { doRender(): void }).doRender.bind(tui)
  draw()
  settleHeap()
  return { tui, terminal, model, editor, frame: draw }
}

/**
 * The floor: pi-tui's renderer alone drawing a screen of the same size whose lines are ready,
 * one of them changed per frame (what the differential renderer costs whatever draws the lines).
 */
function floorScreen(): () => void {
  const terminal = new MemoryTerminal()
  const tui = new TUI(terminal)
  const lines = Array.from({ length: terminal.rows }, (_, row) =>
    `line ${row} `.padEnd(terminal.columns - 1, '·'),
  )
  let frame = 0
  tui.addChild({
    render: () => {
      const out = [...lines]
      out[terminal.rows - 8] = `word ${frame++}`
      return out
    },
    invalidate: () => {},
  })
  const draw = (tui as unknown as { doRender(): void }).doRender.bind(tui)
  draw()
  return draw
}

function settleHeap(): void {
  ;(globalThis as { gc?: () => void }).gc?.()
}

export function delta(screen: Screen, turn: number, index: number): void {
  screen.model.applyNotification({
    type: 'assistant/delta',
    turn,
    step: 1,
    attempt: 1,
    block: 0,
    kind: 'text',
    text: index % 12 === 11 ? 'word\n' : 'word ',
  })
}

function frameCosts(lines: number, frames: number): number[] {
  const screen = screenOf(lines)
  const turn = Math.floor(lines / 6) + 1
  const costs: number[] = []
  for (let index = 0; index < frames; index++)
    costs.push(
      cpuMs(() => {
        delta(screen, turn, index)
        screen.frame()
      }),
    )
  return costs
}

/**
 * B7: a keystroke in the editor and its frame, 400 of them (every 40th a Backspace) typed into
 * one line behind the 100k-line transcript, interleaved with the bare pi-tui frame (the floor)
 * and with the same keystrokes behind a 100-line transcript. The figure is the main thread's
 * CPU (`thread-cpu.ts`): a keystroke's latency on a core of its own. The process's CPU over the
 * same keystrokes is printed beside it: it adds V8's background threads (the optimizing
 * compiler while the keystroke's code warms up, GC helpers), which Linux accounts at its 4 ms
 * tick, so a few keystrokes in 400 carry 4 ms of another thread's work (docs/decisions/0087).
 * Counters per keystroke: lines passed through pi-tui's per-line pass, characters word-wrapped.
 */
function keystrokeCosts(floor: () => void): { screen: Screen; rows: Row[] } {
  const clock = threadCpuClock()
  const threadCpu = clock === undefined ? cpuMs : (run: () => void) => threadMs(clock, run)
  const screen = screenOf(100_000)
  const small = screenOf(100)
  const keystrokes: number[] = []
  const processCpu: number[] = []
  const smallKeys: number[] = []
  const floors: number[] = []
  const counters = (of: Screen) => ({
    lines: (of.tui as PacedTUI).linesReset,
    wrapped: of.editor.charactersWrapped,
  })
  const [largeBefore, smallBefore] = [counters(screen), counters(small)]
  const count = 400
  for (let index = 0; index < count; index++) {
    const key = index % 40 === 39 ? '\x7f' : 'a'
    const processStart = process.cpuUsage()
    keystrokes.push(
      threadCpu(() => {
        screen.editor.handleInput(key)
        screen.frame()
      }),
    )
    const used = process.cpuUsage(processStart)
    processCpu.push((used.user + used.system) / 1000)
    floors.push(threadCpu(floor))
    smallKeys.push(
      threadCpu(() => {
        small.editor.handleInput(key)
        small.frame()
      }),
    )
  }
  const [largeAfter, smallAfter] = [counters(screen), counters(small)]
  // A long line with a non-ASCII character (pi-tui lays such text out with Intl.Segmenter):
  // 2,000 characters, typed on at its end, behind the 100-line transcript.
  small.editor.setText(`é${'word '.repeat(400)}`)
  small.frame()
  const longKeys: number[] = []
  const longBefore = counters(small)
  for (let index = 0; index < 200; index++)
    longKeys.push(
      threadCpu(() => {
        small.editor.handleInput(index % 6 === 5 ? ' ' : 'a')
        small.frame()
      }),
    )
  const longAfter = counters(small)
  // The same kind of line, prose (seeded words of 1–12 letters), typed into at its start: the
  // wrap after the edit is redone until it falls back onto the previous one (decisions 0087, 0088).
  const next = random(7)
  const words = Array.from({ length: 330 }, () =>
    'lorem ipsum'.slice(0, 1 + Math.floor(next() * 11)),
  )
  small.editor.setText(`é ${words.join(' ')}`.slice(0, 2000))
  small.editor.handleInput('\x1b[H')
  small.frame()
  const startBefore = counters(small)
  const startKeys: number[] = []
  for (let index = 0; index < 200; index++)
    startKeys.push(
      threadCpu(() => {
        small.editor.handleInput(index % 6 === 5 ? ' ' : 'a')
        small.frame()
      }),
    )
  const startAfter = counters(small)
  const perKey = (after: number, before: number) => ((after - before) / count).toFixed(1)
  const perLong = (after: number, before: number) => ((after - before) / 200).toFixed(1)
  // Keystrokes whose process CPU is mostly other threads' (V8's compiler and GC helpers,
  // accounted at the kernel's tick): the gap between the two clocks over the same keystroke.
  const otherThreads = processCpu.filter((cpu, index) => cpu - (keystrokes[index] ?? 0) > 1).length
  const clockName = clock === undefined ? 'process CPU (no WASI)' : 'main-thread CPU'
  return {
    screen,
    rows: [
      {
        id: 'B7',
        what: `TUI keystroke (editor + frame, ${clockName}), 100k-line transcript`,
        figure: `${p50p99(keystrokes)} (max ${fmt.ms(Math.max(...keystrokes))})`,
        floor: `${p50p99(floors)} bare pi-tui frame`,
        ratio: `p50 ${(percentile(keystrokes, 0.5) / percentile(floors, 0.5)).toFixed(2)}×`,
        target: '≤ 2 ms',
      },
      {
        id: 'B7',
        what: 'TUI keystroke: 100k vs 100-line transcript; all threads of the process',
        figure: `${p50p99(smallKeys)} at 100 lines`,
        floor: `process CPU ${p50p99(processCpu)}; ${otherThreads} keys carry > 1 ms of other threads`,
        ratio: `p50 ${(percentile(keystrokes, 0.5) / percentile(smallKeys, 0.5)).toFixed(2)}×`,
        target: '-',
      },
      {
        id: 'B7',
        what: `TUI keystroke at the end of a 2,000-character non-ASCII line (${clockName})`,
        figure: p50p99(longKeys),
        floor: `${p50p99(keystrokes)} the 100k run's line`,
        ratio: `p50 ${(percentile(longKeys, 0.5) / percentile(keystrokes, 0.5)).toFixed(2)}×`,
        target: '≤ 2 ms',
      },
      {
        id: 'B7',
        what: `TUI keystroke at the start of a 2,000-character line of prose with é (${clockName})`,
        figure: `${p50p99(startKeys)} (max ${fmt.ms(Math.max(...startKeys))})`,
        floor: `${p50p99(keystrokes)} the 100k run's line`,
        ratio: `p50 ${(percentile(startKeys, 0.5) / percentile(keystrokes, 0.5)).toFixed(2)}×`,
        target: '≤ 2 ms',
      },
      {
        id: 'B7',
        what: 'TUI keystroke work per key: lines through the line pass, characters wrapped',
        figure: `${perKey(largeAfter.lines, largeBefore.lines)} lines, ${perKey(largeAfter.wrapped, largeBefore.wrapped)} chars (100k)`,
        floor: `${perKey(smallAfter.lines, smallBefore.lines)} lines, ${perKey(smallAfter.wrapped, smallBefore.wrapped)} chars (100 lines)`,
        ratio: '-',
        target: '-',
      },
      {
        id: 'B7',
        what: 'TUI keystroke work per key on the 2,000-character line: lines, characters wrapped',
        figure: `${perLong(startAfter.lines, startBefore.lines)} lines, ${perLong(startAfter.wrapped, startBefore.wrapped)} chars at its start`,
        floor: `${perLong(longAfter.lines, longBefore.lines)} lines, ${perLong(longAfter.wrapped, longBefore.wrapped)} chars at its end`,
        ratio: '-',
        target: '-',
      },
    ],
  }
}

function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!
}

const p50p99 = (values: readonly number[]) =>
  `p50 ${fmt.ms(percentile(values, 0.5))} p99 ${fmt.ms(percentile(values, 0.99))}`

function frameRows(): Row[] {
  const frames = 300
  const small: number[] = []
  const large: number[] = []
  const largeAll: number[] = []
  // Interleaved rounds, so machine noise hits both sizes alike.
  for (let round = 0; round < 5; round++) {
    small.push(median(frameCosts(100, frames)))
    const costs = frameCosts(100_000, frames)
    large.push(median(costs))
    largeAll.push(...costs)
  }
  const ratio = large.map((value, index) => value / small[index]!)
  const floor = floorScreen()
  const keys = keystrokeCosts(floor)
  // B6: from the delta to the terminal write, wall time, A B with the floor's frame.
  const latencies: number[] = []
  const floors: number[] = []
  const screen = keys.screen
  const turn = Math.floor(100_000 / 6) + 1
  // The same frames' CPU: what the wall time is once other processes' turns are taken out.
  const cpus: number[] = []
  for (let index = 0; index < 600; index++) {
    const cpuStart = process.cpuUsage()
    const start = process.hrtime.bigint()
    delta(screen, turn, index)
    screen.frame()
    latencies.push(Number(screen.terminal.lastWriteAt - start) / 1e6)
    const cpu = process.cpuUsage(cpuStart)
    cpus.push((cpu.user + cpu.system) / 1000)
    floors.push(wallMs(floor))
  }
  return [
    {
      id: 'B7',
      what: 'TUI frame (delta + render, CPU), transcript 100k vs 100 lines',
      figure: `${fmt.ms(median(large))} (p99 ${fmt.ms(percentile(largeAll, 0.99))})`,
      floor: `${fmt.ms(median(small))} at 100 lines`,
      ratio: fmt.ratio({ median: median(ratio), min: Math.min(...ratio), max: Math.max(...ratio) }),
      target: '≤ 2×',
    },
    ...keys.rows,
    {
      id: 'B6',
      what: 'TUI delta → terminal write (wall; CPU p99), 100k-line transcript',
      figure: `${p50p99(latencies)} (CPU p99 ${fmt.ms(percentile(cpus, 0.99))})`,
      floor: `${p50p99(floors)} bare pi-tui frame`,
      ratio: `p50 ${(percentile(latencies, 0.5) / percentile(floors, 0.5)).toFixed(2)}×`,
      target: 'p99 ≤ 1 ms',
    },
  ]
}

/**
 * Counters that machine noise does not move: heap allocated per frame (frames that a
 * collection ran in are left out of the sum) and the collections that ran during 1,000 frames
 * with their pause time, for a delta's frame and a keystroke's, against the bare pi-tui frame.
 */
async function allocationRows(): Promise<Row[]> {
  const { PerformanceObserver } = await import('node:perf_hooks')
  const { getHeapStatistics } = await import('node:v8')
  const screen = screenOf(100_000)
  const floor = floorScreen()
  const turn = Math.floor(100_000 / 6) + 1
  const count = async (run: (index: number) => void) => {
    const pauses: number[] = []
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) pauses.push(entry.duration)
    })
    observer.observe({ entryTypes: ['gc'] })
    let bytes = 0
    let frames = 0
    for (let index = 0; index < 1000; index++) {
      const before = getHeapStatistics().used_heap_size
      run(index)
      const after = getHeapStatistics().used_heap_size
      if (after >= before) {
        bytes += after - before
        frames++
      }
    }
    await new Promise((resolveEntries) => setTimeout(resolveEntries, 10))
    observer.disconnect()
    const total = pauses.reduce((sum, pause) => sum + pause, 0)
    return {
      kb: bytes / frames / 1024,
      text: `${(bytes / frames / 1024).toFixed(1)} KB/frame, ${pauses.length} GCs ${fmt.ms(total)}`,
    }
  }
  const floorCount = await count(() => floor())
  const deltas = await count((index) => {
    delta(screen, turn, index)
    screen.frame()
  })
  const keys = await count((index) => {
    screen.editor.handleInput(index % 40 === 39 ? '\x7f' : 'a')
    screen.frame()
  })
  return [
    {
      id: 'B6',
      what: 'TUI delta frame: heap allocated, GCs in 1,000 frames',
      figure: deltas.text,
      floor: `${floorCount.text} bare pi-tui frame`,
      ratio: `${(deltas.kb / floorCount.kb).toFixed(2)}×`,
      target: '-',
    },
    {
      id: 'B7',
      what: 'TUI keystroke frame: heap allocated, GCs in 1,000 frames',
      figure: keys.text,
      floor: `${floorCount.text} bare pi-tui frame`,
      ratio: `${(keys.kb / floorCount.kb).toFixed(2)}×`,
      target: '-',
    },
  ]
}

/**
 * B6 with the renderer's scheduling: a delta after a quiet spell (no frame for 20 ms) until
 * its frame is written, wall time, through `requestRender` as the App calls it; the App's
 * renderer and pi-tui's own, A B. Then deltas every millisecond for a second: frames drawn
 * per 16 ms (≤ 1).
 */
/** Deltas after a quiet spell timed per renderer, after the untimed ones (see `pacingRows`). */
const QUIET_SPELLS = 200
const QUIET_WARM_UP = 20

async function pacingRows(): Promise<Row[]> {
  const paced = screenOf(100_000, 'paced')
  const plain = screenOf(100_000, 'pi-tui')
  const turn = Math.floor(100_000 / 6) + 1
  const quiet = () => new Promise((resolveQuiet) => setTimeout(resolveQuiet, 20))
  const firstFrame = async (screen: Screen, index: number) => {
    await quiet()
    const written = screen.terminal.written
    const start = process.hrtime.bigint()
    delta(screen, turn, index)
    screen.tui.requestRender()
    while (screen.terminal.written === written) await new Promise(setImmediate)
    return Number(screen.terminal.lastWriteAt - start) / 1e6
  }
  // Untimed first: the first frames of a screen pay V8's compiling of the frame path (2.3 and
  // 1.1 ms, the two slowest samples of a run), which a process pays once, at its start.
  for (let index = 0; index < QUIET_WARM_UP; index++) {
    await firstFrame(paced, index)
    await firstFrame(plain, index)
  }
  const ours: number[] = []
  const theirs: number[] = []
  // 200 samples, so that the p99 is not simply the slowest one: with 60, a single late timer or
  // the warm-up's compiling decided it (0.65–2.0 ms run to run, old and new code alike).
  for (let index = QUIET_WARM_UP; index < QUIET_WARM_UP + QUIET_SPELLS; index++) {
    ours.push(await firstFrame(paced, index))
    theirs.push(await firstFrame(plain, index))
  }
  // A stream of deltas a millisecond apart: how many frames does it cost?
  await quiet()
  const tui = paced.tui as PacedTUI
  const framesBefore = tui.frames
  const start = performance.now()
  for (let index = 0; index < 1000 && performance.now() - start < 1000; index++) {
    delta(paced, turn, index)
    tui.requestRender()
    await new Promise((resolveTick) => setTimeout(resolveTick, 1))
  }
  const elapsed = performance.now() - start
  const frames = tui.frames - framesBefore
  return [
    {
      id: 'B6',
      what: 'TUI first delta after a quiet spell → write (wall, with scheduling)',
      figure: p50p99(ours),
      floor: `${p50p99(theirs)} pi-tui's own scheduling`,
      ratio: `p50 ${(percentile(ours, 0.5) / percentile(theirs, 0.5)).toFixed(2)}×`,
      target: 'p99 ≤ 1 ms',
    },
    {
      id: 'B6',
      what: 'TUI frames per 16 ms, a delta every ms for 1 s',
      figure: (frames / (elapsed / 16)).toFixed(2),
      floor: `${frames} frames in ${fmt.ms(elapsed)}`,
      ratio: '-',
      target: '≤ 1',
    },
  ]
}

/**
 * Spawn to the first screen ready for input, in a real pty, and to the first one showing the
 * idle status line (the session open). Ready for input: the editor is drawn and focused, and
 * what is typed and submitted is kept and sent once the session is open — the `starting…`
 * status line, or `idle` if that came first (docs/decisions/0083).
 */
async function readyMs(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ readonly input: number; readonly idle: number }> {
  const { spawn } = await import('@lydell/node-pty')
  const xterm =
    ((await import('@xterm/headless')) as { default?: typeof import('@xterm/headless') }).default ??
    (await import('@xterm/headless'))
  const terminal = new xterm.Terminal({ cols: 100, rows: 30, allowProposedApi: true })
  const start = process.hrtime.bigint()
  const child = spawn(process.execPath, [BIN, ...args], {
    name: 'xterm-256color',
    cols: 100,
    rows: 30,
    env: env as Record<string, string>,
  })
  let input: number | undefined
  return new Promise((resolveReady, reject) => {
    child.onExit(({ exitCode }) =>
      reject(new Error(`rudder exited ${exitCode} before it was ready`)),
    )
    child.onData((data) => {
      terminal.write(data, () => {
        const buffer = terminal.buffer.active
        for (let row = 0; row < terminal.rows; row++) {
          const line = buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? ''
          const elapsed = Number(process.hrtime.bigint() - start) / 1e6
          if (input === undefined && /rudder · starting…| · idle · /.test(line)) input = elapsed
          if (/ · idle · /.test(line)) {
            child.kill('SIGKILL')
            resolveReady({ input: input ?? elapsed, idle: elapsed })
            return
          }
        }
      })
    })
  })
}

async function startupRows(): Promise<Row[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'rudder-bench-tui-'))
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, RUDDER_HOME: scratch, TERM: 'xterm-256color' }
    delete env.NODE_EXTRA_CA_CERTS
    const script = join(scratch, 'script.json')
    writeFileSync(script, JSON.stringify([{ text: 'ready' }]))
    const args = ['--store', 'memory:', '--provider', `scripted:${script}`, '--cwd', scratch]
    const floorOnce = () => {
      const start = process.hrtime.bigint()
      spawnSync(process.execPath, ['-e', '0'], { env, stdio: 'ignore' })
      return Number(process.hrtime.bigint() - start) / 1e6
    }
    floorOnce()
    const ready: number[] = []
    const idle: number[] = []
    const floors: number[] = []
    for (let pair = 0; pair < 7; pair++) {
      const times = await readyMs(args, env)
      ready.push(times.input)
      idle.push(times.idle)
      floors.push(floorOnce())
    }
    const floor = median(floors)
    return [
      {
        id: 'B10',
        what: 'TUI: spawn to ready for input (editor drawn, pty)',
        figure: fmt.ms(median(ready)),
        floor: `${fmt.ms(floor)} node -e 0`,
        ratio: `+${fmt.ms(median(ready) - floor)}`,
        target: '≤ floor + 150 ms',
      },
      {
        id: 'B10',
        what: 'TUI: spawn to session open (idle status on screen, pty)',
        figure: fmt.ms(median(idle)),
        floor: `${fmt.ms(floor)} node -e 0`,
        ratio: `+${fmt.ms(median(idle) - floor)}`,
        target: '-',
      },
    ]
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

export async function tuiBenchmarks(): Promise<Row[]> {
  return [
    ...frameRows(),
    ...(await allocationRows()),
    ...(await pacingRows()),
    ...(await startupRows()),
  ]
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { printTable } = await import('./measure.js')
  // `frames`: only B6/B7 (no start-up in a pty), for work on the renderer; `keys`: only the
  // keystroke rows of B7 (a few seconds), for work on the editor.
  const mode = process.argv[2]
  printTable(
    mode === 'keys'
      ? keystrokeCosts(floorScreen()).rows
      : mode === 'frames'
        ? [...frameRows(), ...(await allocationRows()), ...(await pacingRows())]
        : await tuiBenchmarks(),
  )
  process.exit(0)
}
