/** The multi-session host: one store, many sessions with their own workspace and config. */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { checkLog, type EventMap, SessionBusyError } from '../../src/index.js'
import { openHost } from '../../src/runtime/host.js'

async function workspace() {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'rudder-host-')))
  onTestFinished(() => rm(root, { recursive: true, force: true }))
  const home = join(root, 'home')
  await mkdir(join(home, '.rudder'), { recursive: true })
  const script = join(root, 'script.json')
  await writeFile(
    script,
    JSON.stringify({
      model: 'demo',
      steps: [
        { toolCalls: [{ name: 'bash', args: { command: 'echo hi' } }] },
        { text: 'one' },
        { text: 'two' },
      ],
    }),
  )
  const repo = async (name: string, config?: object) => {
    const dir = join(root, name)
    await mkdir(join(dir, '.rudder'), { recursive: true })
    if (config) await writeFile(join(dir, '.rudder', 'config.json'), JSON.stringify(config))
    return dir
  }
  return { root, home, script, repo, store: `sqlite:${join(root, 'sessions.db')}` }
}

describe('openHost', () => {
  it('runs sessions of two workspaces side by side, each with its own cwd, policy and log', async () => {
    const place = await workspace()
    const strict = await place.repo('strict')
    const lenient = await place.repo('lenient', {
      approval: { bash: [{ pattern: 'echo *', action: 'allow' }] },
    })
    // A project's allow rule counts only in a directory the user trusts.
    await writeFile(
      join(place.home, '.rudder', 'config.json'),
      JSON.stringify({ trustedDirectories: [lenient] }),
    )
    const host = await openHost({
      cwd: strict,
      env: {},
      home: place.home,
      store: place.store,
      defaults: { provider: `scripted:${place.script}` },
    })
    onTestFinished(() => host.close())
    const a = await host.openSession({ cwd: strict })
    const b = await host.openSession({ cwd: lenient })
    expect(host.sessions.size).toBe(2)
    const [first, second] = await Promise.all([
      a.agent.send('run it').result,
      b.agent.send('run it').result,
    ])
    expect(first.status).toBe('completed')
    expect(second.status).toBe('completed')
    const outcome = (events: typeof a.session.residentEvents) =>
      events.find((event) => event.type === 'tool/result')?.data as EventMap['tool/result']
    // The policy of each session is its own workspace's.
    expect(outcome(a.session.residentEvents).error?.code).toBe('not-approved')
    expect(outcome(b.session.residentEvents).isError).toBe(false)
    expect(a.session.header.cwd).toBe(strict)
    expect(b.session.header.cwd).toBe(lenient)
    for (const runtime of [a, b]) expect(checkLog(runtime.session.residentEvents)).toEqual([])
  })

  it('resumes, continues and forks through the same store; close releases every lease', async () => {
    const place = await workspace()
    const cwd = await place.repo('repo')
    const options = {
      cwd,
      env: {},
      home: place.home,
      store: place.store,
      defaults: { provider: `scripted:${place.script}` },
    }
    const host = await openHost(options)
    const created = await host.openSession({ choice: { kind: 'new', title: 'first' } })
    const id = created.session.header.id
    await expect(host.openSession({ choice: { kind: 'resume', id } })).rejects.toBeInstanceOf(
      SessionBusyError,
    )
    const fork = await host.openSession({ choice: { kind: 'fork', id } })
    expect(fork.session.header.parent?.sessionId).toBe(id)
    await host.close()
    expect(host.sessions.size).toBe(0)

    const again = await openHost(options)
    onTestFinished(() => again.close())
    const resumed = await again.openSession({ choice: { kind: 'continue' } })
    expect([id, fork.session.header.id]).toContain(resumed.session.header.id)
    await expect(again.openSession({})).resolves.toBeDefined()
  })

  it('switches the model of a live session, logged as a new header', async () => {
    const place = await workspace()
    const cwd = await place.repo('repo')
    const host = await openHost({
      cwd,
      env: {},
      home: place.home,
      store: place.store,
      defaults: { provider: `scripted:${place.script}`, approveUnattended: true },
    })
    onTestFinished(() => host.close())
    const runtime = await host.openSession()
    expect(runtime.label).toBe('scripted/demo')
    await runtime.agent.send('first').result
    await runtime.setModel('faster')
    expect(runtime.label).toBe('scripted/faster')
    await runtime.agent.send('second').result
    const models = runtime.session.residentEvents
      .filter((event) => event.type === 'request/header')
      .map((event) => (event.data as EventMap['request/header']).model)
    expect(models).toEqual(['demo', 'faster'])
    await expect(runtime.setModel('nosuch/model')).rejects.toThrow(/nosuch/)
    expect(runtime.label).toBe('scripted/faster')
  })
})
