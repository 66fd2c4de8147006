/**
 * The order messages arrived in. The SDK starts a handler per message without waiting for the
 * previous one, and the number of awaits before a handler runs depends on its registration, so
 * a `session/cancel` can run before a `session/prompt` that arrived first. This tap numbers
 * each message as it comes off the wire, before any handler, so a session can act in arrival
 * order whatever order its handlers run in (docs/decisions/0090-acp-ordering.md).
 */
import type { AnyMessage, JsonRpcId, Stream } from '@agentclientprotocol/sdk/unstable'

/** Methods whose relative order within a session matters (they queue or steer turns). */
const ORDERED_METHODS: ReadonlySet<string> = new Set([
  'session/prompt',
  '_session/steering',
  '_rudder/inject',
])

export interface Arrivals {
  /** The stream with its incoming side numbered. */
  readonly stream: Stream
  /**
   * The arrival number of the request with this id (one of the ordered methods), consumed: a
   * second call for the same id gets a fresh number.
   */
  take(id: JsonRpcId | undefined): number
  /** The arrival number of the latest `session/cancel` for the session; -1 if none came. */
  cancelMark(sessionId: string): number
}

export function createArrivals(stream: Stream): Arrivals {
  let counter = 0
  const requests = new Map<string, number>()
  const cancels = new Map<string, number>()

  const record = (message: AnyMessage) => {
    const number = ++counter
    if (!('method' in message)) return
    if ('id' in message && ORDERED_METHODS.has(message.method)) {
      requests.set(idKey(message.id), number)
      return
    }
    if (message.method === 'session/cancel' && !('id' in message)) {
      const sessionId = (message.params as { sessionId?: unknown } | undefined)?.sessionId
      if (typeof sessionId === 'string') cancels.set(sessionId, number)
    }
  }

  const numbered = stream.readable.pipeThrough(
    new TransformStream<AnyMessage, AnyMessage>({
      transform(message, controller) {
        record(message)
        controller.enqueue(message)
      },
    }),
  )

  return {
    stream: { readable: numbered, writable: stream.writable },
    take(id) {
      if (id === undefined) return ++counter
      const key = idKey(id)
      const number = requests.get(key)
      requests.delete(key)
      return number ?? ++counter
    },
    cancelMark(sessionId) {
      return cancels.get(sessionId) ?? -1
    },
  }
}

function idKey(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`
}
