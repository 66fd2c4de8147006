/**
 * `rudder serve` as real processes: the printed URL and token, the warning off loopback, and
 * two hosts sharing one SQLite store: the writer lease decides who runs a session; the other
 * host answers "busy on host …/pid …" and follows it read-only (docs/spec.md §9.1, §11).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { checkLog, openStore } from '../../../src/index.js'
import { BIN, cleanEnv } from '../cli/run-cli.js'
import { openStream } from './web-support.js'

type Served = {
  readonly child: ChildProcess
  readonly url: string
  readonly token: string
  readonly pid: number
  stderr(): string
  call(path: string, json?: unknown): Promise<Response>
  /** Ctrl-C; resolves with the exit code. */
  stop(): Promise<number | null>
}

function serve(args: readonly string[], env: Record<string, string>, cwd: string): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  onTestFinished(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL')
      await exited
    }
  })
  return new Promise((resolve, reject) => {
    let stdout = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const match = /^Open (http:\/\/\S+)\?token=(\S+)$/m.exec(stdout)
      if (!match) return
      const url = match[1]!
      const token = decodeURIComponent(match[2]!)
      resolve({
        child,
        url,
        token,
        pid: child.pid!,
        stderr: () => stderr,
        call: (path, json) =>
          fetch(`${url.replace(/\/$/, '')}${path}`, {
            method: json === undefined ? 'GET' : 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            ...(json === undefined ? {} : { body: JSON.stringify(json) }),
          }),
        stop: () => {
          child.kill('SIGINT')
          return exited
        },
      })
    })
    void exited.then((code) => reject(new Error(`rudder serve exited ${code}: ${stderr}`)))
  })
}

async function workspace(steps: readonly Record<string, unknown>[]) {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'rudder-serve-')))
  onTestFinished(() => rm(root, { recursive: true, force: true }))
  const work = join(root, 'work')
  await mkdir(work)
  await writeFile(join(root, 'script.json'), JSON.stringify({ model: 'demo', steps }))
  const store = `sqlite:${join(root, 'sessions.db')}`
  const args = [
    '--store',
    store,
    '--provider',
    `scripted:${join(root, 'script.json')}`,
    '--cwd',
    work,
  ]
  return { root, work, store, args, release: (name: string) => writeFile(join(root, name), '') }
}

describe('rudder serve', () => {
  it('prints a URL with a fresh token (or RUDDER_TOKEN), warns off loopback, and stops on Ctrl-C', async () => {
    const place = await workspace([])
    const fresh = await serve(place.args, cleanEnv(), place.root)
    expect(fresh.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    expect(fresh.token).toMatch(/^[\w-]{43}$/)
    expect(fresh.stderr()).toBe('')
    expect((await fresh.call('/api/host')).status).toBe(200)

    const fixed = await serve(
      [...place.args, '--host', '0.0.0.0'],
      cleanEnv({ RUDDER_TOKEN: 'fixed-token-123' }),
      place.root,
    )
    expect(fixed.token).toBe('fixed-token-123')
    expect(fixed.stderr()).toMatch(
      /warning: listening on 0\.0\.0\.0, reachable from other machines/,
    )
    expect((await fixed.call('/api/host')).status).toBe(200)
    expect(await fresh.stop()).toBe(0)
    expect(await fixed.stop()).toBe(0)

    const bad = spawn(process.execPath, [BIN, 'serve', '--port', 'many'], { env: cleanEnv() })
    let stderr = ''
    bad.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    expect(await new Promise((resolve) => bad.on('exit', resolve))).toBe(2)
    expect(stderr).toMatch(/--port takes a port number/)
  })

  it('shares a store between two hosts: one runs the session, the other says busy and follows read-only', async () => {
    const place = await workspace([
      { text: 'held by the first host', holdUntilFile: 'go' },
      { text: 'again' },
    ])
    const env = cleanEnv()
    const first = await serve(place.args, env, place.root)
    const second = await serve(place.args, env, place.root)
    const created = await first.call('/api/sessions', { title: 'shared' })
    const { header } = (await created.json()) as { header: { id: string } }
    const id = header.id
    const send = (await (
      await first.call(`/api/sessions/${id}/send`, { text: 'start' })
    ).json()) as { id: string }

    const follower = openStream(
      `${second.url.replace(/^http/, 'ws')}api/sessions/${id}/stream?since=-1`,
      {
        authorization: `Bearer ${second.token}`,
      },
    )
    expect(await follower.until((message) => message.type === 'caught-up')).toMatchObject({
      live: { mode: { kind: 'follow' } },
    })
    const refused = await second.call(`/api/sessions/${id}/send`, { text: 'me too' })
    expect(refused.status).toBe(409)
    const body = (await refused.json()) as { error: { code: string; message: string } }
    expect(body.error.code).toBe('SESSION_BUSY')
    expect(body.error.message).toContain(`on host ${hostname()}`)
    expect(body.error.message).toContain(`process ${first.pid}`)
    // The follower is told who holds the session.
    const mode = await follower.until((message) => message.type === 'mode')
    expect(mode).toMatchObject({
      mode: { kind: 'follow', busy: { pid: first.pid, host: hostname() } },
    })
    expect(mode.type === 'mode' && mode.mode.kind === 'follow' && mode.mode.busy?.message).toMatch(
      new RegExp(`busy on host ${hostname()} \\(pid ${first.pid}\\)`),
    )

    await place.release('go')
    const done = await first.call(`/api/sessions/${id}/deliveries/${send.id}?wait=true`)
    expect(await done.json()).toMatchObject({ result: { status: 'completed' } })
    // The follower reads what the first host writes, in order, without gaps.
    await follower.until(
      (message) =>
        message.type === 'events' && message.events.some((event) => event.type === 'turn/end'),
    )

    // Once the first host lets go, the second can run it.
    await first.call(`/api/sessions/${id}/close`, {})
    const taken = await second.call(`/api/sessions/${id}/send?wait=true`, { text: 'my turn' })
    expect(await taken.json()).toMatchObject({ result: { status: 'completed', turn: 2 } })
    await follower.until(
      (message) => message.type === 'caught-up' && message.live.mode.kind === 'live',
    )
    expect(await first.stop()).toBe(0)
    expect(await second.stop()).toBe(0)

    const store = await openStore(place.store)
    onTestFinished(() => store.close())
    const { events } = await store.read(id)
    expect(checkLog(events)).toEqual([])
    await follower.untilSeq(events.length - 1)
    expect(follower.events).toEqual(JSON.parse(JSON.stringify(events)))
  })
})
