/**
 * `npm run bench`: runs every benchmark and prints figures beside their floors and ratios.
 * It never fails on speed. `npm run bench -- --full` adds the largest sizes.
 */
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

const full = process.argv.includes('--full')
const rows: Row[] = []
// The agent loop first, in a fresh heap: measured after the core benches (whose million-message
// sessions grew the heap), its hand-loop floor took twice as long (6.7 µs a step against 3.4)
// while the agent's own figure did not move, and the ratio read 2.4× instead of 4.7×.
rows.push(...(await agentLoopBenchmarks()))
rows.push(...coreBenchmarks({ full }))
rows.push(...startupBenchmarks())
rows.push(...(await storeBenchmarks({ full })))
rows.push(...(await resumeBenchmarks({ full })))
rows.push(...(await checkpointBenchmarks({ full })))
rows.push(...(await postgresBenchmarks({ full })))
rows.push(...(await acpBenchmarks()))
rows.push(...(await webBenchmarks()))
rows.push(...(await tuiBenchmarks()))
printTable(rows)
