import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { prefixView } from '../../../src/core/prefix-view.js'
import type { Message, ModelRequest, StreamPart } from '../../../src/index.js'
import { scriptedProvider, scriptedProviderFromFile } from '../../../src/testing.js'

const request = (text: string): ModelRequest => ({
  model: 'm',
  system: '',
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  tools: [],
  params: {},
})

async function collect(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = []
  for await (const part of stream) parts.push(part)
  return parts
}

describe('scriptedProvider', () => {
  it('streams text in chunks, then tool calls, usage and the stop reason; records the request', async () => {
    const provider = scriptedProvider(
      [{ text: 'hello world', toolCalls: [{ name: 'read', args: { path: 'a' } }] }],
      { chunkSize: 4 },
    )
    const parts = await collect(provider.stream(request('hi'), new AbortController().signal))
    expect(
      parts.filter((p) => p.type === 'text-delta').map((p) => (p as { text: string }).text),
    ).toEqual(['hell', 'o wo', 'rld'])
    expect(parts.find((p) => p.type === 'tool-call')).toEqual({
      type: 'tool-call',
      id: 'call_1_1',
      name: 'read',
      args: { path: 'a' },
    })
    expect(parts.at(-1)).toEqual({ type: 'end', stopReason: 'tool-calls' })
    expect(provider.requests).toEqual([request('hi')])
  })

  it('answers a request beyond the script with a non-retryable error naming it', async () => {
    const provider = scriptedProvider([])
    const parts = await collect(provider.stream(request('x'), new AbortController().signal))
    expect(parts).toEqual([
      expect.objectContaining({ type: 'error', code: 'script-exhausted', retryable: false }),
    ])
    expect((parts[0] as { message: string }).message).toContain('request #1')
  })

  it('holds after streaming until the signal aborts, then ends without a final part', async () => {
    const provider = scriptedProvider([{ text: 'partial', hold: new Promise(() => {}) }])
    const controller = new AbortController()
    const parts: StreamPart[] = []
    for await (const part of provider.stream(request('x'), controller.signal)) {
      parts.push(part)
      if (part.type === 'text-delta' && parts.length === 1) controller.abort()
    }
    expect(parts.every((p) => p.type === 'text-delta')).toBe(true)
  })

  it('answers with a function of the request', async () => {
    const provider = scriptedProvider([
      (r) => ({ text: `you said ${(r.messages[0]!.content[0] as { text: string }).text}` }),
    ])
    const parts = await collect(provider.stream(request('ping'), new AbortController().signal))
    expect(
      parts
        .filter((p) => p.type === 'text-delta')
        .map((p) => (p as { text: string }).text)
        .join(''),
    ).toBe('you said ping')
  })
})

describe('scriptedProviderFromFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rudder-script-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const file = (name: string, content: string) => {
    const path = join(dir, name)
    writeFileSync(path, content)
    return path
  }

  it('loads an array of steps or { model, steps }', async () => {
    const provider = scriptedProviderFromFile(
      file('a.json', JSON.stringify({ model: 'demo', steps: [{ text: 'hi' }] })),
    )
    expect(provider.model).toBe('demo')
    const parts = await collect(provider.stream(request('x'), new AbortController().signal))
    expect(parts.at(-1)).toEqual({ type: 'end', stopReason: 'stop' })
    expect(scriptedProviderFromFile(file('b.json', '[{"text":"x"}]')).model).toBe('scripted')
  })

  it('names the file and the bad field', () => {
    const path = file(
      'bad.json',
      JSON.stringify([{ text: 'ok' }, { toolCalls: [{ name: 'read' }] }]),
    )
    expect(() => scriptedProviderFromFile(path)).toThrowError(
      expect.objectContaining({ code: 'CONFIG' }),
    )
    expect(() => scriptedProviderFromFile(path)).toThrowError(
      `${path} is invalid at 1.toolCalls.0.args`,
    )
  })

  it('holds a step after its text until the file named by holdUntilFile appears (relative to the script)', async () => {
    const provider = scriptedProviderFromFile(
      file('held.json', JSON.stringify([{ text: 'waiting', holdUntilFile: 'release-1' }])),
    )
    const parts: StreamPart[] = []
    const reading = (async () => {
      for await (const part of provider.stream(request('x'), new AbortController().signal))
        parts.push(part)
    })()
    // The text streams first; the end waits for the file.
    while (parts.length < 1) await new Promise((resolve) => setImmediate(resolve))
    expect(parts.map((part) => part.type)).not.toContain('end')
    writeFileSync(join(dir, 'release-1'), '')
    await reading
    expect(parts.at(-1)).toEqual({ type: 'end', stopReason: 'stop' })
  })

  it('ends a held step when the request is aborted', async () => {
    const provider = scriptedProviderFromFile(
      file('held-abort.json', JSON.stringify([{ text: 'x', holdUntilFile: 'never' }])),
    )
    const controller = new AbortController()
    const parts: StreamPart[] = []
    const reading = (async () => {
      for await (const part of provider.stream(request('x'), controller.signal)) {
        parts.push(part)
        controller.abort()
      }
    })()
    await reading
    expect(parts.map((part) => part.type)).toEqual(['text-delta'])
  })

  it('explains unreadable and non-JSON files', () => {
    expect(() => scriptedProviderFromFile(join(dir, 'missing.json'))).toThrowError(
      /cannot read the script/,
    )
    expect(() => scriptedProviderFromFile(file('text.json', 'not json'))).toThrowError(
      /not valid JSON/,
    )
  })
})

describe('scripted usage estimate', () => {
  const said = (text: string) => ({
    role: 'user' as const,
    content: [{ type: 'text' as const, text }],
  })
  const ask = (provider: ReturnType<typeof scriptedProvider>, messages: ModelRequest['messages']) =>
    collect(
      provider.stream({ ...request(''), system: 'sys!', messages }, new AbortController().signal),
    )
  const inputTokens = (parts: StreamPart[]) =>
    parts.flatMap((part) => (part.type === 'usage' ? [part.usage.inputTokens] : []))[0]

  it('counts what each request holds, whether it continues the last one, is compacted or is new', async () => {
    const provider = scriptedProvider([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }])
    const first = [said('12345678')]
    const grown = [...first, said('abcd')]
    // Same length as `grown` and the same first message, but a different last one.
    const changed = [first[0]!, said('abcdefghijkl')]
    const compacted = [said('S'), said('abcd')]
    expect(inputTokens(await ask(provider, first))).toBe(Math.ceil((4 + 8) / 4))
    expect(inputTokens(await ask(provider, grown))).toBe(Math.ceil((4 + 12) / 4))
    expect(inputTokens(await ask(provider, changed))).toBe(Math.ceil((4 + 20) / 4))
    expect(inputTokens(await ask(provider, compacted))).toBe(Math.ceil((4 + 5) / 4))
  })

  it('counts views of messages() as it counts arrays: grown, shorter, compacted, then an array', async () => {
    const provider = scriptedProvider(Array.from({ length: 7 }, () => ({ text: 'x' })))
    const backing: Message[] = [said('12345678')]
    const ask1 = async (messages: ModelRequest['messages']) =>
      inputTokens(await ask(provider, messages))
    expect(await ask1(prefixView(backing))).toBe(Math.ceil((4 + 8) / 4))
    backing.push(said('abcd'), said('efgh'))
    expect(await ask1(prefixView(backing))).toBe(Math.ceil((4 + 16) / 4))
    // A shorter view of the same messages is counted afresh.
    expect(await ask1(prefixView(backing, 2))).toBe(Math.ceil((4 + 12) / 4))
    expect(await ask1(prefixView(backing))).toBe(Math.ceil((4 + 16) / 4))
    // A compaction starts a new backing array: counted afresh, though as long.
    const compacted: Message[] = [said('S'), said('abcd'), said('efghijklmnop')]
    expect(await ask1(prefixView(compacted))).toBe(Math.ceil((4 + 17) / 4))
    // A plain copy continues from the view's first and last message; a new array does not.
    expect(await ask1([...compacted, said('qr')])).toBe(Math.ceil((4 + 19) / 4))
    expect(await ask1([said('qr')])).toBe(Math.ceil((4 + 2) / 4))
  })
})
