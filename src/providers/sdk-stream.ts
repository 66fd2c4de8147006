/**
 * The plumbing both SDK adapters share: connect lazily, own an AbortController that aborts the
 * HTTP request when the caller aborts or stops iterating early, and turn anything thrown into
 * the one final error part.
 */
import { abortedPart } from './failure.js'
import type { StreamPart } from './provider.js'

export type SdkStreamSteps<Connection extends { readonly sdk: unknown }, Chunks> = {
  readonly id: string
  readonly signal: AbortSignal
  readonly connect: () => Promise<Connection>
  /** Sends the request; the response streams as `Chunks`. */
  send(connection: Connection, signal: AbortSignal): Promise<Chunks>
  read(chunks: Chunks): AsyncGenerator<StreamPart, void, undefined>
  /** The error part for a throw; `sdk` is absent when loading the SDK itself failed. */
  fail(error: unknown, sdk: Connection['sdk'] | undefined): StreamPart
}

export async function* streamThroughSdk<Connection extends { readonly sdk: unknown }, Chunks>(
  steps: SdkStreamSteps<Connection, Chunks>,
): AsyncGenerator<StreamPart, void, undefined> {
  const { id, signal } = steps
  if (signal.aborted) {
    yield abortedPart(id)
    return
  }
  const controller = new AbortController()
  const onAbort = () => controller.abort(signal.reason)
  signal.addEventListener('abort', onAbort, { once: true })
  let sdk: Connection['sdk'] | undefined
  try {
    const connection = await steps.connect()
    sdk = connection.sdk
    yield* steps.read(await steps.send(connection, controller.signal))
  } catch (error) {
    yield steps.fail(error, sdk)
  } finally {
    signal.removeEventListener('abort', onAbort)
    controller.abort()
  }
}
