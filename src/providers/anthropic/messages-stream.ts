/**
 * One Messages API request as a stream of parts, through the SDK: loaded with a provider's
 * first request (bench B10), so a run that never asks this provider does not load it.
 */
import type Anthropic from '@anthropic-ai/sdk'
import type { Endpoint } from '../base-url.js'
import type { ModelRequest, StreamPart } from '../provider.js'
import { streamThroughSdk } from '../sdk-stream.js'
import type { StreamLimitOptions } from '../stream-guard.js'
import { type AnthropicSdk, messagesFailurePart } from './errors.js'
import { toMessagesRequest } from './request.js'
import { readMessageStream } from './response.js'

export type Connection = { readonly sdk: AnthropicSdk; readonly client: Anthropic }

export type MessagesSetup = {
  readonly connect: () => Promise<Connection>
  readonly id: string
  readonly endpoint: Endpoint
  readonly limits: Required<StreamLimitOptions>
}

export function streamMessages(
  setup: MessagesSetup,
  maxTokens: number,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamPart, void, undefined> {
  const { id, endpoint, limits } = setup
  return streamThroughSdk({
    id,
    signal,
    endpoint,
    limits,
    connect: setup.connect,
    // The raw response: rudder reads the event stream itself (see sse.ts).
    send: ({ client }, abort) =>
      client.messages.create(toMessagesRequest(request, maxTokens), { signal: abort }).asResponse(),
    read: readMessageStream,
    fail: (error, sdk) =>
      messagesFailurePart(
        error,
        { provider: id, signal, endpoint, timeoutMs: limits.timeoutMs },
        sdk,
      ),
  })
}
