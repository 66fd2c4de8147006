/**
 * Some OpenAI-compatible servers (vLLM, among others) answer errors with the error object at the
 * top level (`{"object":"error","message":…}`) instead of under `error`. The SDK reads only
 * `error`, and would report "status code (no body)". This `fetch` wrapper moves such a body
 * under `error` so the provider's message (say, "maximum context length is …") reaches the user.
 */

/** The `fetch` signature the SDK accepts. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** Wraps `fetchFunction` so that error bodies always carry their error under `error`. */
export function withNormalizedErrorBodies(fetchFunction: FetchFunction): FetchFunction {
  return async (input, init) => {
    const response = await fetchFunction(input, init)
    if (response.ok) return response
    const text = await response.text()
    const headers = new Headers(response.headers)
    // The body below is already decoded and may have a new length.
    headers.delete('content-length')
    headers.delete('content-encoding')
    const responseInit = { status: response.status, statusText: response.statusText, headers }
    return new Response(normalize(text), responseInit)
  }
}

function normalize(text: string): string {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    // Not JSON (an HTML page from a proxy, say): the SDK reports the text as it is.
    return text
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || 'error' in body)
    return text
  return 'message' in body ? JSON.stringify({ error: body }) : text
}
