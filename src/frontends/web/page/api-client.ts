/**
 * The page's calls to the host's JSON API (docs/web-api.md). The token travels in the cookie
 * the token URL set; a failure throws `ApiFailure` with the host's message for a person.
 */
import type { ApiError } from '../wire.js'

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  const value = text === '' ? undefined : (JSON.parse(text) as unknown)
  if (!response.ok) {
    const error = (value as ApiError | undefined)?.error
    throw new ApiFailure(
      response.status,
      error?.code ?? 'HTTP',
      error?.message ?? `the host answered ${response.status}`,
    )
  }
  return value as T
}

/** Runs `action`, reporting a failure to `onError` instead of throwing. */
export async function attempt<T>(
  action: () => Promise<T>,
  onError: (message: string) => void,
): Promise<T | undefined> {
  try {
    return await action()
  } catch (error) {
    onError(error instanceof Error ? error.message : String(error))
    return undefined
  }
}
