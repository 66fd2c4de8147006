/**
 * The pure mappings of the ACP front end: prompt content, tool calls, plans, stop reasons,
 * permission answers and errors.
 */
import { RequestError } from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import { promptResponse } from '../../../src/frontends/acp/acp-session.js'
import { toRequestError } from '../../../src/frontends/acp/errors.js'
import { answerOf } from '../../../src/frontends/acp/permissions.js'
import { convertContext, convertPrompt } from '../../../src/frontends/acp/prompt-content.js'
import { describeToolCall, planOf } from '../../../src/frontends/acp/tool-calls.js'
import { createUpdateMapper } from '../../../src/frontends/acp/update-mapper.js'
import { ConfigError, RudderError, type SessionEvent } from '../../../src/index.js'

describe('prompt content', () => {
  it('names attachments in the message when the prompt has nothing else', () => {
    const converted = convertPrompt([
      { type: 'resource', resource: { uri: 'file:///w/a.md', text: '# A\n' } },
    ])
    expect(converted.content).toEqual([{ type: 'text', text: '[@a.md](file:///w/a.md)' }])
    expect(converted.contexts).toEqual([
      {
        content: [{ type: 'text', text: '<resource uri="file:///w/a.md">\n# A\n</resource>' }],
        source: { kind: 'plugin', name: 'acp' },
        meta: { uri: 'file:///w/a.md' },
      },
    ])
  })

  it('takes an embedded image resource and refuses other binary data with the fix', () => {
    const image = convertPrompt([
      { type: 'resource', resource: { uri: 'file:///p.png', mimeType: 'image/png', blob: 'AAAA' } },
    ])
    expect(image.contexts[0]!.content).toEqual([
      { type: 'text', text: '<resource uri="file:///p.png" mime-type="image/png">' },
      { type: 'image', mediaType: 'image/png', data: 'AAAA' },
      { type: 'text', text: '</resource>' },
    ])
    expect(() =>
      convertPrompt([
        { type: 'text', text: 'x' },
        {
          type: 'resource',
          resource: { uri: 'file:///a.zip', mimeType: 'application/zip', blob: 'AA' },
        },
      ]),
    ).toThrow(/prompt\[1\] embeds binary data \(application\/zip\).*resource_link/)
  })

  it('puts every block of an injected context into one message, in order', () => {
    expect(
      convertContext([
        { type: 'text', text: 'before' },
        { type: 'resource', resource: { uri: 'u', text: 'body' } },
        { type: 'text', text: 'after' },
      ]),
    ).toEqual([
      { type: 'text', text: 'before' },
      { type: 'text', text: '<resource uri="u">\nbody\n</resource>' },
      { type: 'text', text: 'after' },
    ])
  })
})

describe('tool calls', () => {
  it.each([
    [
      'read',
      { path: 'a.ts', offset: 10 },
      { kind: 'read', title: 'Read a.ts from line 10', locations: [{ path: '/w/a.ts', line: 10 }] },
    ],
    [
      'write',
      { path: '/abs/b.ts', content: 'x' },
      { kind: 'edit', title: 'Write /abs/b.ts', locations: [{ path: '/abs/b.ts' }] },
    ],
    [
      'grep',
      { pattern: 'TODO', path: 'src', glob: '*.ts' },
      { kind: 'search', title: 'Search TODO in src (*.ts)', locations: [{ path: '/w/src' }] },
    ],
    ['glob', { pattern: '**/*.md' }, { kind: 'search', title: 'Find **/*.md', locations: [] }],
    ['ls', {}, { kind: 'read', title: 'List the workspace', locations: [{ path: '/w' }] }],
    [
      'mcp__github__search',
      { q: 'x' },
      { kind: 'other', title: 'mcp__github__search', locations: [] },
    ],
  ])('%s is shown as its kind, title and locations', (name, args, view) => {
    expect(describeToolCall(name, args, '/w')).toMatchObject(view)
  })

  it('keeps a bash title to one short line', () => {
    const title = describeToolCall(
      'bash',
      { command: `${'x'.repeat(200)}\nsecond line` },
      '/w',
    ).title
    expect(title.length).toBeLessThanOrEqual(120)
    expect(title).not.toContain('\n')
    expect(describeToolCall('bash', { command: 'make\ntest' }, '/w').title).toBe('make …')
  })

  it('reads a plan from a result meta, and nothing from a malformed one', () => {
    expect(
      planOf({
        plan: [
          { content: 'write tests', status: 'in_progress' },
          { content: 'ship', status: 'pending', priority: 'high' },
        ],
      }),
    ).toEqual([
      { content: 'write tests', status: 'in_progress', priority: 'medium' },
      { content: 'ship', status: 'pending', priority: 'high' },
    ])
    expect(planOf({ plan: [{ content: 'x', status: 'done' }] })).toBeUndefined()
    expect(planOf({ exitCode: 0 })).toBeUndefined()
  })

  it('sends a plan update after a result that carries one', () => {
    const mapper = createUpdateMapper({
      mode: 'replay',
      cwd: '/w',
      terminalOutput: false,
      notices: false,
      compaction: false,
      contextWindow: () => undefined,
    })
    const event = {
      seq: 3,
      time: 0,
      type: 'tool/result',
      data: {
        callId: 'c1',
        name: 'todo',
        content: [{ type: 'text', text: 'noted' }],
        isError: false,
        meta: { plan: [{ content: 'step one', status: 'completed' }] },
      },
    } as SessionEvent
    expect(mapper.event(event).map((update) => update.sessionUpdate)).toEqual([
      'tool_call_update',
      'plan',
    ])
  })
})

describe('answers', () => {
  it.each([
    ['completed', { stopReason: 'end_turn' }],
    ['max-tokens', { stopReason: 'max_tokens' }],
    ['step-limit', { stopReason: 'max_turn_requests' }],
    ['stop-limit', { stopReason: 'max_turn_requests' }],
    ['canceled', { stopReason: 'cancelled' }],
  ] as const)('a turn that ended %s answers %j', (status, response) => {
    expect(
      promptResponse({ kind: 'ended', result: { status, turn: 1 }, isCanceled: false }),
    ).toEqual(response)
  })

  it('a blocked prompt is a refusal with the reason; a cancel asked for wins over the end', () => {
    expect(
      promptResponse({
        kind: 'ended',
        result: { status: 'blocked', reason: 'not today' },
        isCanceled: false,
      }),
    ).toEqual({ stopReason: 'refusal', _meta: { rudder: { reason: 'not today' } } })
    expect(
      promptResponse({ kind: 'ended', result: { status: 'completed', turn: 2 }, isCanceled: true }),
    ).toEqual({ stopReason: 'cancelled' })
  })

  it('maps permission choices onto the asker, refusing an unknown one', () => {
    const pick = (optionId: string) => answerOf({ outcome: { outcome: 'selected', optionId } })
    expect(pick('allow_once')).toEqual({ kind: 'allow' })
    expect(pick('allow_always')).toEqual({ kind: 'allow', always: true })
    expect(pick('reject_once')).toEqual({ kind: 'deny' })
    expect(pick('reject_always')).toEqual({ kind: 'deny', always: true })
    expect(() => pick('later')).toThrow(/not one of the options offered/)
  })

  it('maps errors to JSON-RPC codes with their messages', () => {
    expect(toRequestError(new RudderError('SESSION_NOT_FOUND', 'no such session x'))).toMatchObject(
      {
        code: -32002,
        message: 'no such session x',
      },
    )
    expect(toRequestError(new RudderError('INVALID_INPUT', 'bad'))).toMatchObject({ code: -32602 })
    expect(toRequestError(new ConfigError('set DEEPSEEK_API_KEY'))).toMatchObject({
      code: -32603,
      message: 'set DEEPSEEK_API_KEY',
      data: { code: 'CONFIG' },
    })
    const own = new RequestError(-32602, 'mine')
    expect(toRequestError(own)).toBe(own)
  })
})
