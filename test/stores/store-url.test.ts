/**
 * Store URLs and the default location: `sqlite:`, `jsonl:`, `memory:`, `~` expansion, and
 * `RUDDER_HOME` replacing `~/.rudder` (taken from an env option, so tests pass their own).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/index.js'
import { defaultStoreUrl, openStore } from '../../src/stores/index.js'
import { parseStoreUrl } from '../../src/stores/store-url.js'
import { tempDirectory } from './support/stores.js'

describe('store URLs', () => {
  const env = { HOME: '/home/ada' }

  it('parses each kind, expanding ~ and resolving relative paths', () => {
    expect(parseStoreUrl('sqlite:/var/s.db', env)).toEqual({ kind: 'sqlite', path: '/var/s.db' })
    expect(parseStoreUrl('sqlite:///var/s.db', env)).toEqual({ kind: 'sqlite', path: '/var/s.db' })
    expect(parseStoreUrl('sqlite:~/s.db', env)).toEqual({ kind: 'sqlite', path: '/home/ada/s.db' })
    expect(parseStoreUrl('jsonl:~/logs', env)).toEqual({
      kind: 'jsonl',
      directory: '/home/ada/logs',
    })
    expect(parseStoreUrl('jsonl:rel/dir', env)).toEqual({
      kind: 'jsonl',
      directory: join(process.cwd(), 'rel/dir'),
    })
    expect(parseStoreUrl('memory:', env)).toEqual({ kind: 'memory' })
  })

  it.each([
    ['ftp://x', /not one rudder knows/],
    ['sessions.db', /not one rudder knows/],
    ['sqlite:', /has no path/],
    ['memory:x', /takes no path/],
    ['postgres://db/rudder', /PostgreSQL store is not available/],
  ])('refuses %s with a ConfigError naming the accepted forms', (url, message) => {
    expect(() => parseStoreUrl(url, env)).toThrowError(ConfigError)
    expect(() => parseStoreUrl(url, env)).toThrowError(message)
    expect(() => parseStoreUrl(url, env)).toThrowError(/sqlite:<path>/)
  })

  it('defaults to sessions.db in ~/.rudder, or in RUDDER_HOME when set', () => {
    expect(defaultStoreUrl(env)).toBe('sqlite:/home/ada/.rudder/sessions.db')
    expect(defaultStoreUrl({ ...env, RUDDER_HOME: '/srv/rudder' })).toBe(
      'sqlite:/srv/rudder/sessions.db',
    )
    expect(defaultStoreUrl({ ...env, RUDDER_HOME: '~/elsewhere' })).toBe(
      'sqlite:/home/ada/elsewhere/sessions.db',
    )
  })

  it('opens the default store under RUDDER_HOME, creating it', async () => {
    const home = join(tempDirectory(), 'rudder-home')
    const store = await openStore(undefined, { env: { RUDDER_HOME: home } })
    try {
      expect(store.url).toBe(`sqlite:${join(home, 'sessions.db')}`)
      await (await store.create()).close()
      expect(existsSync(join(home, 'sessions.db'))).toBe(true)
    } finally {
      await store.close()
    }
  })
})
