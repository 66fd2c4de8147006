/**
 * Builds dist/ (and the command line's bundle) once before the suite, so subprocess tests run
 * the `rudder` bin over the sources under test rather than a stale build; and the web page
 * (dist/web/) when its sources changed since it was last built, for the web host's tests.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
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
  // The `rudder` bin runs the command line's bundle when it is newer than tsc's output
  // (bin/rudder.js), so the subprocess tests run the bundle made from this build, as users do.
  execFileSync(process.execPath, [join(root, 'scripts/bundle-cli.js')], {
    cwd: root,
    stdio: 'pipe',
  })
  buildPageIfStale(root)
}

/** The page bundles these folders; a change in any of them makes dist/web/ stale. */
const PAGE_SOURCES = ['src/frontends/web', 'src/frontends/view']

function buildPageIfStale(root: string): void {
  const built = join(root, 'dist/web/index.html')
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0
  const newest = Math.max(...PAGE_SOURCES.map((dir) => newestMtime(join(root, dir))))
  if (newest <= builtAt) return
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      'src/frontends/web/page/vite.config.ts',
    ],
    { cwd: root, stdio: 'pipe' },
  )
}

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}
