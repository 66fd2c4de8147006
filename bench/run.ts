/**
 * `npm run bench`: runs every benchmark and prints figures beside their floors and ratios.
 * It never fails on speed. `npm run bench -- --full` adds the largest sizes; naming ids
 * (`npm run bench -- B2 B4`) runs only the groups that report them.
 *
 * Each group runs in a process of its own (decision 0177): a user's process runs rudder, not
 * ten benchmarks one after another, and in one long process a group's figures moved with what
 * ran before it (a grown heap, compiled code for other shapes, the collector's pacing).
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { acpBenchmarks } from './acp.js'
import { agentLoopBenchmarks } from './agent-loop.js'
import { checkpointBenchmarks } from './checkpoint.js'
import { coreBenchmarks } from './core.js'
import { printTable, type Row } from './measure.js'
import { postgresBenchmarks } from './postgres.js'
import { resumeBenchmarks } from './resume.js'
import { startupBenchmarks } from './startup.js'
import { storeBenchmarks } from './stores.js'
import { tuiBenchmarks } from './tui.js'
import { webBenchmarks } from './web.js'

type Options = { readonly full: boolean }

/** A group of benchmarks run in one process, and the ids of the rows it reports. */
type Group = {
  readonly name: string
  readonly ids: readonly string[]
  readonly run: (options: Options) => Row[] | Promise<Row[]>
}

const stores = (id: string) => (options: Options) => storeBenchmarks({ ...options, only: [id] })

const GROUPS: readonly Group[] = [
  { name: 'agent-loop', ids: ['B5+'], run: () => agentLoopBenchmarks() },
  { name: 'core', ids: ['B5', 'B5+'], run: (options) => coreBenchmarks(options) },
  { name: 'startup', ids: ['B10'], run: () => startupBenchmarks() },
  { name: 'full-load', ids: ['B2'], run: stores('B2') },
  { name: 'append-jsonl', ids: ['B3'], run: stores('B3') },
  { name: 'append-sqlite', ids: ['B4'], run: stores('B4') },
  { name: 'listing', ids: ['B8'], run: stores('B8') },
  { name: 'fork', ids: ['B11'], run: stores('B11') },
  { name: 'large-payloads', ids: ['B13'], run: stores('B13') },
  { name: 'resume', ids: ['B1', 'B9'], run: (options) => resumeBenchmarks(options) },
  { name: 'checkpoint', ids: ['B2', 'B2+'], run: (options) => checkpointBenchmarks(options) },
  { name: 'postgres', ids: ['B4-pg', 'B8-pg'], run: (options) => postgresBenchmarks(options) },
  { name: 'acp', ids: ['B6'], run: () => acpBenchmarks() },
  { name: 'web', ids: ['B6', 'B9'], run: () => webBenchmarks() },
  { name: 'tui', ids: ['B6', 'B7', 'B10'], run: () => tuiBenchmarks() },
]

/** What a group's process sends back. */
type Outcome = { readonly rows: Row[] } | { readonly error: string }

const GROUP_FLAG = '--group'

async function runGroup(name: string, options: Options): Promise<void> {
  const group = GROUPS.find((candidate) => candidate.name === name)
  let outcome: Outcome
  try {
    if (!group) throw new Error(`no benchmark group "${name}"`)
    outcome = { rows: await group.run(options) }
  } catch (error) {
    outcome = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) }
  }
  await new Promise<void>((resolve) => process.send!(outcome, () => resolve()))
  process.disconnect()
}

/** Runs one group in a child process of this script, with this process's Node flags. */
function inChild(group: Group, options: Options): Promise<Outcome> {
  const args = [GROUP_FLAG, group.name, ...(options.full ? ['--full'] : [])]
  const child = fork(fileURLToPath(import.meta.url), args, { execArgv: process.execArgv })
  return new Promise((resolve) => {
    let outcome: Outcome | undefined
    child.on('message', (message) => {
      outcome = message as Outcome
    })
    child.on('exit', (code, signal) => {
      resolve(
        outcome ?? {
          error: `the group's process ended (${signal ?? `exit code ${code}`}) without reporting`,
        },
      )
    })
  })
}

function failureRow(group: Group, error: string): Row {
  const first = error.split('\n', 1)[0] ?? error
  return {
    id: group.ids.join('/'),
    what: `${group.name}: FAILED: ${first}`,
    figure: '-',
    floor: '-',
    ratio: '-',
    target: '-',
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const options: Options = { full: argv.includes('--full') }
  const flag = argv.indexOf(GROUP_FLAG)
  if (flag >= 0) return runGroup(argv[flag + 1] ?? '', options)
  const wanted = argv.filter((arg) => !arg.startsWith('--'))
  const groups = GROUPS.filter(
    (group) => wanted.length === 0 || group.ids.some((id) => wanted.includes(id)),
  )
  if (groups.length === 0) {
    const known = [...new Set(GROUPS.flatMap((group) => group.ids))].join(', ')
    throw new Error(`no benchmark reports ${wanted.join(', ')}; known ids: ${known}`)
  }
  const rows: Row[] = []
  let failed = false
  for (const group of groups) {
    const outcome = await inChild(group, options)
    if ('rows' in outcome) {
      rows.push(...outcome.rows)
      continue
    }
    failed = true
    console.error(`benchmark group ${group.name} failed:\n${outcome.error}`)
    rows.push(failureRow(group, outcome.error))
  }
  printTable(rows)
  // Never a failure on speed; a group that could not run is one.
  if (failed) process.exitCode = 1
}

await main(process.argv.slice(2))
