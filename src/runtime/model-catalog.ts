/**
 * The provider/model pairs rudder knows, for `rudder models` and front ends' pickers: the
 * config's `providers.<name>.models` and the built-in table, each with whether a key for its
 * provider is there. Nothing is sent anywhere: a key is reported set or missing, never tried.
 */
import { KNOWN_MODELS } from '../providers/known-models.js'
import { type ConfigLocation, loadConfig } from './config.js'
import { BUILT_IN_PROVIDERS } from './config-providers.js'

export type CatalogModel = {
  /** `provider/model`. */
  readonly model: string
  readonly contextWindow: number
  readonly maxOutputTokens: number
  /** `set (OPENAI_API_KEY)`, `in config`, `not needed`, `missing (set OPENAI_API_KEY)`. */
  readonly key: string
  readonly hasKey: boolean
}

/** Configured models first (they may override the table), then the built-in ones. */
export function modelCatalog(location: ConfigLocation): CatalogModel[] {
  const configured = loadConfig(location).config.providers ?? {}
  const rows: CatalogModel[] = []
  const seen = new Set<string>()
  const add = (
    provider: string,
    model: string,
    limits: { readonly contextWindow: number; readonly maxOutputTokens: number },
  ) => {
    const spec = `${provider}/${model}`
    if (seen.has(spec)) return
    seen.add(spec)
    rows.push({
      model: spec,
      contextWindow: limits.contextWindow,
      maxOutputTokens: limits.maxOutputTokens,
      ...keyState(provider, configured[provider], location.env),
    })
  }
  for (const [provider, entry] of Object.entries(configured))
    for (const [model, limits] of Object.entries(entry.models ?? {})) add(provider, model, limits)
  for (const known of KNOWN_MODELS) add(known.provider, known.model, known)
  return rows
}

function keyState(
  provider: string,
  entry:
    | { readonly apiKey?: string | undefined; readonly apiKeyEnv?: string | undefined }
    | undefined,
  env: ConfigLocation['env'],
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
