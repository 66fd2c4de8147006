/** `rudder models`: the model catalog (src/runtime/model-catalog.ts) as a table or JSON lines. */
import { modelCatalog } from '../../runtime/model-catalog.js'
import type { CliIo } from './io.js'

export function listModels(
  command: { readonly cwd: string; readonly json: boolean },
  io: CliIo,
): number {
  const rows = modelCatalog({ cwd: command.cwd, env: io.env, home: io.home })
  if (command.json) {
    for (const row of rows) io.stdout.write(`${JSON.stringify(row)}\n`)
    return 0
  }
  const width = Math.max(...rows.map((row) => row.model.length), 'MODEL'.length)
  const lines = [`${'MODEL'.padEnd(width)}  ${'CONTEXT'.padStart(9)}  KEY`]
  for (const row of rows)
    lines.push(`${row.model.padEnd(width)}  ${String(row.contextWindow).padStart(9)}  ${row.key}`)
  io.stdout.write(
    `${lines.join('\n')}\nOllama and vLLM serve any model they have: --model ollama/<name>, --model vllm/<name>.\n`,
  )
  return 0
}
