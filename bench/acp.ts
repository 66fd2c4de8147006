/**
 * B6 for ACP: from a model delta leaving the provider to its `session/update` frame being
 * written to the connection's output stream, inside one process (`serveAcp` over in-memory
 * streams, a memory store, the SDK's client reading the other end). Each delta is yielded in
 * its own macrotask, as a network stream delivers them, so a figure is one delta's latency and
 * not a queue's.
 *
 * Floor: the same SDK and streams without rudder: a bare SDK agent calling `notify` for an
 * equivalent `session/update`, timed from the call to the frame's write.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as acp from '@agentclientprotocol/sdk/unstable'
import { serveAcp } from '../src/frontends/acp/serve.js'
import type { Provider, StreamPart } from '../src/index.js'
import { openHost } from '../src/runtime/host.js'
import { fmt, median, type Row } from './measure.js'

const DELTAS = 400
const PAIRS = 5

type Timings = number[]

/** An output stream that stamps the time each `agent_message_chunk` frame is written. */
function stampingPipe(stamps: bigint[]): {
  output: WritableStream<Uint8Array>
  readable: ReadableStream<Uint8Array>
} {
  const pipe = new TransformStream<Uint8Array, Uint8Array>()
  const writer = pipe.writable.getWriter()
  const marker = new TextEncoder().encode('agent_message_chunk')
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      const now = process.hrtime.bigint()
      if (includes(chunk, marker)) stamps.push(now)
      await writer.write(chunk)
    },
  })
  return { output, readable: pipe.readable }
}

function includes(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let at = 0; at + needle.length <= haystack.length; at++) {
    for (let index = 0; index < needle.length; index++)
      if (haystack[at + index] !== needle[index]) continue outer
    return true
  }
  return false
}

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve))

function latencies(starts: readonly bigint[], ends: readonly bigint[]): Timings {
  return starts.map((start, index) => Number(ends[index]! - start) / 1000)
}

async function rudderRun(scratch: string, round: number): Promise<Timings> {
  const script = join(scratch, `script-${round}.json`)
  writeFileSync(script, JSON.stringify([{ text: 'unused' }]))
  const host = await openHost({
    cwd: scratch,
    env: { RUDDER_HOME: scratch },
    home: scratch,
    store: 'memory:',
    defaults: { provider: `scripted:${script}` },
  })
  const starts: bigint[] = []
  const ends: bigint[] = []
  const toAgent = new TransformStream<Uint8Array, Uint8Array>()
  const fromAgent = stampingPipe(ends)
  const server = serveAcp({
    input: toAgent.readable,
    output: fromAgent.output,
    host,
    agentInfo: { name: 'rudder', version: 'bench' },
    log: () => {},
  })
  const client = acp
    .client()
    .onNotification(acp.methods.client.session.update, () => {})
    .connect(acp.ndJsonStream(toAgent.writable, fromAgent.readable))
  await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1 })
  const { sessionId } = await client.agent.request(acp.methods.agent.session.new, {
    cwd: scratch,
    mcpServers: [],
  })
  const timed: Provider = {
    id: 'timed',
    model: 'timed',
    async *stream(): AsyncGenerator<StreamPart> {
      for (let index = 0; index < DELTAS; index++) {
        await nextTick()
        starts.push(process.hrtime.bigint())
        yield { type: 'text-delta', text: 'token ' }
      }
      yield { type: 'end', stopReason: 'stop' }
    },
  }
  host.sessions.get(sessionId)!.agent.configure({ provider: timed, model: 'timed' })
  await client.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'stream' }],
  })
  client.close()
  await server.close()
  await host.close()
  return latencies(starts, ends)
}

async function floorRun(): Promise<Timings> {
  const starts: bigint[] = []
  const ends: bigint[] = []
  const toAgent = new TransformStream<Uint8Array, Uint8Array>()
  const fromAgent = stampingPipe(ends)
  const agent = acp
    .agent()
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1 }))
    .connect(acp.ndJsonStream(fromAgent.output, toAgent.readable))
  const client = acp
    .client()
    .onNotification(acp.methods.client.session.update, () => {})
    .connect(acp.ndJsonStream(toAgent.writable, fromAgent.readable))
  await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1 })
  for (let index = 0; index < DELTAS; index++) {
    await nextTick()
    starts.push(process.hrtime.bigint())
    void agent.client.notify(acp.methods.client.session.update, {
      sessionId: 'bench',
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'token ' } },
    })
  }
  await nextTick()
  client.close()
  agent.close()
  return latencies(starts, ends)
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!
}

export async function acpBenchmarks(): Promise<Row[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'rudder-bench-acp-'))
  try {
    await rudderRun(scratch, 0) // warm-up
    await floorRun()
    const subject: number[] = []
    const floor: number[] = []
    const ratios: number[] = []
    for (let pair = 0; pair < PAIRS; pair++) {
      const a = await rudderRun(scratch, pair + 1)
      const b = await floorRun()
      subject.push(...a)
      floor.push(...b)
      ratios.push(median(a) / Math.max(median(b), 1e-6))
    }
    return [
      {
        id: 'B6',
        what: `ACP: model delta → session/update written, p50 (${PAIRS}×${DELTAS} deltas)`,
        figure: fmt.us(percentile(subject, 0.5)),
        floor: `${fmt.us(percentile(floor, 0.5))} bare SDK notify`,
        ratio: fmt.ratio({
          median: median(ratios),
          min: Math.min(...ratios),
          max: Math.max(...ratios),
        }),
        target: 'p99 ≤ 1 ms',
      },
      {
        id: 'B6',
        what: 'ACP: model delta → session/update written, p99',
        figure: fmt.us(percentile(subject, 0.99)),
        floor: `${fmt.us(percentile(floor, 0.99))} bare SDK notify`,
        ratio: `${(percentile(subject, 0.99) / Math.max(percentile(floor, 0.99), 1e-6)).toFixed(2)}×`,
        target: '≤ 1000 µs',
      },
    ]
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
