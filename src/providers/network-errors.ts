/**
 * Recognizing a broken connection among the errors `fetch` and its body stream throw.
 */

// undici and Node socket codes for a connection that failed, was reset or timed out.
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
])

/**
 * Whether `error` (or an error in its `cause` chain) says the connection broke. undici reports a
 * body cut off mid-stream as `TypeError: terminated` whose cause carries the socket code.
 */
export function isNetworkError(error: unknown): boolean {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true
    if (current instanceof TypeError && /^(terminated|fetch failed)$/.test(current.message))
      return true
    current = current.cause
  }
  return false
}
