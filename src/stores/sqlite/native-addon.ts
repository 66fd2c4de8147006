/**
 * Where better-sqlite3's compiled addon is, so that opening a database skips the `bindings`
 * package's search for it (it reads a stack trace and tries a dozen paths on every start;
 * bench B10, decision 0137). npm builds or unpacks the addon into `build/Release/` of the
 * package; anywhere else (a custom build), better-sqlite3 searches as it always does.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export function nativeBindingOption(): { nativeBinding?: string } {
  try {
    const manifest = createRequire(import.meta.url).resolve('better-sqlite3/package.json')
    const addon = join(dirname(manifest), 'build', 'Release', 'better_sqlite3.node')
    return existsSync(addon) ? { nativeBinding: addon } : {}
  } catch {
    return {}
  }
}
