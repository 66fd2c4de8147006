/** The addon path handed to better-sqlite3 (decision 0137) is the addon npm built. */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, sep } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { nativeBindingOption } from '../../src/stores/sqlite/native-addon.js'

describe('better-sqlite3 addon path', () => {
  it("names the package's own compiled addon, which opens a database", () => {
    const { nativeBinding } = nativeBindingOption()
    const packageDir = dirname(
      createRequire(import.meta.url).resolve('better-sqlite3/package.json'),
    )
    expect(nativeBinding).toBe(`${packageDir}${sep}build${sep}Release${sep}better_sqlite3.node`)
    expect(existsSync(nativeBinding as string)).toBe(true)
    const db = new Database(':memory:', { nativeBinding })
    expect(db.prepare('SELECT 41 + 1 AS answer').get()).toEqual({ answer: 42 })
    db.close()
  })
})
