/**
 * `rudder models`: the provider/model pairs rudder knows (the built-in table and the config's
 * `providers.<name>.models`), each with whether a key for its provider is there. Nothing is
 * sent anywhere: a key is reported set or missing, never checked against the server.
 */
import { KNOWN_MODELS } from '../../providers/known-models.js'
import { loadConfig } from '../../runtime/config.js'
import { BUILT_IN_PROVIDERS } from '../../runtime/config-providers.js'
import type { CliIo } from './io.js'

type ModelRow = {
  readonly model: string
  readonly contextWindow: number
  readonly maxOutputTokens: number
  /** `set (OPENAI_API_KEY)`, `missing (set OPENAI_API_KEY)`, `in config`, `not needed`. */
  readonly key: string
  readonly hasKey: boolean
}

export function listModels(
  command: { readonly cwd: string; readonly json: boolean },
  io: CliIo,
): number {
  const loaded = loadConfig({ cwd: command.cwd, env: io.env, home: io.home })
  const configured = loaded.config.providers ?? {}
  const rows: ModelRow[] = []
  const seen = new Set<string>()
  const add = (
    provider: string,
    model: string,
    limits: { contextWindow: number; maxOutputTokens: number },
  ) => {
    const spec = `${provider}/${model}`
    if (seen.has(spec)) return
    seen.add(spec)
    rows.push({
      model: spec,
      contextWindow: limits.contextWindow,
      maxOutputTokens: limits.maxOutputTokens,
      ...keyState(provider, configured[provider], io.env),
    })
  }
  for (const [provider, entry] of Object.entries(configured))
    for (const [model, limits] of Object.entries(entry.models ?? {})) add(provider, model, limits)
  for (const known of KNOWN_MODELS) add(known.provider, known.model, known)
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

function keyState(
  provider: string,
  entry:
    | { readonly apiKey?: string | undefined; readonly apiKeyEnv?: string | undefined }
    | undefined,
  env: CliIo['env'],
): { key: string; hasKey: boolean } {
  if (entry?.apiKey !== undefined) return { key: 'in config', hasKey: true }
  const builtIn = BUILT_IN_PROVIDERS[provider]
  const variable = entry?.apiKeyEnv ?? builtIn?.apiKeyEnv
  if (variable !== undefined && (env[variable] ?? '') !== '')
    return { key: `set (${variable})`, hasKey: true }
  if (builtIn !== undefined && !builtIn.needsKey) return { key: 'not needed', hasKey: true }
  return {
    key:
      variable === undefined
        ? 'missing (add apiKeyEnv to its config)'
        : `missing (set ${variable})`,
    hasKey: false,
  }
}
