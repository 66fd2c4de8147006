/**
 * Who may talk to the web host (docs/decisions/0101-web-host-security.md). Every HTTP request
 * and WebSocket upgrade passes `checkRequest`:
 *
 * 1. `Host` must name this server: an IP literal, `localhost`, or a name given with `--host`
 *    or `allowedHosts`, with the port it listens on. A DNS-rebinding page reaches the server
 *    under its own domain name, so it is refused before anything else.
 * 2. `Origin`, when present, must be this server (`http://<Host>`), and `Sec-Fetch-Site` must
 *    not say `cross-site`: no other site can drive a session through the person's browser.
 * 3. The token: `Authorization: Bearer <token>`, or the cookie that opening the token URL set.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'

/** Reads one request header, case-insensitively (`undefined` when absent). */
export type HeaderReader = (name: string) => string | undefined

export type Refusal = {
  readonly status: 401 | 403
  readonly code: 'BAD_HOST' | 'BAD_ORIGIN' | 'UNAUTHORIZED'
  readonly message: string
}

export type GuardOptions = {
  readonly token: string
  /** The port the server listens on (the `Host` header must carry it). */
  readonly port: number
  /** Host names accepted besides IP literals and `localhost` (e.g. the `--host` value). */
  readonly allowedHosts?: readonly string[]
}

export interface Guard {
  /** The cookie holding the token; named by port, since cookies do not tell ports apart. */
  readonly cookieName: string
  /** `undefined` when the request may proceed; otherwise why not. */
  checkRequest(header: HeaderReader): Refusal | undefined
  /** Whether `candidate` is the token (constant time). */
  isToken(candidate: string | undefined): boolean
  /** The `Set-Cookie` value that lets a browser in after it opened the token URL. */
  cookie(): string
}

/** A fresh random token (32 bytes, base64url), as printed in the URL. */
export function freshToken(): string {
  return randomBytes(32).toString('base64url')
}

export function createGuard(options: GuardOptions): Guard {
  const cookieName = `rudder_token_${options.port}`
  const allowed = new Set(['localhost', ...(options.allowedHosts ?? []).map(normalizeHostName)])
  const digest = (text: string) => createHash('sha256').update(text).digest()
  const expected = digest(options.token)

  const isToken = (candidate: string | undefined) =>
    candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), expected)

  const isOwnHost = (value: string | undefined): boolean => {
    if (value === undefined) return false
    const parsed = splitHost(value)
    if (!parsed || parsed.port !== String(options.port)) return false
    return isIP(parsed.name) !== 0 || allowed.has(normalizeHostName(parsed.name))
  }

  return {
    cookieName,
    isToken,
    checkRequest(header) {
      const host = header('host')
      if (!isOwnHost(host))
        return {
          status: 403,
          code: 'BAD_HOST',
          message: `this server answers only to its own address (Host ${JSON.stringify(host ?? '')} is not it); open the URL that rudder serve printed, or start it with --host <name>`,
        }
      const origin = header('origin')
      if (
        (origin !== undefined && origin !== `http://${host}`) ||
        header('sec-fetch-site') === 'cross-site'
      )
        return {
          status: 403,
          code: 'BAD_ORIGIN',
          message: `requests from another site are refused (Origin ${JSON.stringify(origin ?? '')}); use the page this server serves`,
        }
      const bearer = /^Bearer\s+(.+)$/i.exec(header('authorization') ?? '')?.[1]?.trim()
      if (isToken(bearer) || isToken(readCookie(header('cookie'), cookieName))) return undefined
      return {
        status: 401,
        code: 'UNAUTHORIZED',
        message:
          'a token is needed: open the URL with ?token= that rudder serve printed, or send the header Authorization: Bearer <token>',
      }
    },
    cookie: () =>
      `${cookieName}=${options.token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${60 * 60 * 24 * 30}`,
  }
}

/** Splits `name:port` (with `[v6]:port` for IPv6). */
function splitHost(value: string): { name: string; port: string } | undefined {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(value)
  if (bracketed) return { name: bracketed[1]!, port: bracketed[2]! }
  const plain = /^([^:[\]]+):(\d+)$/.exec(value)
  return plain ? { name: plain[1]!, port: plain[2]! } : undefined
}

function normalizeHostName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '')
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const index = part.indexOf('=')
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim()
  }
  return undefined
}
