// Bundles the command line for start-up speed (bench B10, docs/decisions/0147): tsc's output
// under dist/ is one file per module, and Node pays per file loaded (resolve, read, compile,
// link), so bin/rudder.js runs this bundle instead. Code splitting keeps every `await import()`
// a separate chunk, loaded only by the runs that use it; packages stay external, as npm
// installed them. Run by `npm run build` after tsc, and by the tests' global setup.
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSync } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outdir = join(root, 'dist/bundle/cli')
// Chunk names carry a hash: clear the old ones so they do not pile up.
rmSync(outdir, { recursive: true, force: true })
buildSync({
  entryPoints: [join(root, 'dist/frontends/cli/main.js')],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
})
