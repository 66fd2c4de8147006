/**
 * Builds dist/ once before the suite, so subprocess tests run the `rudder` bin over the
 * sources under test rather than a stale build.
 */
import { execFileSync } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export default function setup(): void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
  execFileSync(
    process.execPath,
    [resolve(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  )
}
