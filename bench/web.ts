/**
 * The web host: B6 (a model delta → its WebSocket frame, inside the host), B9 (heap per idle
 * session with 100 sessions open in one host) and the time to first transcript paint of a
 * 10k-event session in Chromium (skipped without /usr/bin/chromium).
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { startWebServer } from '../src/frontends/web/web-server.js'
import { createAgent, createSession } from '../src/index.js'
import { type Host, openHost } from '../src/runtime/host.js'
import { scriptedProvider } from '../src/testing.js'
import { CHROMIUM, launchChromium } from '../test/e2e/chromium.js'
import { appends } from './fixtures.js'
import { fmt, median, type Row } from './measure.js'

type Place = { root: string; host: Host; cleanup: () => Promise<void> }

async function place(steps: readonly Record<string, unknown>[], store = 'sqlite'): Promise<Place> {
  const root = await mkdtemp(join(tmpdir(), 'rudder-bench-web-'))
  const home = join(root, 'home')
  await mkdir(join(home, '.rudder'), { recursive: true })
  await writeFile(join(root, 'script.json'), JSON.stringify({ model: 'bench', steps }))
  const host = await openHost({
    cwd: root,
    env: {},
    home,
    store: store === 'sqlite' ? `sqlite:${join(root, 'sessions.db')}` : store,
    defaults: { provider: `scripted:${join(root, 'script.json')}` },
  })
  return {
    root,
    host,
    cleanup: async () => {
      await host.close()
      await rm(root, { recursive: true, force: true })
    },
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** B6: from the agent's delta notification to `ws.send` having returned for its frame. */
export async function deltaToFrame(): Promise<Row[]> {
  const text = 'word '.repeat(8000) // 40k characters: 5000 deltas of 8
  const { host, cleanup } = await place([{ text }])
  const server = await startWebServer({ host, log: () => {} })
  const starts: number[] = []
  const ends: number[] = []
  const sendCosts: number[] = []
  // The first agent listener notes when the delta is emitted (before the web session's own).
  const openSession = host.openSession.bind(host)
  host.openSession = async (options) => {
    const runtime = await openSession(options)
    runtime.agent.subscribe((notification) => {
      if (notification.type === 'assistant/delta') starts.push(performance.now())
    })
    return runtime
  }
  // Server-side sockets are `ws` WebSockets: note when the delta's frame was handed over.
  const send = WebSocket.prototype.send
  WebSocket.prototype.send = function (this: WebSocket, data: unknown, ...rest: unknown[]) {
    const before = performance.now()
    ;(send as (...args: unknown[]) => void).call(this, data, ...rest)
    const after = performance.now()
    if (typeof data === 'string' && data.includes('"assistant/delta"')) {
      ends.push(after)
      sendCosts.push(after - before)
    }
  } as typeof send
  try {
    const web = await server.sessions.create({})
    const client = new WebSocket(
      `${server.url.replace(/^http/, 'ws')}api/sessions/${web.id}/stream?since=-1`,
      { headers: { authorization: `Bearer ${server.token}` } },
    )
    await new Promise((resolve) => client.once('message', resolve))
    const answer = web.give('prompt', {
      content: [{ type: 'text', text: 'go' }],
      source: { kind: 'user' },
    })
    await web.settled(answer.id, new AbortController().signal)
    client.close()
    const latencies = ends.map((end, index) => end - starts[index]!)
    const p99 = percentile(latencies, 99)
    const floor = percentile(sendCosts, 99)
    return [
      {
        id: 'B6',
        what: `web: delta → WebSocket frame in the host (${latencies.length} deltas), p50 ${fmt.us(median(latencies) * 1000)}`,
        figure: `p99 ${fmt.us(p99 * 1000)}`,
        floor: `p99 ${fmt.us(floor * 1000)} ws.send alone`,
        ratio: `${(p99 / floor).toFixed(2)}×`,
        target: '≤ 1 ms p99; ≤ 1 render / 16 ms (rAF)',
      },
    ]
  } finally {
    WebSocket.prototype.send = send
    await server.close()
    await cleanup()
  }
}

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc
  for (let i = 0; i < 3; i++) gc?.()
  return process.memoryUsage().heapUsed
}

/** B9: heap per idle session, 100 sessions that each ran one turn, in one host. */
export async function idleSessions(): Promise<Row[]> {
  const count = 100
  const steps = [{ text: 'done' }]
  const measure = async (open: (host: Host) => Promise<unknown>) => {
    const { host, cleanup } = await place(steps)
    await open(host) // warm: modules, caches, the first prepared statements
    const before = heapAfterGc()
    for (let i = 0; i < count; i++) await open(host)
    const after = heapAfterGc()
    await cleanup()
    return (after - before) / count / 1024
  }
  const runTurn = async (agent: { send(text: string): { result: Promise<unknown> } }) => {
    await agent.send('hello').result
  }
  const runtimes = await measure(async (host) => {
    const runtime = await host.openSession({})
    await runTurn(runtime.agent)
  })
  const { host: webHost, cleanup } = await place(steps)
  const server = await startWebServer({ host: webHost, log: () => {} })
  const web = async () => {
    const session = await server.sessions.create({})
    const answer = session.give('prompt', {
      content: [{ type: 'text', text: 'hello' }],
      source: { kind: 'user' },
    })
    await session.settled(answer.id, new AbortController().signal)
  }
  await web()
  const before = heapAfterGc()
  for (let i = 0; i < count; i++) await web()
  const webKb = (heapAfterGc() - before) / count / 1024
  await server.close()
  await cleanup()
  // The floor: a bare in-memory session and agent with the same turn.
  const bare: unknown[] = []
  const floorBefore = heapAfterGc()
  for (let i = 0; i < count; i++) {
    const session = createSession()
    const agent = createAgent({ session, provider: scriptedProvider([{ text: 'done' }]) })
    await runTurn(agent)
    bare.push(agent)
  }
  const floorKb = (heapAfterGc() - floorBefore) / count / 1024
  return [
    {
      id: 'B9',
      what: `heap per idle session, ${count} in one web host (runtime alone: ${runtimes.toFixed(0)} KB)`,
      figure: `${webKb.toFixed(0)} KB`,
      floor: `${floorKb.toFixed(0)} KB bare session+agent`,
      ratio: `${(webKb / floorKb).toFixed(2)}×`,
      target: '≤ 256 KB',
    },
  ]
}

/** Time to first transcript paint in Chromium: 10k events against 1k and an empty session. */
export async function firstPaint(): Promise<Row[]> {
  if (!existsSync(CHROMIUM))
    return [
      {
        id: 'web',
        what: 'first transcript paint, 10k events',
        figure: 'skipped',
        floor: `${CHROMIUM} missing`,
        ratio: '-',
        target: '-',
      },
    ]
  const { host, cleanup } = await place([])
  const server = await startWebServer({ host, log: () => {} })
  const browser = await launchChromium()
  try {
    const ids: Record<string, string> = {}
    for (const size of [0, 1000, 10_000]) {
      const session = await host.store.create({ title: `${size}` })
      for (const [type, data] of size === 0 ? [] : appends(size))
        session.append(type, data as never)
      await session.close()
      ids[size] = session.header.id
    }
    const page = await browser.context.newPage()
    await page.goto(server.tokenUrl)
    const paint = async (id: string) => {
      await page.goto('about:blank')
      await page.goto(`${server.url}#/s/${id}`)
      const painted = page.locator('[data-testid=session][data-painted-ms]')
      await painted.waitFor({ timeout: 60_000 })
      return Number(await painted.getAttribute('data-painted-ms'))
    }
    const figures: Record<string, number[]> = { 0: [], 1000: [], 10000: [] }
    for (let round = 0; round < 5; round++)
      for (const size of [0, 1000, 10_000]) figures[size]!.push(await paint(ids[size]!))
    const [empty, small, large] = [0, 1000, 10_000].map((size) => median(figures[size]!))
    return [
      {
        id: 'web',
        what: `first transcript paint, 10k events (1k: ${fmt.ms(small!)})`,
        figure: fmt.ms(large!),
        floor: `${fmt.ms(empty!)} empty session`,
        ratio: `${(large! / empty!).toFixed(2)}×`,
        target: 'report',
      },
    ]
  } finally {
    await browser.close()
    await server.close()
    await cleanup()
  }
}

export async function webBenchmarks(): Promise<Row[]> {
  return [...(await deltaToFrame()), ...(await idleSessions()), ...(await firstPaint())]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./measure.js')
  printTable(await webBenchmarks())
}
