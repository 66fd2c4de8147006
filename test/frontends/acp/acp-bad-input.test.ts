/**
 * Bad input gets a clear JSON-RPC error and the agent keeps serving. These are the only tests
 * that write raw lines to the child's stdin (beside the SDK's client on the same pipe).
 */
import { describe, expect, it, vi } from 'vitest'
import { checkedSessions, startAcp } from './acp-process.js'

describe('rudder acp: bad input', () => {
  it('answers each mistake with a clear error and goes on serving', async () => {
    // The SDK's client reports the answers to requests it did not send on console.error.
    const clientErrors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const child = await startAcp({ script: [{ text: 'still here' }] })
    const sessionId = await child.ready()
    const raw = (id: string, method: string, params: unknown) =>
      JSON.stringify({ jsonrpc: '2.0', id, method, params })

    child.writeRaw('{"jsonrpc":"2.0","id":"raw-0","method":')
    child.writeRaw(raw('raw-1', 'session/frobnicate', {}))
    child.writeRaw(raw('raw-2', 'session/new', { cwd: 'my/project', mcpServers: [] }))
    child.writeRaw(
      raw('raw-3', 'session/prompt', {
        sessionId: 'no-such-session',
        prompt: [{ type: 'text', text: 'x' }],
      }),
    )
    child.writeRaw(
      raw('raw-4', 'session/prompt', {
        sessionId,
        prompt: [{ type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' }],
      }),
    )
    child.writeRaw(raw('raw-5', 'session/new', { cwd: '/no/such/dir', mcpServers: [] }))

    expect((await child.rawResponse('raw-1')).error).toMatchObject({ code: -32601 })
    expect((await child.rawResponse('raw-2')).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('cwd must be an absolute path, got "my/project"'),
    })
    expect((await child.rawResponse('raw-3')).error).toMatchObject({
      code: -32002,
      message: expect.stringContaining('"no-such-session" is not open on this connection'),
    })
    expect((await child.rawResponse('raw-4')).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('prompt[0] is an audio block'),
    })
    expect((await child.rawResponse('raw-5')).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('is not a directory that exists'),
    })
    // The malformed line was answered in order, before the requests that followed it.
    const parseError = child.fromAgent.findIndex((line) => line.includes('-32700'))
    const first = child.fromAgent.findIndex((line) => line.includes('"raw-1"'))
    expect(parseError).toBeGreaterThanOrEqual(0)
    expect(JSON.parse(child.fromAgent[parseError]!)).toMatchObject({
      id: null,
      error: { code: -32700 },
    })
    expect(parseError).toBeLessThan(first)

    // Version negotiation: rudder answers the one version it speaks, whatever was asked.
    for (const protocolVersion of [0, 99])
      expect(await child.agent.request('initialize', { protocolVersion })).toMatchObject({
        protocolVersion: 1,
      })
    const response = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'are you there?' }],
    })
    expect(response.stopReason).toBe('end_turn')
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    expect(clientErrors.mock.calls.map((call) => call[1])).toEqual(
      expect.arrayContaining([null, 'raw-1', 'raw-2', 'raw-3', 'raw-4', 'raw-5']),
    )
    clientErrors.mockRestore()
    const sessions = await checkedSessions(child)
    expect(sessions).toHaveLength(1)
  })
})
