/**
 * A provider's stream whose code is imported on the first request: the adapters' request,
 * response and error modules are not loaded by a run that never asks that provider (bench
 * B10, docs/decisions/0142-tool-schemas-written-out.md). Nothing happens until the first
 * `next()`, as with the stream it wraps; `return()` reaches the wrapped stream.
 */
import type { StreamPart } from './provider.js'

export async function* streamFrom<Module>(
  load: () => Promise<Module>,
  start: (module: Module) => AsyncGenerator<StreamPart, void, undefined>,
): AsyncGenerator<StreamPart, void, undefined> {
  yield* start(await load())
}
