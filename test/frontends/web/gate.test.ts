/**
 * The web host's gate (docs/decisions/0101-web-host-security.md), against a real server on
 * 127.0.0.1: the token on every request and upgrade, Host and Origin checks, body limits, only
 * built files served, and errors without stack traces.
 */
import { describe, expect, it } from 'vitest'
import { rawRequest, upgradeStatus, webPlace } from './web-support.js'

const STACK_LINE = /\n\s+at \S/

describe('the web host gate', () => {
  it('needs the token on every request; the token URL trades it for a cookie', async () => {
    const place = await webPlace([])
    const base = place.base.replace(/\/$/, '')
    const none = await fetch(`${base}/api/host`)
    expect(none.status).toBe(401)
    expect(await none.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } })
    expect((await fetch(`${base}/`)).status).toBe(401)
    expect(
      (await fetch(`${base}/api/host`, { headers: { authorization: 'Bearer nope' } })).status,
    ).toBe(401)
    expect((await place.call('/api/host')).status).toBe(200)

    const opened = await fetch(`${base}/?token=${place.server.token}`, { redirect: 'manual' })
    expect(opened.status).toBe(303)
    expect(opened.headers.get('location')).toBe('/')
    const cookie = opened.headers.get('set-cookie') ?? ''
    expect(cookie).toMatch(new RegExp(`^rudder_token_${place.server.port}=`))
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Strict/)
    const withCookie = await fetch(`${base}/api/host`, {
      headers: { cookie: cookie.split(';')[0]! },
    })
    expect(withCookie.status).toBe(200)
    expect(await withCookie.json()).toMatchObject({ name: 'rudder', cwd: place.cwd })
    const wrong = await fetch(`${base}/?token=wrong`, { redirect: 'manual' })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
  })

  it('refuses another Host (DNS rebinding) and another Origin (cross-site requests)', async () => {
    const place = await webPlace([])
    const auth = { authorization: `Bearer ${place.server.token}` }
    const url = `${place.base}api/host`
    const port = place.server.port
    for (const host of [`evil.example:${port}`, `127.0.0.1:${port + 1}`, 'localhost']) {
      const answer = await rawRequest(url, { headers: { ...auth, host } })
      expect(answer.status, host).toBe(403)
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'BAD_HOST' } })
    }
    expect(
      (await rawRequest(url, { headers: { ...auth, host: `localhost:${port}` } })).status,
    ).toBe(200)
    const foreign = await place.call('/api/host', { headers: { origin: 'http://evil.example' } })
    expect(foreign.status).toBe(403)
    expect(await foreign.json()).toMatchObject({ error: { code: 'BAD_ORIGIN' } })
    const crossSite = await place.call('/api/host', { headers: { 'sec-fetch-site': 'cross-site' } })
    expect(crossSite.status).toBe(403)
    const same = await place.call('/api/host', { headers: { origin: `http://127.0.0.1:${port}` } })
    expect(same.status).toBe(200)
    // A cross-site POST with the cookie changes nothing.
    const created = await place.call('/api/sessions', {
      json: {},
      headers: { origin: 'http://evil.example' },
    })
    expect(created.status).toBe(403)
    expect(await place.host.store.list()).toEqual([])
  })

  it('needs the token and this origin on WebSocket upgrades too', async () => {
    const place = await webPlace([])
    const { header } = await place.json<{ header: { id: string } }>('/api/sessions', { json: {} })
    const url = `${place.base.replace(/^http/, 'ws')}api/sessions/${header.id}/stream?since=-1`
    const token = place.server.token
    expect(await upgradeStatus(url, {})).toBe(401)
    expect(await upgradeStatus(url, { authorization: 'Bearer wrong' })).toBe(401)
    expect(
      await upgradeStatus(url, { authorization: `Bearer ${token}`, origin: 'http://evil.example' }),
    ).toBe(403)
    expect(
      await upgradeStatus(url, {
        cookie: `rudder_token_${place.server.port}=${token}`,
        origin: `http://127.0.0.1:${place.server.port}`,
      }),
    ).toBe(101)
    expect(
      await upgradeStatus(url.replace(header.id, 'no-such-session'), {
        authorization: `Bearer ${token}`,
      }),
    ).toBe(404)
    expect(
      await upgradeStatus(url.replace('since=-1', 'since=x'), { authorization: `Bearer ${token}` }),
    ).toBe(400)
  })

  it('limits and checks request bodies, and answers errors without stack traces', async () => {
    const place = await webPlace([], { server: { bodyLimitBytes: 1000 } })
    const { header } = await place.json<{ header: { id: string } }>('/api/sessions', { json: {} })
    const send = `/api/sessions/${header.id}/send`
    const big = await place.call(send, { json: { text: 'x'.repeat(2000) } })
    expect(big.status).toBe(413)
    expect(await big.json()).toMatchObject({ error: { code: 'BODY_TOO_LARGE' } })
    // Without a Content-Length the limit holds while the body streams in.
    const chunked = await rawRequest(`${place.base}api/sessions/${header.id}/send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${place.server.token}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      body: JSON.stringify({ text: 'y'.repeat(5000) }),
    })
    expect(chunked.status).toBe(413)

    const answers = [
      await place.call(send, {
        method: 'POST',
        body: '{"text":',
        headers: { 'content-type': 'application/json' },
      }),
      await place.call(send, {
        method: 'POST',
        body: 'hello',
        headers: { 'content-type': 'text/plain' },
      }),
      await place.call(send, { json: { text: 5 } }),
      await place.call(send, { json: { text: 'a', content: [{ type: 'text', text: 'b' }] } }),
      await place.call(`/api/sessions/${header.id}/inject`, {
        json: { text: 'x', source: { kind: 'user' } },
      }),
      await place.call('/api/sessions/no-such-session'),
      await place.call('/api/nothing-here'),
      await place.call(`/api/sessions/${header.id}/stream`),
    ]
    const bodies = await Promise.all(
      answers.map(async (answer) => [answer.status, await answer.json()]),
    )
    expect(bodies).toMatchObject([
      [400, { error: { code: 'INVALID_JSON' } }],
      [415, { error: { code: 'UNSUPPORTED_MEDIA_TYPE' } }],
      [400, { error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/^text: /) } }],
      [400, { error: { message: expect.stringMatching(/either "text" or "content"/) } }],
      [400, { error: { message: expect.stringMatching(/source: .*not a person/) } }],
      [404, { error: { code: 'SESSION_NOT_FOUND' } }],
      [404, { error: { code: 'NOT_FOUND' } }],
      [426, { error: { code: 'UPGRADE_REQUIRED' } }],
    ])
    for (const [, body] of bodies) expect(JSON.stringify(body)).not.toMatch(STACK_LINE)
    // Nothing reached the session.
    expect((await place.host.store.read(header.id)).events).toEqual([])
  })

  it('serves the built page and nothing outside it', async () => {
    const place = await webPlace([])
    const index = await place.call('/')
    expect(index.status).toBe(200)
    expect(index.headers.get('content-type')).toMatch(/text\/html/)
    expect(index.headers.get('content-security-policy')).toMatch(/default-src 'self'/)
    const html = await index.text()
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    const asset = await place.call(script!)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('content-type')).toMatch(/javascript/)
    const auth = { authorization: `Bearer ${place.server.token}` }
    for (const path of [
      '/../package.json',
      '/%2e%2e/package.json',
      '/assets/..%2f..%2f..%2fpackage.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/..%5c..%5cpackage.json',
      '/index.html/../../package.json',
      '/etc/passwd',
      '/src/index.ts',
    ]) {
      // Sent as written: a raw request keeps the dots that fetch would resolve away.
      const answer = await rawRequest(`${place.base.replace(/\/$/, '')}${path}`, { headers: auth })
      expect(answer.status, path).toBe(404)
      expect(answer.body, path).not.toMatch(/"name": "rudder"|root:/)
    }
  })
})
