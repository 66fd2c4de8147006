/**
 * A whole exchange, both directions, normalized (paths, ids) and compared with a fixture, so
 * any change of what rudder puts on the wire shows as a diff in review. Also: stdout carries
 * nothing but frames, even when a tool's command prints; and Zed's terminal convention.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { notation } from '../../support/agent-harness.js'
import { type AcpProcess, checkedSessions, startAcp } from './acp-process.js'

function normalized(child: AcpProcess, sessionId: string): string {
  const replace = (text: string) =>
    text
      .replaceAll(child.workspace, '<workspace>')
      .replaceAll(child.home, '<home>')
      .replaceAll(sessionId, '<session>')
      .replace(/msg_[0-9a-f-]{36}/g, 'msg_<id>')
      .replace(/"version":"[^"]+"/, '"version":"<version>"')
  return `${child.exchange
    .map(({ direction, line }) => JSON.stringify({ direction, ...JSON.parse(replace(line)) }))
    .join('\n')}\n`
}

describe('rudder acp: the wire', () => {
  it('keeps the transcript of a whole exchange (fixture), stdout carrying only frames', async () => {
    const child = await startAcp({
      script: [
        {
          thinking: 'Read the file first.',
          text: 'Let me look.',
          toolCalls: [{ id: 'read-1', name: 'read', args: { path: 'hello.txt' } }],
        },
        {
          toolCalls: [
            {
              id: 'edit-1',
              name: 'edit',
              args: { path: 'hello.txt', oldText: 'helo', newText: 'hello' },
            },
          ],
        },
        {
          toolCalls: [
            {
              id: 'bash-1',
              name: 'bash',
              args: { command: 'echo printed by bash' },
            },
          ],
        },
        { text: 'Fixed the typo.' },
      ],
    })
    writeFileSync(join(child.workspace, 'hello.txt'), 'helo world\n')
    const sessionId = await child.ready()
    await child.agent.request('session/set_mode', { sessionId, modeId: 'auto-edit' })
    const response = await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Fix the typo in hello.txt' }],
    })
    expect(response).toEqual({ stopReason: 'end_turn' })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    expect(readFileSync(join(child.workspace, 'hello.txt'), 'utf8')).toBe('hello world\n')
    // Only the bash call asked: auto-edit lets the edit through.
    expect(child.permissions.map((request) => request.toolCall.toolCallId)).toEqual(['bash-1'])
    // What the command printed reached the model, and never rudder's stdout.
    expect(child.fromAgent.every((line) => line.startsWith('{"jsonrpc":"2.0"'))).toBe(true)
    const [session] = await checkedSessions(child)
    expect(notation(session!.events)).toBe(
      'T+1 U(Fix the typo in hello.txt) S+1 H A TC(read-1) TR(read-1) S-1 S+2 A TC(edit-1) TR(edit-1) S-2 S+3 A TC(bash-1) TR(bash-1) S-3 S+4 A S-4 T-1(completed)',
    )
    await expect(normalized(child, sessionId)).toMatchFileSnapshot(
      '../../fixtures/acp/transcript.jsonl',
    )
  })

  it("streams bash output with Zed's terminal convention when the client advertises it", async () => {
    const child = await startAcp({
      script: [
        { toolCalls: [{ id: 't1', name: 'bash', args: { command: 'echo from the terminal' } }] },
        { text: 'ok' },
      ],
      clientCapabilities: { _meta: { terminal_output: true } },
    })
    const sessionId = await child.ready()
    await child.agent.request('session/set_mode', { sessionId, modeId: 'yolo' })
    await child.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'run' }],
    })
    const updates = child.updates.map((notification) => notification.update)
    expect(updates.find((update) => update.sessionUpdate === 'tool_call')).toMatchObject({
      toolCallId: 't1',
      kind: 'execute',
      content: [{ type: 'terminal', terminalId: 't1' }],
      _meta: { terminal_info: { terminal_id: 't1', cwd: child.workspace } },
    })
    const metas = updates
      .filter((update) => update.sessionUpdate === 'tool_call_update')
      .map((update) => update._meta)
      .filter((meta) => meta != null)
    const streamed = metas
      .map((meta) => (meta as { terminal_output?: { data: string } }).terminal_output?.data ?? '')
      .join('')
    expect(streamed).toBe('from the terminal\n')
    expect(metas.at(-1)).toEqual({
      terminal_exit: { terminal_id: 't1', exit_code: 0, signal: null },
    })
    expect(await child.exit()).toEqual({ code: 0, signal: null })
    await checkedSessions(child)
  })
})
