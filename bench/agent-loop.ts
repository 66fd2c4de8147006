/**
 * B5+ (agent loop): µs per step of one turn of N steps (each a trivial tool call) in the memory
 * store, at 1k and 30k steps, against a hand-written loop that does the same bookkeeping with
 * no harness: append the same events to an array, project the messages by hand, await a
 * stream of the same parts and run the tool. Target: slope ≤ 1.2, overhead ≤ 3× the floor.
 * Beside it, the heap allocated per step, a counter machine noise does not move.
 */
import { getHeapStatistics } from 'node:v8'
import { z } from 'zod'
import { createAgent, createSession, defineTool, type Message } from '../src/index.js'
import { scriptedProvider } from '../src/testing.js'
import { collectGarbage } from './core.js'
import { fmt, mainThreadClock, median, type Row } from './measure.js'

const echo = defineTool({
  name: 'echo',
  description: 'Returns ok.',
  parameters: z.object({}),
  execute: () => 'ok',
})

/** The echo tool with the allocation probe in it. */
const probed = (probe: () => void) =>
  defineTool({
    name: 'echo',
    description: 'Returns ok.',
    parameters: z.object({}),
    execute: () => {
      probe()
      return 'ok'
    },
  })

const mainThread = mainThreadClock()

/** CPU ms of a run: the main thread's, and every thread's. */
type Cpu = { readonly main: number; readonly all: number }

/**
 * The CPU ms of a whole async run (the loop never waits on I/O, so CPU is the cost), twice:
 * the main thread's, which is a step's latency, and the process's, which adds V8's compiler
 * and marking threads. The process's clock accounts those threads in 4 ms ticks (measure.ts
 * `mainThreadClock`), which made the slope swing from run to run; the per-step ratio has
 * been read on it since decision 0078, and both are printed.
 */
async function cpuOf(run: () => Promise<void>): Promise<Cpu> {
  const startMain = mainThread()
  const start = process.cpuUsage()
  await run()
  const used = process.cpuUsage(start)
  return { main: mainThread() - startMain, all: (used.user + used.system) / 1000 }
}

/**
 * `probe` (the allocation probe) runs in the tool, once a step but the last; the timed turns
 * have none. In the tool rather than in a session listener, which a session without one
 * does not pay for.
 */
async function agentTurn(steps: number, probe?: () => void): Promise<void> {
  const script = [
    ...Array.from({ length: steps - 1 }, (_, i) => ({
      toolCalls: [{ id: `c${i}`, name: 'echo', args: {} }],
    })),
    { text: 'done' },
  ]
  const provider = scriptedProvider(script)
  const agent = createAgent({
    session: createSession(),
    provider,
    tools: [probe ? probed(probe) : echo],
    maxSteps: steps + 1,
  })
  agent.send('go')
  await agent.idle()
  await agent.dispose()
}

/** The floor: the same events and messages, by hand, with an awaited stream per step. */
async function handLoop(steps: number, probe?: () => void): Promise<void> {
  const events: unknown[] = []
  const messages: Message[] = []
  let seq = 0
  const add = (type: string, data: unknown) =>
    events.push(Object.freeze({ seq: seq++, time: Date.now(), type, data }))
  add('turn/start', { turn: 1, trigger: 'prompt' })
  const prompt = Object.freeze([{ type: 'text' as const, text: 'go' }])
  add('user/message', { id: 'm', content: prompt, source: { kind: 'user' } })
  messages.push({ role: 'user', content: prompt })
  async function* stream(step: number) {
    yield { type: 'tool-call', id: `c${step}`, name: 'echo', args: {} }
    yield { type: 'end' }
  }
  for (let step = 1; step <= steps; step++) {
    add('step/start', { turn: 1, step })
    const request = { messages }
    if (request.messages.length === 0) throw new Error('unreachable')
    const content = []
    for await (const part of stream(step)) if (part.type === 'tool-call') content.push(part)
    add('assistant/message', { id: `a${step}`, content })
    messages.push({ role: 'assistant', content: content as never })
    if (step < steps) {
      add('tool/call', { callId: `c${step}`, name: 'echo', args: {} })
      probe?.()
      const result = [
        { type: 'text' as const, text: (await echo.execute({}, {} as never)) as string },
      ]
      add('tool/result', { callId: `c${step}`, name: 'echo', content: result, isError: false })
      messages.push({
        role: 'tool',
        callId: `c${step}`,
        name: 'echo',
        content: result,
        isError: false,
      })
    }
    add('step/end', { turn: 1, step })
  }
  add('turn/end', { turn: 1, reason: { kind: 'completed' } })
}

export async function agentLoopBenchmarks(): Promise<Row[]> {
  const sizes = [1_000, 30_000]
  // Warm the JIT past its tiers: after 200 steps a 1k-step turn still cost 5–10× its steady
  // state, which measured the compiler, not the loop.
  for (let round = 0; round < 3; round++) {
    await agentTurn(3_000)
    await handLoop(3_000)
  }
  // And past the agents' first few runs: Node gives every AbortSignal a shape of its own, so
  // each new run's signal threw the loop's optimized code (which reads `signal.aborted` at
  // every step) back to the interpreter until V8 stopped specializing on it, five or so agents
  // on. Three warm-up agents left that to the timed turns of 1k steps: a score of
  // deoptimizations and recompilations, in the figure (decision 0078).
  for (let round = 0; round < 16; round++) {
    await agentTurn(300)
    await handLoop(300)
  }
  const results = []
  for (const steps of sizes) {
    // A timed sample is a series of turns of 10k steps in all (one turn at 30k): a single
    // 1k-step turn lasts a few ms, near the resolution of the CPU clock on a busy machine.
    const turns = Math.max(1, Math.round(10_000 / steps))
    const series = async (turn: (steps: number) => Promise<void>) => {
      for (let i = 0; i < turns; i++) await turn(steps)
    }
    // One full collection per size, then an untimed series of each, then the timed rounds
    // with no forced collection between them. A forced collection before every timed turn
    // (as this bench did) frees the maps of the previous agent's objects, and with them the
    // optimized code that embeds them: each timed turn then ran its hot functions
    // unoptimized until they were compiled again (in the background, on a busy machine
    // thousands of steps later), and `process.cpuUsage` counts the compiler threads too. At
    // 1k steps that was most of the figure (130 µs a step against 45–60 in a series of
    // turns); at 30k a few percent. Collections the loop itself causes stay in the figure.
    collectGarbage()
    await series(agentTurn)
    await series(handLoop)
    const rounds = steps <= 1_000 ? 9 : 5
    const subject: Cpu[] = []
    const floor: Cpu[] = []
    const perStep = ({ main, all }: Cpu) => ({
      main: (main * 1000) / (steps * turns),
      all: (all * 1000) / (steps * turns),
    })
    for (let round = 0; round < rounds; round++) {
      subject.push(perStep(await cpuOf(() => series(agentTurn))))
      floor.push(perStep(await cpuOf(() => series(handLoop))))
    }
    const medians = (samples: Cpu[]): Cpu => ({
      main: median(samples.map((sample) => sample.main)),
      all: median(samples.map((sample) => sample.all)),
    })
    results.push({ steps, subject: medians(subject), floor: medians(floor) })
  }
  const [small, large] = results as [(typeof results)[0], (typeof results)[0]]
  const allocation = {
    subject: await allocatedPerStep((probe) => agentTurn(2_000, probe)),
    floor: await allocatedPerStep((probe) => handLoop(2_000, probe)),
  }
  return [
    ...results.flatMap((result) =>
      (['all', 'main'] as const).map((clock) => ({
        id: 'B5+',
        what: `agent loop per step, one turn of ${result.steps.toLocaleString('en')} tool steps (${clock === 'all' ? 'CPU' : 'main thread'})`,
        figure: fmt.us(result.subject[clock]),
        floor: `${fmt.us(result.floor[clock])} hand loop`,
        ratio: `${(result.subject[clock] / result.floor[clock]).toFixed(2)}×`,
        target: clock === 'all' ? '≤ 3× floor' : 'orientation',
      })),
    ),
    ...(['main', 'all'] as const).map((clock) => ({
      id: 'B5+',
      what: `  agent loop slope t(30k) / t(1k) per step (${clock === 'all' ? 'CPU' : 'main thread'})`,
      figure: `${(large.subject[clock] / small.subject[clock]).toFixed(2)}×`,
      floor: `${(large.floor[clock] / small.floor[clock]).toFixed(2)}× hand loop`,
      ratio: '',
      target: clock === 'main' ? 'slope ≤ 1.2' : 'orientation',
    })),
    {
      id: 'B5+',
      what: '  agent loop heap allocated per step (2,000 steps)',
      figure: `${allocation.subject.toFixed(1)} KB`,
      floor: `${allocation.floor.toFixed(1)} KB hand loop`,
      ratio: `${(allocation.subject / allocation.floor).toFixed(2)}×`,
      target: '-',
    },
  ]
}

/**
 * KB of heap allocated per step: the heap's growth from one step's tool call to the next,
 * summed over the steps no collection ran in (a collection shrinks the heap), less what the
 * probe itself allocates.
 */
async function allocatedPerStep(run: (probe: () => void) => Promise<void>): Promise<number> {
  let last = -1
  let bytes = 0
  let counted = 0
  const probe = () => {
    const used = getHeapStatistics().used_heap_size
    if (last >= 0 && used >= last) {
      bytes += used - last
      counted++
    }
    last = used
  }
  await run(() => {})
  const self: number[] = []
  for (let i = 0; i < 101; i++) {
    const a = getHeapStatistics().used_heap_size
    const b = getHeapStatistics().used_heap_size
    if (b >= a) self.push(b - a)
  }
  collectGarbage()
  await run(probe)
  return (bytes / counted - median(self)) / 1024
}
