/**
 * Helpers for reading a provider's stream in tests.
 */
import type { ModelRequest, Provider, StreamPart } from '../../../src/providers/provider.js'

/** Every part of one response, in order. */
export async function collect(
  provider: Provider,
  request: ModelRequest,
  signal: AbortSignal = new AbortController().signal,
): Promise<StreamPart[]> {
  const parts: StreamPart[] = []
  for await (const part of provider.stream(request, signal)) parts.push(part)
  return parts
}

/** A request with defaults for what a test does not care about. */
export function requestOf(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'test-model',
    system: '',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    tools: [],
    params: {},
    ...overrides,
  }
}

/** The last part, which must be the only `end` or `error` part. */
export function terminalOf(parts: readonly StreamPart[]): StreamPart | undefined {
  const terminals = parts.filter((part) => part.type === 'end' || part.type === 'error')
  if (terminals.length !== 1 || parts.at(-1) !== terminals[0])
    throw new Error(`expected exactly one end/error part, last; got ${JSON.stringify(parts)}`)
  return terminals[0]
}
