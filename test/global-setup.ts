/**
 * Builds dist/ once before the suite, so subprocess tests run the `rudder` bin over the
 * sources under test rather than a stale build.
 */
import { execFileSync } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export default function setup(): void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
  const tsc = resolve(root, 'node_modules/typescript/bin/tsc')
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'pipe' })
  } catch {
    // tsc still emits what it can when there are type errors; `npm test` reports them in its
    // type-check step (and `npm ci` builds with `prepare`), so the suite runs over this build.
    process.stderr.write(
      'global-setup: tsc reported errors while building dist/; see `npm run typecheck`\n',
    )
  }
}
