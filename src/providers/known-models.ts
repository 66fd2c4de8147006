/**
 * A small table of models rudder knows by name: their context window and output limit. Used for
 * defaults (Anthropic's required `max_tokens`) and by the agent's compaction threshold. Figures
 * are the providers' published limits when this table was written; a config file can override
 * or extend them (`providers.<name>.models`).
 */

/** What rudder knows about one model. */
export type KnownModel = {
  /** The provider's name in `provider/model` strings (`openai`, `deepseek`, `anthropic`, …). */
  readonly provider: string
  /** The model id sent to the API. */
  readonly model: string
  /** Prompt plus output tokens the model accepts. */
  readonly contextWindow: number
  /** The most output tokens one response may have. */
  readonly maxOutputTokens: number
}

const TABLE: readonly KnownModel[] = [
  // DeepSeek: both aliases point at the current V3.x model; reasoner allows long outputs.
  { provider: 'deepseek', model: 'deepseek-chat', contextWindow: 128_000, maxOutputTokens: 8_192 },
  {
    provider: 'deepseek',
    model: 'deepseek-reasoner',
    contextWindow: 128_000,
    maxOutputTokens: 65_536,
  },
  { provider: 'openai', model: 'gpt-4.1', contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  { provider: 'openai', model: 'gpt-4.1-mini', contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  { provider: 'openai', model: 'gpt-4o', contextWindow: 128_000, maxOutputTokens: 16_384 },
  { provider: 'openai', model: 'gpt-4o-mini', contextWindow: 128_000, maxOutputTokens: 16_384 },
  { provider: 'openai', model: 'o4-mini', contextWindow: 200_000, maxOutputTokens: 100_000 },
  { provider: 'openai', model: 'gpt-5', contextWindow: 400_000, maxOutputTokens: 128_000 },
  { provider: 'openai', model: 'gpt-5-mini', contextWindow: 400_000, maxOutputTokens: 128_000 },
  // Anthropic's current line (Sonnet 5.5, Opus 5.5), then older models still served.
  {
    provider: 'anthropic',
    model: 'claude-sonnet-5-5',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-opus-5-5',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-5',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-opus-4-5',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-opus-4-1',
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
  },
]

/** Every model in the built-in table. */
export const KNOWN_MODELS: readonly KnownModel[] = Object.freeze(TABLE.map((m) => Object.freeze(m)))

/**
 * The known model with this id. `provider` narrows the search; without it the first model of
 * that id wins. Dated snapshots (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`) match their
 * alias.
 */
export function findKnownModel(model: string, provider?: string): KnownModel | undefined {
  const candidates =
    provider === undefined ? KNOWN_MODELS : KNOWN_MODELS.filter((m) => m.provider === provider)
  const exact = candidates.find((m) => m.model === model)
  if (exact) return exact
  const alias = model.replace(/-\d{4}-?\d{2}-?\d{2}$/, '')
  return alias === model ? undefined : candidates.find((m) => m.model === alias)
}
