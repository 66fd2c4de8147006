/**
 * `rudder acp` end to end: the SDK's client drives the built CLI over stdio with a scripted
 * model; every test checks the stream (acp-process.ts) and the logs left in the store.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type * as acp from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import { notation } from '../../support/agent-harness.js'
import { checkedSessions, startAcp } from './acp-process.js'

const PROTOCOL = { protocolVersion: 1, clientCapabilities: {} }

const kinds = (updates: readonly acp.SessionNotification[]) =>
  updates.map((notification) => notification.update.sessionUpdate)

describe('rudder acp: a prompt', () => {
  it('initializes, opens a session, streams a tool call and the answer, and ends the turn', async () => {
    const child = await startAcp({
      script: [
        {
          thinking: 'Look first.',
          text: 'Reading it.',
          toolCalls: [{ id: 'c1', name: 'read', args: { path: 'notes.txt' } }],
        },
        { text: 'It says hello.' },
      ],
    })
    const init = await child.agent.request('initialize', PROTOCOL)
    expect(init).toMatchObject({
      protocolVersion: 1,
      agentInfo: { name: 'rudder' },
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { embeddedContext: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      _meta: { steering: { supported: true } },
    })
    const { writeFileSync } = await import('node:fs')
    writeFileSync(join(child.workspace, 'notes.txt'), 'hello\n')
    const { sessionId } = await child.agent.request('session/new', {
      cwd: child.workspace,
      mcpServers: [],
    })
    const response = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'What do the notes say?' }],
    })
    expect(response).toEqual({ stopReason: 'end_turn' })
    expect(kinds(child.updates)).toEqual([
      'agent_thought_chunk',
      'agent_thought_chunk',
      'agent_message_chunk',
      'agent_message_chunk',
      'tool_call',
      'tool_call_update',
      'tool_call_update',
      'agent_message_chunk',
      'agent_message_chunk',
    ])
    expect(child.updates.every((update) => update.sessionId === sessionId)).toBe(true)
    const toolCall = child.updates.find((update) => update.update.sessionUpdate === 'tool_call')
    expect(toolCall?.update).toMatchObject({
      toolCallId: 'c1',
      kind: 'read',
      title: 'Read notes.txt',
      status: 'pending',
      locations: [{ path: join(child.workspace, 'notes.txt') }],
      rawInput: { path: 'notes.txt' },
    })
    const last = child.updates
      .filter((update) => update.update.sessionUpdate === 'tool_call_update')
      .at(-1)
    expect(last?.update).toMatchObject({ toolCallId: 'c1', status: 'completed' })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toBe(
      'T+1 U(What do the notes say?) S+1 H A TC(c1) TR(c1) S-1 S+2 A S-2 T-1(completed)',
    )
    expect(readFileSync(join(child.workspace, 'notes.txt'), 'utf8')).toBe('hello\n')
  })

  it.each([
    [[{ text: 'cut', stop: 'max-tokens' }], [], 'max_tokens', 'max-tokens'],
    [
      [{ toolCalls: [{ id: 'c1', name: 'ls', args: {} }] }, { text: 'never asked' }],
      ['--max-steps', '1'],
      'max_turn_requests',
      'step-limit',
    ],
  ])('answers with the stop reason of the turn: %#', async (script, args, stopReason, kind) => {
    const child = await startAcp({ script, args })
    const sessionId = await child.ready()
    const response = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'go' }],
    })
    expect(response.stopReason).toBe(stopReason)
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toMatch(new RegExp(`T-1\\(${kind}\\)$`))
  })

  it('answers a provider error with a JSON-RPC error carrying its message, and keeps serving', async () => {
    const child = await startAcp({
      script: [
        { error: { code: 'bad-request', message: 'the model refused the request' } },
        { text: 'fine now' },
      ],
    })
    const sessionId = await child.ready()
    const failed = child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'one' }],
    })
    await expect(failed).rejects.toMatchObject({
      code: -32603,
      message: 'the model refused the request',
      data: { code: 'bad-request', turn: 1 },
    })
    const next = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'two' }],
    })
    expect(next.stopReason).toBe('end_turn')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toContain('T-1(error) T+2 U(two)')
  })

  it('takes text, images and resource links as the message, and each embedded resource as a context of its own', async () => {
    const child = await startAcp({ script: [{ text: 'seen' }] })
    const sessionId = await child.ready()
    const image = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' } as const
    await child.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'Compare these.' },
        { type: 'resource_link', name: 'spec.md', uri: 'file:///docs/spec.md' },
        image,
        {
          type: 'resource',
          resource: { uri: 'file:///src/a.ts', mimeType: 'text/x-typescript', text: 'const a = 1' },
        },
      ],
    })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    const messages = session!.events.filter((event) => event.type === 'user/message')
    expect(messages.map((event) => event.data)).toEqual([
      {
        id: expect.any(String),
        source: { kind: 'user' },
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'text', text: '[@spec.md](file:///docs/spec.md)' },
          { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
        ],
      },
      {
        id: expect.any(String),
        source: { kind: 'plugin', name: 'acp' },
        meta: { uri: 'file:///src/a.ts', mimeType: 'text/x-typescript' },
        content: [
          {
            type: 'text',
            text: '<resource uri="file:///src/a.ts" mime-type="text/x-typescript">\nconst a = 1\n</resource>',
          },
        ],
      },
    ])
    // Both are in the turn, before its first step: the model saw them in its first request.
    expect(notation(session!.events)).toMatch(
      /^T\+1 U\(Compare these\.\[@spec\.md\]\(file:\/\/\/docs\/spec\.md\)\) U\(<resource/,
    )
  })

  it("reports usage after each response when the model's context window is configured", async () => {
    const child = await startAcp({
      script: [{ text: 'short answer' }],
      config: {
        providers: {
          scripted: { models: { scripted: { contextWindow: 1000, maxOutputTokens: 100 } } },
        },
      },
    })
    const sessionId = await child.ready()
    await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'hello there' }],
    })
    const usage = child.updates.filter((update) => update.update.sessionUpdate === 'usage_update')
    expect(usage.map((update) => update.update)).toEqual([
      { sessionUpdate: 'usage_update', used: expect.any(Number), size: 1000 },
    ])
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    const [session] = await checkedSessions(child)
    const assistant = session!.events.find((event) => event.type === 'assistant/message')
    const { inputTokens, outputTokens } = (
      assistant!.data as { usage: { inputTokens: number; outputTokens: number } }
    ).usage
    expect(usage[0]!.update).toMatchObject({ used: inputTokens + outputTokens })
  })
})
