/**
 * B10: start-up. `rudder --version` against `node -e 0`, and a whole headless run of a
 * one-answer scripted task (an upper bound of start-to-ready) against the same floor.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fmt, median, type Row, ratios } from './measure.js'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const BIN = join(ROOT, 'bin/rudder.js')

function wall(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, { env, stdio: 'ignore' })
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

export function startupBenchmarks(): Row[] {
  const scratch = mkdtempSync(join(tmpdir(), 'rudder-bench-startup-'))
  try {
    // NODE_EXTRA_CA_CERTS makes every node start slower; BENCHMARKS.md says to unset it.
    const env: NodeJS.ProcessEnv = { ...process.env, RUDDER_HOME: scratch }
    delete env.NODE_EXTRA_CA_CERTS
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
    const pairs = 9
    const version: { subject: number; floor: number }[] = []
    const run: { subject: number; floor: number }[] = []
    wall(['-e', '0'], env) // warm the file cache
    for (let i = 0; i < pairs; i++) {
      version.push({ subject: wall([BIN, '--version'], env), floor: wall(['-e', '0'], env) })
      run.push({ subject: wall(task, env), floor: wall(['-e', '0'], env) })
    }
    const floor = median([...version, ...run].map((p) => p.floor))
    const runMedian = median(run.map((p) => p.subject))
    return [
      {
        id: 'B10',
        what: 'rudder --version',
        figure: fmt.ms(median(version.map((p) => p.subject))),
        floor: `${fmt.ms(floor)} node -e 0`,
        ratio: fmt.ratio(ratios(version)),
        target: '≤ 1.5×',
      },
      {
        id: 'B10',
        what: 'headless run of a one-answer task (≥ start-to-ready)',
        figure: fmt.ms(runMedian),
        floor: `${fmt.ms(floor)} node -e 0`,
        ratio: `+${fmt.ms(runMedian - floor)}`,
        target: '≤ floor + 100 ms',
      },
    ]
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
