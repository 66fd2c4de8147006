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
rows.push(...coreBenchmarks({ full }))
rows.push(...(await agentLoopBenchmarks()))
rows.push(...startupBenchmarks())
rows.push(...(await storeBenchmarks({ full })))
rows.push(...(await resumeBenchmarks({ full })))
rows.push(...(await checkpointBenchmarks({ full })))
rows.push(...(await postgresBenchmarks({ full })))
rows.push(...(await acpBenchmarks()))
rows.push(...(await webBenchmarks()))
rows.push(...(await tuiBenchmarks()))
printTable(rows)
