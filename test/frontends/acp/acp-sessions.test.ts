/**
 * Sessions over ACP: load replays the whole log, list pages the store, fork, resume and close,
 * modes and the model as config options, and `_rudder/inject`.
 */
import { join } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import { type Message, openStore, project, type SessionEvent } from '../../../src/index.js'
import { notation } from '../../support/agent-harness.js'
import { ROOT } from '../cli/run-cli.js'
import { dialogueOf, writeUnreadSession } from '../unread-history.js'
import { checkedSessions, startAcp } from './acp-process.js'

const PROTOCOL = { protocolVersion: 1, clientCapabilities: {} }

/** The transcript as a flat list, from the projection of the log. */
function fromMessages(messages: readonly Message[]): string[][] {
  return messages.flatMap((message): string[][] => {
    if (message.role === 'tool')
      return [
        [
          'tool',
          message.callId,
          message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
        ],
      ]
    return message.content.map((block) => {
      switch (block.type) {
        case 'text':
          return [message.role === 'user' ? 'user' : 'text', block.text]
        case 'thinking':
          return ['thinking', block.text]
        case 'tool-call':
          return ['call', block.id]
        default:
          return ['user', `image ${block.mediaType}`]
      }
    })
  })
}

/** The same list, from the updates a load replayed. */
function fromUpdates(updates: readonly acp.SessionNotification[]): string[][] {
  return updates.flatMap(({ update }): string[][] => {
    switch (update.sessionUpdate) {
      case 'user_message_chunk':
        return [['user', update.content.type === 'text' ? update.content.text : '']]
      case 'agent_message_chunk':
        return [['text', update.content.type === 'text' ? update.content.text : '']]
      case 'agent_thought_chunk':
        return [['thinking', update.content.type === 'text' ? update.content.text : '']]
      case 'tool_call':
        return [['call', update.toolCallId]]
      case 'tool_call_update':
        if (update.status !== 'completed' && update.status !== 'failed') return []
        return [
          [
            'tool',
            update.toolCallId,
            (update.content ?? [])
              .map((item) =>
                item.type === 'content' && item.content.type === 'text' ? item.content.text : '',
              )
              .join(''),
          ],
        ]
      default:
        return []
    }
  })
}

describe('rudder acp: sessions', () => {
  it('session/load replays exactly what the log holds, sources included, then serves the session (cancel too)', async () => {
    const first = await startAcp({
      script: [
        {
          thinking: 'Check the files.',
          text: 'Looking around.',
          toolCalls: [{ id: 'c1', name: 'ls', args: {} }],
          holdUntilFile: 'h1',
        },
        { text: 'Done, with tests too.' },
      ],
    })
    const sessionId = await first.ready()
    const prompt = first.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Look around' }],
    })
    await first.untilText('around.')
    const steering = await first.agent.request<{ outcome: string }>('_session/steering', {
      sessionId,
      prompt: [{ type: 'text', text: 'also the tests' }],
    })
    expect(steering.outcome).toBe('injected')
    first.release('h1')
    expect(await prompt).toEqual({ stopReason: 'end_turn' })
    const injected = await first.agent.request<{ delivery: { status: string; seq: number } }>(
      '_rudder/inject',
      {
        sessionId,
        content: [{ type: 'text', text: '<note>the build is green</note>' }],
        source: { kind: 'plugin', name: 'ci-status' },
      },
    )
    expect(injected.delivery).toEqual({ status: 'logged', seq: expect.any(Number) })
    expect(await first.exit()).toEqual({ code: 0, signal: null })

    const second = await startAcp({
      after: first,
      script: [{ text: 'resumed work', holdUntilFile: 'h2' }],
    })
    await second.agent.request('initialize', PROTOCOL)
    const loaded = await second.agent.request('session/load', {
      sessionId,
      cwd: second.workspace,
      mcpServers: [],
    })
    expect(loaded.modes?.currentModeId).toBe('ask')
    const replayed = [...second.updates]
    const [before] = await checkedSessions(second)
    const events = before!.events
    expect(fromUpdates(replayed)).toEqual(fromMessages(project(events)))
    // Each user-role chunk names its event and source, so a client can tell them apart.
    const userEvents = events.filter(
      (event): event is Extract<SessionEvent, { type: 'user/message' | 'steering/message' }> =>
        event.type === 'user/message' || event.type === 'steering/message',
    )
    const chunks = replayed.filter((update) => update.update.sessionUpdate === 'user_message_chunk')
    expect(chunks.map((update) => update.update._meta)).toEqual(
      userEvents.map((event) => ({
        rudder: { source: event.data.source, type: event.type, seq: event.seq },
      })),
    )
    expect(userEvents.map((event) => event.data.source)).toEqual([
      { kind: 'user' },
      { kind: 'user' },
      { kind: 'plugin', name: 'ci-status' },
    ])
    expect(replayed.every((update) => update.sessionId === sessionId)).toBe(true)

    // The loaded session takes prompts, and a cancel.
    const next = second.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'carry on' }],
    })
    await second.untilText('resumed')
    await second.agent.notify('session/cancel', { sessionId })
    expect(await next).toEqual({ stopReason: 'cancelled' })
    expect(await second.exit()).toEqual({ code: 0, signal: null })
    const [after] = await checkedSessions(second)
    expect(notation(after!.events)).toBe(
      `${notation(events)} T+2 U(carry on) S+1 A{interrupted} S-1 T-2(canceled)`,
    )
  })

  it('session/load of a session whose history the store did not read replays all of it, then runs a turn', async () => {
    let stored: { id: string; events: SessionEvent[] } | undefined
    const child = await startAcp({
      script: [{ text: 'third answer' }],
      async prepare({ home, workspace }) {
        stored = await writeUnreadSession(`sqlite:${join(home, 'sessions.db')}`, {
          cwd: workspace,
        })
      },
    })
    const sessionId = stored!.id
    await child.agent.request('initialize', PROTOCOL)
    await child.agent.request('session/load', { sessionId, cwd: child.workspace, mcpServers: [] })
    const dialogue = fromUpdates(child.updates).filter(
      ([kind]) => kind === 'user' || kind === 'text',
    )
    expect(dialogue).toEqual([
      ['user', 'first question'],
      ['text', 'first answer'],
      ['user', 'second question'],
      ['text', 'second answer'],
    ])
    // Each replayed user chunk names the seq it came from, the first turn's too.
    expect(
      child.updates
        .filter((update) => update.update.sessionUpdate === 'user_message_chunk')
        .map((update) => (update.update._meta as { rudder: { seq: number } }).rudder.seq),
    ).toEqual([1, 8])
    const answer = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'third question' }],
    })
    expect(answer).toEqual({ stopReason: 'end_turn' })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [after] = await checkedSessions(child)
    expect(after!.events.slice(0, stored!.events.length)).toEqual(stored!.events)
    expect(dialogueOf(after!.events).slice(-2)).toEqual(['third question', 'third answer'])
  })

  it('session/list pages the store, newest first, filtered by cwd, with titles and update times', async () => {
    const child = await startAcp({
      script: [],
      async prepare({ home, workspace }) {
        const store = await openStore(`sqlite:${join(home, 'sessions.db')}`)
        for (let index = 0; index < 52; index++)
          await (await store.create({ cwd: workspace, title: `task ${index}` })).close()
        for (let index = 0; index < 2; index++)
          await (await store.create({ cwd: home, title: `elsewhere ${index}` })).close()
        await store.close()
      },
    })
    await child.agent.request('initialize', PROTOCOL)
    const page1 = await child.agent.request('session/list', { cwd: child.workspace })
    expect(page1.sessions).toHaveLength(50)
    expect(page1.nextCursor).toEqual(expect.any(String))
    expect(page1.sessions[0]).toMatchObject({
      cwd: child.workspace,
      title: expect.stringMatching(/^task \d+$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    const page2 = await child.agent.request('session/list', {
      cwd: child.workspace,
      cursor: page1.nextCursor!,
    })
    expect(page2.sessions).toHaveLength(2)
    expect(page2.nextCursor ?? undefined).toBeUndefined()
    const titles = [...page1.sessions, ...page2.sessions].map((session) => session.title)
    expect(new Set(titles).size).toBe(52)
    const times = [...page1.sessions, ...page2.sessions].map((session) => session.updatedAt!)
    expect([...times].sort().reverse()).toEqual(times)
    const all = await child.agent.request('session/list', {})
    const rest = await child.agent.request('session/list', { cursor: all.nextCursor! })
    expect(all.sessions.length + rest.sessions.length).toBe(54)
    await expect(
      child.agent.request('session/list', { cwd: 'relative/dir' }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('absolute'),
    })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    await checkedSessions(child)
  })

  it('forks a session, closes one, and resumes it without a replay', async () => {
    const child = await startAcp({ script: [{ text: 'one' }, { text: 'two' }] })
    const sessionId = await child.ready()
    await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'first' }],
    })
    const forked = await child.agent.request<{ sessionId: string }>('session/fork', {
      sessionId,
      cwd: child.workspace,
      mcpServers: [],
    })
    expect(forked.sessionId).not.toBe(sessionId)
    await child.agent.request('session/prompt', {
      sessionId: forked.sessionId,
      prompt: [{ type: 'text', text: 'in the fork' }],
    })
    await child.agent.request('session/close', { sessionId })
    await expect(
      child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] }),
    ).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('session/load') })
    const updatesBefore = child.updates.length
    await child.agent.request('session/resume', { sessionId, cwd: child.workspace })
    const after = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'again' }],
    })
    expect(after.stopReason).toBe('end_turn')
    // Resume replays nothing: only the new turn's updates arrived.
    const since = child.updates.slice(updatesBefore)
    expect(since.every((update) => update.update.sessionUpdate === 'agent_message_chunk')).toBe(
      true,
    )
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const sessions = await checkedSessions(child)
    const fork = sessions.find((session) => session.header.id === forked.sessionId)!
    const origin = sessions.find((session) => session.header.id === sessionId)!
    expect(fork.header.parent?.sessionId).toBe(sessionId)
    expect(notation(fork.events)).toBe(
      'T+1 U(first) S+1 H A S-1 T-1(completed) T+2 U(in the fork) S+1 A S-1 T-2(completed)',
    )
    expect(notation(origin.events)).toBe(
      'T+1 U(first) S+1 H A S-1 T-1(completed) T+2 U(again) S+1 A S-1 T-2(completed)',
    )
  })

  it('takes approval presets as modes and the model as a config option, the model change logged', async () => {
    const child = await startAcp({
      script: [
        { toolCalls: [{ id: 'c1', name: 'bash', args: { command: 'echo from-bash' } }] },
        { text: 'ran it' },
        { text: 'on the second model' },
      ],
      config: {
        providers: {
          scripted: { models: { second: { contextWindow: 2000, maxOutputTokens: 100 } } },
        },
      },
    })
    const sessionId = await child.ready()
    await expect(
      child.agent.request('session/set_mode', { sessionId, modeId: 'reckless' }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('ask, auto-edit, yolo'),
    })
    await child.agent.request('session/set_mode', { sessionId, modeId: 'yolo' })
    await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'run' }],
    })
    expect(child.permissions).toEqual([])
    const changed = await child.agent.request('session/set_config_option', {
      sessionId,
      configId: 'model',
      value: 'scripted/second',
    })
    expect(changed.configOptions.find((option) => option.id === 'model')).toMatchObject({
      currentValue: 'scripted/second',
    })
    expect(changed.configOptions.find((option) => option.id === 'mode')).toMatchObject({
      currentValue: 'yolo',
    })
    await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'again' }],
    })
    expect(
      child.updates.some(
        (update) =>
          update.update.sessionUpdate === 'config_option_update' &&
          update.update.configOptions.some(
            (option) => option.id === 'mode' && option.currentValue === 'yolo',
          ),
      ),
    ).toBe(true)
    // The legacy method some clients still send does the same.
    await child.agent.request('session/set_model', { sessionId, modelId: 'scripted/second' })
    await expect(
      child.agent.request('session/set_config_option', {
        sessionId,
        configId: 'model',
        value: 'nowhere/model',
      }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('nowhere/model') })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    const headers = session!.events.filter((event) => event.type === 'request/header')
    expect(headers.map((event) => (event.data as { model: string }).model)).toEqual([
      'scripted',
      'second',
    ])
    expect(notation(session!.events)).toContain('T+2 U(again) S+1 H A S-1 T-2(completed)')
  })

  it("starts the editor's MCP servers for the session: their tools run, a server that fails is a notice", async () => {
    const everything = join(
      ROOT,
      'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
    )
    const child = await startAcp({
      script: [
        { toolCalls: [{ id: 'm1', name: 'mcp__everything__echo', args: { message: 'from zed' } }] },
        { text: 'echoed' },
      ],
    })
    await child.agent.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: { session: { notices: {} } },
    })
    const { sessionId } = await child.agent.request('session/new', {
      cwd: child.workspace,
      mcpServers: [
        { name: 'everything', command: process.execPath, args: [everything, 'stdio'], env: [] },
        { name: 'github', command: 'no-such-mcp-server-binary', args: [], env: [] },
      ],
    })
    const response = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'echo through MCP' }],
    })
    expect(response).toEqual({ stopReason: 'end_turn' })
    const notice = child.updates.find((update) => update.update.sessionUpdate === 'notice')
    expect(JSON.stringify(notice?.update)).toContain('github')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    const result = session!.events.find((event) => event.type === 'tool/result')
    expect(result?.data).toMatchObject({
      name: 'mcp__everything__echo',
      isError: false,
      content: [{ type: 'text', text: 'Echo: from zed' }],
    })
  })

  it("_rudder/inject refuses a person's source, and unknown sessions are -32002", async () => {
    const child = await startAcp({ script: [] })
    const sessionId = await child.ready()
    await expect(
      child.agent.request('_rudder/inject', {
        sessionId,
        content: [{ type: 'text', text: 'x' }],
        source: { kind: 'user' },
      }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('source.kind') })
    await expect(
      child.agent.request('_session/steering', {
        sessionId: 'no-such-session',
        prompt: [{ type: 'text', text: 'x' }],
      }),
    ).rejects.toMatchObject({ code: -32002 })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(session!.events).toEqual([])
  })
})
