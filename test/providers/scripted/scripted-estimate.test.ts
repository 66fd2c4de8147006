/**
 * The scripted provider's token estimate counts a `messages()` view incrementally by holding on
 * to the view's backing array between requests (decision 0089). That array is the session's
 * transcript: the estimate must hold it weakly, or a session that released its history
 * (docs/spec.md §9.4) stays as large as before for as long as the provider lives (bench B9).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { expect, it } from 'vitest'
import type { Message } from '../../../src/core/index.js'
import { prefixView } from '../../../src/core/prefix-view.js'
import type { ModelRequest, StreamPart } from '../../../src/index.js'
import { scriptedProvider } from '../../../src/testing.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

const requestOver = (messages: readonly Message[]): ModelRequest => ({
  model: 'm',
  system: 'sys',
  messages,
  tools: [],
  params: {},
})

async function inputTokens(parts: AsyncIterable<StreamPart>): Promise<number | undefined> {
  let tokens: number | undefined
  for await (const part of parts) if (part.type === 'usage') tokens = part.usage.inputTokens
  return tokens
}

it('counts a growing view on from where it stopped, and holds its transcript weakly', async () => {
  const provider = scriptedProvider([{ text: 'a' }, { text: 'b' }])
  const signal = new AbortController().signal
  // In a function of its own, so that nothing on this frame keeps the transcript.
  const transcript = await (async () => {
    const items: Message[] = [user('x'.repeat(400))]
    const first = await inputTokens(provider.stream(requestOver(prefixView(items)), signal))
    items.push(user('y'.repeat(800)))
    const second = await inputTokens(provider.stream(requestOver(prefixView(items)), signal))
    // ceil((3 + 400) / 4) and ceil((3 + 1200) / 4): the second request counted both messages.
    expect([first, second]).toEqual([101, 301])
    return new WeakRef(items)
  })()
  // `requests` keeps every request for tests to read; a provider talking to a model keeps none.
  ;(provider.requests as unknown[]).length = 0
  // A WeakRef's target is kept until the job that read it ends.
  await new Promise((resolve) => setImmediate(resolve))
  gc()
  expect(transcript.deref()).toBeUndefined()
  expect(provider.requests).toHaveLength(0)
})
