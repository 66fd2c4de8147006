// Bundles the command line for start-up speed (bench B10, docs/decisions/0147 and 0136): tsc's
// output under dist/ is one file per module, and Node pays per file loaded (resolve, read,
// compile, link), so bin/rudder.js runs this bundle instead. Packages stay external, as npm
// installed them. Run by `npm run build` after tsc, and by the tests' global setup.
//
// Chunks follow what a run loads (decision 0136), not which entries share a module:
// - `cli`: what main.js imports statically (argument parsing, help, errors): `--help` and
//   usage errors load main.js and this chunk only;
// - `run-path`: what the headless command imports statically beyond `cli` (runtime, agent, store,
//   tools), plus the modules that two or more of its lazily imported parts share (the stores'
//   blob store, lease and errors), so a one-answer run loads a handful of files, not thirty;
// - everything else stays a chunk per `await import()`, loaded only by the runs that use it
//   (the TUI, ACP, the web host, each store backend, each provider's SDK adapter).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'rolldown'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const mainEntry = join(dist, 'frontends/cli/main.js')
const runEntry = join(dist, 'frontends/cli/headless.js')

/** Module ids of each group, filled once the module graph is known (see `plan`). */
const groups = { cli: new Set(), run: new Set() }

/** A plugin that reads the module graph after loading and before chunking. */
const plan = {
  name: 'rudder-start-up-chunks',
  buildEnd() {
    const ours = (id) => id.startsWith(dist)
    const info = (id) => this.getModuleInfo(id)
    const closure = (start) => {
      const seen = new Set()
      const visit = (id) => {
        if (seen.has(id) || !ours(id)) return
        seen.add(id)
        for (const next of info(id)?.importedIds ?? []) visit(next)
      }
      visit(start)
      return seen
    }
    const cli = closure(mainEntry)
    const run = closure(runEntry)
    for (const id of cli) run.delete(id)
    // Modules shared by two or more of the run's lazily imported parts join `run-path`.
    const reachedBy = new Map()
    for (const id of run)
      for (const lazy of info(id)?.dynamicallyImportedIds ?? [])
        if (ours(lazy))
          for (const dep of closure(lazy)) {
            if (dep === lazy || cli.has(dep) || run.has(dep)) continue
            const by = reachedBy.get(dep) ?? new Set()
            by.add(lazy)
            reachedBy.set(dep, by)
          }
    for (const [id, by] of reachedBy) if (by.size > 1) run.add(id)
    groups.cli = cli
    groups.run = run
  },
}

/**
 * One build of the command line into `outdir`, ES modules or CommonJS. Chunk names carry a
 * hash: the directory is cleared first so old ones do not pile up.
 */
async function bundle(outdir, format) {
  rmSync(outdir, { recursive: true, force: true })
  await build({
    input: { main: mainEntry },
    platform: 'node',
    // Packages and node: built-ins stay imports; only rudder's own files are bundled.
    external: (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0'),
    plugins: [plan],
    logLevel: 'warn',
    onLog(level, log, report) {
      // A module that is both imported statically and with `await import()` is loaded with
      // its static importer; the groups above already place such modules: nothing to say.
      if (log.code === 'INEFFECTIVE_DYNAMIC_IMPORT') return
      report(level, log)
    },
    output: {
      dir: outdir,
      ...(format === 'cjs'
        ? {
            // Strict like the ES modules it came from, and packages loaded with require() (an
            // ES-only package needs Node 20.19's require(esm)): a dynamic import() in a script
            // compiled by bin/rudder.js would need a Node flag.
            format: 'cjs',
            strict: true,
            dynamicImportInCjs: false,
            entryFileNames: '[name].cjs',
            chunkFileNames: '[name]-[hash].cjs',
          }
        : { format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' }),
      sourcemap: true,
      // V8 scans every byte of a module it loads: comments cost as much as code, and one
      // character outside ASCII makes it decode the whole file to two-byte text (the source
      // map keeps the comments for readers).
      comments: false,
      charset: 'ascii',
      codeSplitting: {
        groups: [
          { name: 'cli', test: (id) => groups.cli.has(id), priority: 2 },
          { name: 'run-path', test: (id) => groups.run.has(id), priority: 1 },
        ],
      },
    },
  })
}

// ES modules for runs on a terminal (the TUI: while its modules load asynchronously, keys
// typed at start-up are read and queued, docs/decisions/0083); CommonJS, compiled with V8's
// code cache by bin/rudder.js, for every other run (Node 20 has no code cache for ES modules).
const esmDir = join(dist, 'bundle/cli')
const cjsDir = join(dist, 'bundle/cli-cached')
await bundle(esmDir, 'esm')
await bundle(cjsDir, 'cjs')

// bin/rudder.js compiles the bundle without a dynamic import() callback (Node 20 needs a flag
// for one): a chunk that still says import() would fail only when it runs, so fail here.
for (const file of readdirSync(cjsDir))
  if (file.endsWith('.cjs') && /\bimport\(/.test(readFileSync(join(cjsDir, file), 'utf8')))
    throw new Error(`${file} has a dynamic import(); bin/rudder.js cannot run it`)

// The code caches: V8's bytecode for what `--help`, a one-answer run and a first SQLite run
// compile, written beside each file by bin/rudder.js (RUDDER_CODE_CACHE=write). Each run
// rewrites the caches of the files it loaded, so the fuller runs go last.
const scratch = mkdtempSync(join(tmpdir(), 'rudder-code-cache-'))
try {
  const script = join(scratch, 'script.json')
  writeFileSync(script, JSON.stringify([{ text: 'ready' }]))
  const env = { ...process.env, RUDDER_HOME: scratch, RUDDER_CODE_CACHE: 'write' }
  const bin = join(root, 'bin/rudder.js')
  const task = ['--provider', `scripted:${script}`, '--cwd', scratch, 'hi']
  for (const args of [
    ['--help'],
    ['--store', 'memory:', ...task],
    ['--store', `sqlite:${join(scratch, 'sessions.db')}`, ...task],
  ])
    execFileSync(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
