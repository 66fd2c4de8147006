/**
 * The plumbing both SDK adapters share: connect lazily, send the request through the SDK (which
 * builds it, authenticates, and turns error statuses into its error classes), read the event
 * stream of the response under the response limits, abort the HTTP request when the caller
 * aborts or stops iterating early, and turn anything thrown into the one final error part.
 *
 * 1. Connect (load the SDK, build the client) and send; the SDK's `timeout` bounds the wait
 *    for the response headers.
 * 2. Read the body as server-sent events under a `ResponseGuard` (idle timeout, size cap).
 * 3. The adapter's reader turns events into parts; anything thrown becomes the final part.
 */
import type { Endpoint } from './base-url.js'
import { abortedPart, invalidResponsePart } from './failure.js'
import type { StreamPart } from './provider.js'
import { readServerSentEvents, type ServerSentEvent } from './sse.js'
import { ResponseGuard, type ResponseLimits, StreamLimitError } from './stream-guard.js'

/** What an adapter's reader needs besides the events. */
export type ReadContext = {
  /** The provider id, for messages. */
  readonly provider: string
  /** The caller's signal: a stream that stops after it aborted ends `aborted`. */
  readonly signal: AbortSignal
  /** Call `progress` for every event that carries something (see `ResponseGuard`). */
  readonly guard: ResponseGuard
  /** The response headers (`retry-after`, `x-should-retry` for errors sent inside the stream). */
  readonly headers: Headers
}

export type SdkStreamSteps<Connection extends { readonly sdk: unknown }> = {
  readonly id: string
  readonly signal: AbortSignal
  readonly endpoint: Endpoint
  readonly limits: ResponseLimits
  readonly connect: () => Promise<Connection>
  /** Sends the request; resolves with the 2xx response whose body streams the events. */
  send(connection: Connection, signal: AbortSignal): Promise<Response>
  read(
    events: AsyncIterable<ServerSentEvent>,
    context: ReadContext,
  ): AsyncGenerator<StreamPart, void, undefined>
  /** The error part for a throw; `sdk` is absent when loading the SDK itself failed. */
  fail(error: unknown, sdk: Connection['sdk'] | undefined): StreamPart
}

/** Streams one response; see the module comment. Never throws. */
export async function* streamThroughSdk<Connection extends { readonly sdk: unknown }>(
  steps: SdkStreamSteps<Connection>,
): AsyncGenerator<StreamPart, void, undefined> {
  const { id, signal } = steps
  if (signal.aborted) {
    yield abortedPart(id)
    return
  }
  const controller = new AbortController()
  const onAbort = () => controller.abort(signal.reason)
  signal.addEventListener('abort', onAbort, { once: true })
  const guard = new ResponseGuard({ limits: steps.limits, provider: id, endpoint: steps.endpoint })
  let sdk: Connection['sdk'] | undefined
  try {
    const connection = await steps.connect()
    sdk = connection.sdk
    const response = await steps.send(connection, controller.signal)
    if (!response.body) {
      yield invalidResponsePart(id, 'the response has no body')
      return
    }
    const events = readServerSentEvents(response.body, guard, id)
    yield* steps.read(events, { provider: id, signal, guard, headers: response.headers })
  } catch (error) {
    if (signal.aborted) yield abortedPart(id)
    else if (error instanceof StreamLimitError) yield error.part
    else yield steps.fail(error, sdk)
  } finally {
    guard.end()
    signal.removeEventListener('abort', onAbort)
    controller.abort()
  }
}
