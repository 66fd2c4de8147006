/**
 * One Chat Completions request as a stream of parts, through the SDK: loaded with a provider's
 * first request (bench B10), so a run that never asks this provider does not load it.
 */
import type OpenAI from 'openai'
import type { Endpoint } from '../base-url.js'
import type { ModelRequest, StreamPart } from '../provider.js'
import { streamThroughSdk } from '../sdk-stream.js'
import type { StreamLimitOptions } from '../stream-guard.js'
import { chatFailurePart, type OpenAISdk } from './errors.js'
import { type ChatDialect, toChatRequest } from './request.js'
import { readChatStream } from './response.js'

export type Connection = { readonly sdk: OpenAISdk; readonly client: OpenAI }

export type ChatSetup = {
  readonly connect: () => Promise<Connection>
  readonly id: string
  readonly dialect: ChatDialect
  readonly endpoint: Endpoint
  readonly limits: Required<StreamLimitOptions>
}

export function streamChat(
  setup: ChatSetup,
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
      client.chat.completions
        .create(toChatRequest(request, setup.dialect), { signal: abort })
        .asResponse(),
    read: readChatStream,
    fail: (error, sdk) =>
      chatFailurePart(error, { provider: id, signal, endpoint, timeoutMs: limits.timeoutMs }, sdk),
  })
}
