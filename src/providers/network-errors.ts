/**
 * Recognizing a broken connection among the errors `fetch` and its body stream throw, and
 * saying in words what broke.
 */
import { messageOf } from '../core/index.js'

// undici and Node socket codes for a connection that failed, was reset or timed out, in words.
const NETWORK_CODES: ReadonlyMap<string, string> = new Map([
  ['ECONNRESET', 'the connection was reset'],
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNABORTED', 'the connection was aborted'],
  ['EPIPE', 'the connection was closed while sending'],
  ['ETIMEDOUT', 'the connection timed out'],
  ['ENOTFOUND', 'the host name was not found'],
  ['EAI_AGAIN', 'the host name could not be resolved (DNS)'],
  ['EHOSTUNREACH', 'the host is unreachable'],
  ['ENETUNREACH', 'the network is unreachable'],
  ['UND_ERR_SOCKET', 'the server closed the connection'],
  ['UND_ERR_CONNECT_TIMEOUT', 'connecting timed out'],
  ['UND_ERR_HEADERS_TIMEOUT', 'the server sent no response headers in time'],
  ['UND_ERR_BODY_TIMEOUT', 'the server stopped sending the response'],
  ['UND_ERR_CLOSED', 'the connection was closed'],
])

const MAX_CAUSE_DEPTH = 5

/**
 * Whether `error` (or an error in its `cause` chain) says the connection broke. undici reports a
 * body cut off mid-stream as `TypeError: terminated` whose cause carries the socket code.
 */
export function isNetworkError(error: unknown): boolean {
  let current: unknown = error
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (codeOf(current) !== undefined) return true
    if (current instanceof TypeError && /^(terminated|fetch failed)$/.test(current.message))
      return true
    current = current.cause
  }
  return false
}

/**
 * What broke, in words: the first socket code in the `cause` chain (`connection refused
 * (ECONNREFUSED)`), else the innermost message, without the SDK's generic wrappers
 * ("Connection error.", "fetch failed").
 */
export function describeNetworkError(error: unknown): string {
  let current: unknown = error
  let innermost = messageOf(error)
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    const code = codeOf(current)
    if (code !== undefined) return `${NETWORK_CODES.get(code)} (${code})`
    if (current.message !== '') innermost = current.message
    current = current.cause
  }
  return innermost.trim().replace(/[.\s]+$/, '')
}

function codeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && NETWORK_CODES.has(code) ? code : undefined
}
