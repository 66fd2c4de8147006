/**
 * The runtime's plumbing of waiting and retrying: the config's `retry` reaches the agent, a
 * provider's timeouts reach its adapter, and the run's own settings (what command-line flags
 * give) beat both. A server that refuses or hangs on 127.0.0.1 stands in for a broken one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { AgentNotification } from '../../src/agent/notifications.js'
import { checkLog } from '../../src/core/index.js'
import { openRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/runtime.js'
import { startWireServer, type WireServer } from '../providers/support/wire-server.js'

let server: WireServer
beforeAll(async () => {
  server = await startWireServer()
})
afterAll(() => server.close())

const made: string[] = []
const runtimes: Runtime[] = []
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close()
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  server.requests.length = 0
})

function place(config: unknown) {
  const root = mkdtempSync(join(tmpdir(), 'rudder-runtime-network-'))
  made.push(root)
  const home = join(root, 'home')
  const cwd = join(root, 'project')
  mkdirSync(cwd, { recursive: true })
  const userFile = join(home, '.rudder', 'config.json')
  mkdirSync(dirname(userFile), { recursive: true })
  writeFileSync(userFile, JSON.stringify(config))
  return { home, cwd, env: {}, store: 'memory:', userFile }
}

async function run(options: RuntimeOptions) {
  const runtime = await openRuntime(options)
  runtimes.push(runtime)
  const notifications: AgentNotification[] = []
  runtime.agent.subscribe((notification) => notifications.push(notification))
  const result = await runtime.agent.send('Tide?').result
  expect(checkLog(runtime.session.residentEvents)).toEqual([])
  const attempts = notifications.flatMap((n) =>
    n.type === 'request/start' ? [`${n.attempt}/${n.maxAttempts}`] : [],
  )
  return { result, attempts }
}

describe('openRuntime: waiting and retrying from config', () => {
  it("the config's retry policy reaches the agent; the error names the base URL and its file", async () => {
    const gone = await startWireServer()
    await gone.close()
    const p = place({
      model: 'ollama/qwen3:8b',
      providers: { ollama: { baseURL: `${gone.origin}/v1` } },
      retry: { maxRetries: 2, baseDelayMs: 0 },
    })
    const { result, attempts } = await run(p)
    expect(attempts).toEqual(['1/3', '2/3', '3/3'])
    expect(result).toMatchObject({ status: 'error', error: { code: 'connection' } })
    expect(result.status === 'error' && result.error?.message).toContain(
      `cannot reach ${gone.origin}/v1 (base URL from ${p.userFile})`,
    )
  })

  it("the run's maxRetries and timeoutMs beat the config", async () => {
    const p = place({
      model: 'ollama/qwen3:8b',
      providers: { ollama: { baseURL: `${server.origin}/v1`, timeoutMs: 60_000 } },
      retry: { maxRetries: 3, baseDelayMs: 0 },
    })
    server.reply({ kind: 'silent' })
    const { result, attempts } = await run({ ...p, maxRetries: 0, timeoutMs: 150 })
    expect(attempts).toEqual(['1/1'])
    expect(result).toMatchObject({ status: 'error', error: { code: 'timeout' } })
    expect(result.status === 'error' && result.error?.message).toContain('within 150 ms')
    await server.requests[0]?.clientGone
  })

  it("the run's idleTimeoutMs reaches the adapter", async () => {
    const p = place({
      model: 'ollama/qwen3:8b',
      providers: { ollama: { baseURL: `${server.origin}/v1` } },
    })
    server.reply({ kind: 'stall', keepAlive: ': keep-alive\n\n', everyMs: 20 })
    const { result } = await run({ ...p, maxRetries: 0, idleTimeoutMs: 200 })
    expect(result).toMatchObject({ status: 'error', error: { code: 'idle-timeout' } })
  })
})
