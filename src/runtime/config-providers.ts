/**
 * The providers rudder knows by name: which API each speaks, where it lives, and which
 * environment variables configure it. A config file can override every field, and can define
 * providers of its own (with `api` and `baseURL`).
 */

export type BuiltInProvider = {
  readonly api: 'openai-compatible' | 'anthropic'
  readonly baseURL: string
  /** The variable that replaces `baseURL`, if any. */
  readonly baseURLEnv?: string
  /** The variable that holds the key. */
  readonly apiKeyEnv?: string
  /** Whether requests fail without a key (a local server needs none). */
  readonly needsKey: boolean
  /** Send thinking back as `reasoning_content` (DeepSeek's thinking mode needs it). */
  readonly sendReasoning?: boolean
  /** A model to pick when only this provider's key is set and no model is configured. */
  readonly defaultModel?: string
}

export const BUILT_IN_PROVIDERS: Readonly<Record<string, BuiltInProvider>> = {
  deepseek: {
    api: 'openai-compatible',
    baseURL: 'https://api.deepseek.com',
    baseURLEnv: 'DEEPSEEK_BASE_URL',
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    needsKey: true,
    sendReasoning: true,
    defaultModel: 'deepseek-chat',
  },
  anthropic: {
    api: 'anthropic',
    baseURL: 'https://api.anthropic.com',
    baseURLEnv: 'ANTHROPIC_BASE_URL',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    needsKey: true,
    defaultModel: 'claude-sonnet-5-5',
  },
  openai: {
    api: 'openai-compatible',
    baseURL: 'https://api.openai.com/v1',
    baseURLEnv: 'OPENAI_BASE_URL',
    apiKeyEnv: 'OPENAI_API_KEY',
    needsKey: true,
    defaultModel: 'gpt-4.1',
  },
  ollama: {
    api: 'openai-compatible',
    baseURL: 'http://localhost:11434/v1',
    baseURLEnv: 'OLLAMA_BASE_URL',
    needsKey: false,
  },
  vllm: {
    api: 'openai-compatible',
    baseURL: 'http://localhost:8000/v1',
    baseURLEnv: 'VLLM_BASE_URL',
    apiKeyEnv: 'VLLM_API_KEY',
    needsKey: false,
  },
}

/** The built-in provider names, in the order messages list them. */
export const BUILT_IN_PROVIDER_NAMES: readonly string[] = Object.keys(BUILT_IN_PROVIDERS)

/**
 * Sent to a server that checks no key: the SDK insists on one, and a local Ollama or vLLM
 * ignores the header.
 */
export const NO_KEY = 'no-key'
