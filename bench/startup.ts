/**
 * B10: start-up. `rudder --version`, `rudder --help` and a whole headless run of a one-answer
 * scripted task (an upper bound of start-to-ready), each interleaved with `node -e 0` in the
 * same run, plus the count of ES modules each loads (a counter that does not move with noise).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fmt, median, type Pair, type Row, ratios } from './measure.js'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const BIN = join(ROOT, 'bin/rudder.js')

// A module hook that writes one line per module loaded (node:, file: and package modules).
const COUNT_MODULES = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent("export async function load(url, context, next) { process.stderr.write('rudder-bench-module ' + url + '\\\\n'); return next(url, context) }"))`,
)}`

function wall(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, { env, stdio: 'ignore' })
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

/**
 * CPU time (user + system) of a command, read from bash's `times` (children's line). Shared
 * machines make wall times swing with the neighbours' load; CPU time moves much less.
 */
export function cpu(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const result = spawnSync(
    'bash',
    ['-c', '"$0" "$@" >/dev/null 2>&1 || exit 9; times', process.execPath, ...args],
    { env, encoding: 'utf8' },
  )
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  const children = result.stdout.trim().split('\n')[1] ?? ''
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(
    (match) => Number(match[1]) * 60 + Number(match[2]),
  )
  return seconds.reduce((sum, value) => sum + value, 0) * 1000
}

// The same for CommonJS files (the bundle of the command line, and packages it requires).
const COUNT_FILES = `const Module = require('node:module'); const load = Module.prototype.load; Module.prototype.load = function (filename) { process.stderr.write('rudder-bench-module file://' + filename + '\\n'); return load.call(this, filename) }`

/**
 * How many modules (files of rudder and its packages, ES modules and CommonJS, not node:
 * built-ins) a command loads. `hook` is a file holding COUNT_FILES.
 */
function modulesLoaded(args: readonly string[], env: NodeJS.ProcessEnv, hook: string): number {
  const result = spawnSync(
    process.execPath,
    ['--import', COUNT_MODULES, '--require', hook, ...args],
    { env, encoding: 'utf8' },
  )
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return result.stderr.split('\n').filter((line) => line.startsWith('rudder-bench-module file:'))
    .length
}

/** The median of subject − floor over the pairs, with its min–max: `+120.0 ms (+95.1 to +140.2)`. */
function plusRange(pairs: readonly Pair[]): string {
  const plus = pairs.map((pair) => pair.subject - pair.floor)
  const signed = (value: number) => `${value < 0 ? '−' : '+'}${fmt.ms(Math.abs(value))}`
  return `${signed(median(plus))} (${signed(Math.min(...plus))} to ${signed(Math.max(...plus))})`
}

export function startupBenchmarks(): Row[] {
  const scratch = mkdtempSync(join(tmpdir(), 'rudder-bench-startup-'))
  try {
    // NODE_EXTRA_CA_CERTS makes every node start slower; BENCHMARKS.md says to unset it.
    const env: NodeJS.ProcessEnv = { ...process.env, RUDDER_HOME: scratch }
    delete env.NODE_EXTRA_CA_CERTS
    const countFiles = join(scratch, 'count-files.cjs')
    writeFileSync(countFiles, COUNT_FILES)
    const script = join(scratch, 'script.json')
    writeFileSync(script, JSON.stringify([{ text: 'ready' }]))
    const task = [
      BIN,
      '--store',
      'memory:',
      '--provider',
      `scripted:${script}`,
      '--cwd',
      scratch,
      'hi',
    ]
    // The same run in the default store, SQLite: what a user's first run costs (the native
    // module, the database file, its schema).
    const sqliteTask = task.map((arg) =>
      arg === 'memory:' ? `sqlite:${join(scratch, 'sessions.db')}` : arg,
    )
    const commands = {
      version: [BIN, '--version'],
      help: [BIN, '--help'],
      run: task,
      runSqlite: sqliteTask,
    }
    const pairs = 9
    const measured: Record<keyof typeof commands, Pair[]> = {
      version: [],
      help: [],
      run: [],
      runSqlite: [],
    }
    wall(['-e', '0'], env) // warm the file cache
    for (const args of Object.values(commands)) wall(args, env)
    for (let i = 0; i < pairs; i++) {
      for (const [name, args] of Object.entries(commands) as [keyof typeof commands, string[]][])
        measured[name].push({ subject: wall(args, env), floor: wall(['-e', '0'], env) })
    }
    const cpuPairs: Record<keyof typeof commands, Pair[]> = {
      version: [],
      help: [],
      run: [],
      runSqlite: [],
    }
    for (let i = 0; i < pairs; i++) {
      for (const [name, args] of Object.entries(commands) as [keyof typeof commands, string[]][])
        cpuPairs[name].push({ subject: cpu(args, env), floor: cpu(['-e', '0'], env) })
    }
    const cpuFloor = median(Object.values(cpuPairs).flatMap((list) => list.map((p) => p.floor)))
    const cpuRow = (name: keyof typeof commands, target: string): Row => ({
      id: 'B10',
      what: `  the same, CPU time (user + system)`,
      figure: fmt.ms(median(cpuPairs[name].map((p) => p.subject))),
      floor: `${fmt.ms(cpuFloor)} node -e 0`,
      ratio:
        name === 'run' || name === 'runSqlite'
          ? plusRange(cpuPairs[name])
          : fmt.ratio(ratios(cpuPairs[name])),
      target,
    })
    const floor = median(Object.values(measured).flatMap((list) => list.map((p) => p.floor)))
    const floorLabel = `${fmt.ms(floor)} node -e 0`
    const subject = (name: keyof typeof commands) => median(measured[name].map((p) => p.subject))
    const modules = (name: keyof typeof commands) => modulesLoaded(commands[name], env, countFiles)
    return [
      {
        id: 'B10',
        what: `rudder --version (${modules('version')} modules)`,
        figure: fmt.ms(subject('version')),
        floor: floorLabel,
        ratio: fmt.ratio(ratios(measured.version)),
        target: '≤ 1.5×',
      },
      cpuRow('version', '≤ 1.5×'),
      {
        id: 'B10',
        what: `rudder --help (${modules('help')} modules)`,
        figure: fmt.ms(subject('help')),
        floor: floorLabel,
        ratio: fmt.ratio(ratios(measured.help)),
        target: '≤ 1.5×',
      },
      cpuRow('help', '≤ 1.5×'),
      {
        id: 'B10',
        what: `headless one-answer run, scripted, memory store (${modules('run')} modules)`,
        figure: fmt.ms(subject('run')),
        floor: floorLabel,
        ratio: `${plusRange(measured.run)}, ${fmt.ratio(ratios(measured.run))}`,
        target: '≤ floor + 100 ms',
      },
      cpuRow('run', '≤ floor + 100 ms'),
      {
        id: 'B10',
        what: `the same run in the default store, SQLite (${modules('runSqlite')} modules)`,
        figure: fmt.ms(subject('runSqlite')),
        floor: floorLabel,
        ratio: `${plusRange(measured.runSqlite)}, ${fmt.ratio(ratios(measured.runSqlite))}`,
        target: '≤ floor + 100 ms',
      },
      cpuRow('runSqlite', '≤ floor + 100 ms'),
    ]
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
