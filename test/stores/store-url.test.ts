/**
 * Store URLs and the default location: `sqlite:`, `jsonl:`, `memory:`, `~` expansion, and
 * `RUDDER_HOME` replacing `~/.rudder` (taken from an env option, so tests pass their own).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/index.js'
import { chooseStoreUrl, defaultStoreUrl, openStore, redactUrl } from '../../src/stores/index.js'
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
  ])('refuses %s with a ConfigError naming the accepted forms', (url, message) => {
    expect(() => parseStoreUrl(url, env)).toThrowError(ConfigError)
    expect(() => parseStoreUrl(url, env)).toThrowError(message)
    expect(() => parseStoreUrl(url, env)).toThrowError(/sqlite:<path>/)
  })

  it('parses a PostgreSQL URL: schema, pool and statement timeout from the query, the password never shown', () => {
    const location = parseStoreUrl(
      'postgres://ada:s3cret@db.example:6543/team?schema=store_a&pool=4&statement_timeout=500&sslmode=disable',
      env,
    )
    expect(location).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://ada:s3cret@db.example:6543/team?sslmode=disable',
      display:
        'postgres://ada:***@db.example:6543/team?schema=store_a&pool=4&statement_timeout=500&sslmode=disable',
      host: 'db.example:6543',
      database: 'team',
      schema: 'store_a',
      poolSize: 4,
      statementTimeoutMs: 500,
    })
    expect(parseStoreUrl('postgresql://h/db', env)).toMatchObject({
      host: 'h:5432',
      schema: 'rudder',
      poolSize: 10,
    })
    expect(redactUrl('postgres://u:p%40ss@h/db')).toBe('postgres://u:***@h/db')
  })

  it.each([
    ['postgres://h/db?schema=Bad-Name', /schema "Bad-Name" must be lower-case/],
    ['postgres://h/db?pool=0', /pool must be an integer ≥ 1/],
    ['postgres://u:hunter2@h/db?statement_timeout=soon', /statement_timeout must be an integer/],
  ])(
    'refuses the PostgreSQL URL %s, naming the parameter and hiding the password',
    (url, message) => {
      expect(() => parseStoreUrl(url, env)).toThrowError(message)
      expect(() => parseStoreUrl(url, env)).not.toThrowError(/hunter2/)
    },
  )

  it('chooses the --store flag, then RUDDER_STORE, then the config, then the default', () => {
    const withEnv = { ...env, RUDDER_STORE: 'jsonl:/e' }
    expect(chooseStoreUrl('memory:', withEnv, 'jsonl:/c')).toBe('memory:')
    expect(chooseStoreUrl(undefined, withEnv, 'jsonl:/c')).toBe('jsonl:/e')
    expect(chooseStoreUrl(undefined, { ...env, RUDDER_STORE: '' }, 'jsonl:/c')).toBe('jsonl:/c')
    expect(chooseStoreUrl(undefined, env, undefined)).toBe('sqlite:/home/ada/.rudder/sessions.db')
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
