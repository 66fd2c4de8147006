/** MCP servers in a session: configured as Claude Code users do, called by the model, approved. */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { checkLog, type EventMap, project, type SessionEvent } from '../../src/index.js'
import { openHost } from '../../src/runtime/host.js'
import { CHANGING, EVERYTHING, tempDir } from './support.js'

async function place(options: {
  mcpJson: object
  steps: object[]
  trusted?: boolean
  approval?: object
}) {
  const root = await tempDir('rudder-mcp-session-')
  const home = join(root, 'home')
  const cwd = join(root, 'repo')
  await mkdir(join(home, '.rudder'), { recursive: true })
  await mkdir(join(cwd, '.git'), { recursive: true })
  await writeFile(join(cwd, '.mcp.json'), JSON.stringify(options.mcpJson))
  const user: Record<string, unknown> = {}
  if (options.trusted) user.trustedDirectories = [cwd]
  if (options.approval) user.approval = options.approval
  await writeFile(join(home, '.rudder', 'config.json'), JSON.stringify(user))
  const script = join(root, 'script.json')
  await writeFile(script, JSON.stringify({ model: 'demo', steps: options.steps }))
  const host = await openHost({
    cwd,
    env: { PATH: process.env.PATH },
    home,
    store: `sqlite:${join(root, 'sessions.db')}`,
    defaults: { provider: `scripted:${script}` },
  })
  onTestFinished(() => host.close())
  return { host, cwd }
}

const everything = {
  mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
}
const headers = (events: readonly SessionEvent[]) =>
  events
    .filter((event) => event.type === 'request/header')
    .map((event) => (event.data as EventMap['request/header']).tools.map((tool) => tool.name))
const results = (events: readonly SessionEvent[]) =>
  events
    .filter((event) => event.type === 'tool/result')
    .map((event) => event.data as EventMap['tool/result'])

describe('MCP servers in a session', () => {
  it("uses a project's .mcp.json unchanged once the directory is trusted; the next request carries the result", async () => {
    const { host } = await place({
      mcpJson: everything,
      trusted: true,
      steps: [
        { toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'ping' } }] },
        { text: 'done' },
      ],
    })
    const runtime = await host.openSession()
    const result = await runtime.agent.send('echo something').result
    expect(result).toMatchObject({ status: 'completed', text: 'done' })
    const events = runtime.session.residentEvents
    expect(results(events)).toMatchObject([
      {
        name: 'mcp__everything__echo',
        isError: false,
        content: [{ type: 'text', text: 'Echo: ping' }],
      },
    ])
    expect(headers(events)[0]).toEqual(
      expect.arrayContaining(['read', 'bash', 'mcp__everything__echo']),
    )
    // The request after the call is the projection of the log, result included.
    const lastStep = events.findLastIndex((event) => event.type === 'step/start')
    const messages = project(events.slice(0, lastStep))
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ type: 'text', text: 'Echo: ping' }],
    })
    expect(checkLog(events)).toEqual([])
    expect(runtime.mcp.summaries()).toMatchObject([
      { name: 'everything', state: { state: 'ready' } },
    ])
  })

  it('ignores the servers of an untrusted project, with one notice saying how to trust it', async () => {
    const { host, cwd } = await place({ mcpJson: everything, steps: [{ text: 'ok' }] })
    const runtime = await host.openSession()
    await runtime.agent.send('hi').result
    expect(runtime.mcp.summaries()).toEqual([])
    expect(headers(runtime.session.residentEvents)[0]).not.toContain('mcp__everything__echo')
    const notices = host.notices.all.filter((notice) => notice.message.includes('.mcp.json'))
    expect(notices).toHaveLength(1)
    expect(notices[0]?.message).toContain(`rudder trust ${cwd}`)
  })

  it('logs a tool-list change as a new request/header at the next step', async () => {
    const { host } = await place({
      mcpJson: { mcpServers: { changing: { command: process.execPath, args: [CHANGING] } } },
      trusted: true,
      approval: { tools: { 'mcp__changing__*': 'allow' } },
      steps: [
        { toolCalls: [{ name: 'mcp__changing__add-tool', args: {} }] },
        { toolCalls: [{ name: 'mcp__changing__extra-1', args: {} }] },
        { text: 'done' },
      ],
    })
    const runtime = await host.openSession()
    // The list_changed notification can trail the call's answer: wait for the change itself.
    const changed = new Promise<void>((resolve) =>
      runtime.mcp.onToolsChanged(() => {
        if (runtime.mcp.tools().some((tool) => tool.name === 'mcp__changing__extra-1')) resolve()
      }),
    )
    runtime.agent.on('step', async ({ step }) => {
      if (step === 2) await changed
    })
    expect(await runtime.agent.send('grow').result).toMatchObject({ status: 'completed' })
    const toolSets = headers(runtime.session.residentEvents)
    expect(toolSets).toHaveLength(2)
    expect(toolSets[0]).not.toContain('mcp__changing__extra-1')
    expect(toolSets[1]).toContain('mcp__changing__extra-1')
    expect(results(runtime.session.residentEvents).map((result) => result.content)).toEqual([
      [{ type: 'text', text: 'added extra-1' }],
      [{ type: 'text', text: 'extra-1 ran' }],
    ])
    expect(checkLog(runtime.session.residentEvents)).toEqual([])
  })

  it('asks for MCP tools by default, allows read-only ones, and obeys policy patterns', async () => {
    const { host } = await place({
      mcpJson: everything,
      trusted: true,
      approval: { tools: { 'mcp__everything__get-sum': 'deny' } },
      steps: [
        {
          toolCalls: [
            { name: 'mcp__everything__echo', args: { message: 'read-only' } },
            { name: 'mcp__everything__toggle-simulated-logging', args: {} },
            { name: 'mcp__everything__get-sum', args: { a: 1, b: 2 } },
          ],
        },
        { text: 'done' },
      ],
    })
    const runtime = await host.openSession()
    await runtime.agent.send('try them').result
    expect(
      results(runtime.session.residentEvents).map((result) => result.error?.code ?? 'ok'),
    ).toEqual(['ok', 'not-approved', 'denied'])
  })
})
