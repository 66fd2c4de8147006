/**
 * From configuration to a provider: `resolveProvider()` reads the config files and the
 * environment, picks the model (`--model provider/model`, else the config's `model`), and builds
 * the adapter with its base URL, key and parameters. The CLI calls it once at startup.
 */
import { ConfigError, type JsonObject } from '../core/index.js'
import { anthropic } from '../providers/anthropic/index.js'
import { isHttpUrl } from '../providers/base-url.js'
import { findKnownModel, type KnownModel } from '../providers/known-models.js'
import { openaiCompatible } from '../providers/openai-compatible/index.js'
import type { Provider } from '../providers/provider.js'
import { type ConfigLocation, type Environment, type LoadedConfig, loadConfig } from './config.js'
import { limitsOf, type NetworkOverrides } from './config-network.js'
import {
  BUILT_IN_PROVIDER_NAMES,
  BUILT_IN_PROVIDERS,
  type BuiltInProvider,
  NO_KEY,
} from './config-providers.js'
import { MODEL_SPEC, type ProviderConfig } from './config-schema.js'

export type ResolveProviderOptions = ConfigLocation &
  Pick<NetworkOverrides, 'timeoutMs' | 'idleTimeoutMs'> & {
    /** `provider/model` from the command line (`--model`); overrides the config files. */
    readonly model?: string
  }

export type ResolvedProvider = {
  readonly provider: Provider
  /** The provider's name in `provider/model` (`deepseek`). */
  readonly providerName: string
  /** The model id sent to the API (`deepseek-chat`). */
  readonly model: string
  /** Where requests go (for display: "deepseek/deepseek-chat at https://api.deepseek.com"). */
  readonly baseURL: string
  /** What chose `baseURL`: a config file, a variable (`DEEPSEEK_BASE_URL`) or rudder's default. */
  readonly baseURLSource: string
  /** Its context window and output limit, when known (config `models`, else the built-in table). */
  readonly knownModel?: KnownModel
  /** `providers.<name>.params` from the config: pass them to the agent so they are logged. */
  readonly params: JsonObject
  /** The loaded configuration, for other settings. */
  readonly config: LoadedConfig
}

/** A `provider/model` string split in two. */
export type ModelSpec = { readonly provider: string; readonly model: string }

/**
 * Parses `provider/model`; the model part may contain `/` (`vllm/Qwen/Qwen3-8B`). `source` names
 * where the string came from (`--model`, a file) for the error. Throws `ConfigError`.
 */
export function parseModelSpec(spec: string, source: string): ModelSpec {
  if (!MODEL_SPEC.test(spec)) {
    const known = findKnownModel(spec)
    const hint = known
      ? `did you mean "${known.provider}/${known.model}"?`
      : `for example "deepseek/deepseek-chat", "openai/gpt-4.1", "anthropic/claude-sonnet-5-5", "ollama/qwen3:8b"`
    throw new ConfigError(
      `${source}: model ${JSON.stringify(spec)} must be written "provider/model"; ${hint}`,
    )
  }
  const slash = spec.indexOf('/')
  return { provider: spec.slice(0, slash), model: spec.slice(slash + 1) }
}

/**
 * Builds the provider the configuration asks for.
 *
 * Precedence: the model from `options.model`, else the project file, else the user file, else
 * (when exactly the key of one well-known provider is set) that provider's default model. For
 * each provider setting, the config files win over the environment, which wins over built-in
 * defaults: `baseURL` > `DEEPSEEK_BASE_URL` / `OPENAI_BASE_URL` / … > the public endpoint;
 * `apiKey` > the variable named by `apiKeyEnv` > `DEEPSEEK_API_KEY` / `OPENAI_API_KEY` /
 * `ANTHROPIC_API_KEY` / `VLLM_API_KEY`.
 *
 * Throws `ConfigError` (naming the file or variable, the key and the fix) for a malformed file,
 * an unknown provider, a missing key, or a base URL that is not http(s).
 */
export function resolveProvider(options: ResolveProviderOptions): ResolvedProvider {
  const config = loadConfig(options)
  const { spec, source } = chooseModel(options, config)
  const { provider: providerName, model } = parseModelSpec(spec, source)
  const entry: ProviderConfig = config.config.providers?.[providerName] ?? {}
  const builtIn = BUILT_IN_PROVIDERS[providerName]
  const settingAt = (key: string) => `providers.${providerName}.${key}`
  const fileOf = (key: string) =>
    config.sourceOf(settingAt(key)) ??
    config.sourceOf(`providers.${providerName}`) ??
    config.userFile

  if (!builtIn && config.config.providers?.[providerName] === undefined)
    throw new ConfigError(
      `${source}: unknown provider "${providerName}" in "${spec}". Use one of ${BUILT_IN_PROVIDER_NAMES.join(', ')}, or define it in ${config.userFile} under "providers": {"${providerName}": {"api": "openai-compatible", "baseURL": "http://…/v1"}}`,
    )
  const api = entry.api ?? builtIn?.api
  if (api === undefined)
    throw new ConfigError(
      `${fileOf('api')}: ${settingAt('api')} is missing: rudder does not know the provider "${providerName}". Set "api" to "openai-compatible" or "anthropic".`,
    )
  const baseURL = chooseBaseURL(options, entry, builtIn)
  if (baseURL === undefined)
    throw new ConfigError(
      `${fileOf('baseURL')}: ${settingAt('baseURL')} is missing: say where the "${providerName}" server is, e.g. "baseURL": "http://localhost:8000/v1".`,
    )
  const baseURLSource = sourceOfBaseURL(baseURL, entry, builtIn, options.env, () =>
    fileOf('baseURL'),
  )
  const apiKey = chooseApiKey(options, entry, builtIn, { providerName, spec, config, fileOf })
  const knownModel = knownModelOf(entry, providerName, builtIn, model)
  // Where requests go, what chose it (for failure messages), and the limits on waiting.
  const connection = { baseURL, baseURLSource, ...limitsOf(entry, options) }

  const provider =
    api === 'anthropic'
      ? anthropic({
          id: providerName,
          model,
          ...connection,
          apiKey: apiKey ?? NO_KEY,
          ...(knownModel ? { maxTokens: knownModel.maxOutputTokens } : {}),
        })
      : openaiCompatible({
          id: providerName,
          model,
          ...connection,
          apiKey: apiKey ?? NO_KEY,
          ...(builtIn?.sendReasoning === undefined ? {} : { sendReasoning: builtIn.sendReasoning }),
        })
  return {
    provider,
    providerName,
    model,
    baseURL,
    baseURLSource,
    ...(knownModel ? { knownModel } : {}),
    params: (entry.params ?? {}) as JsonObject,
    config,
  }
}

function chooseModel(
  options: ResolveProviderOptions,
  config: LoadedConfig,
): { spec: string; source: string } {
  if (options.model !== undefined) return { spec: options.model, source: '--model' }
  const configured = config.config.model
  if (configured !== undefined)
    return { spec: configured, source: config.sourceOf('model') ?? config.userFile }
  const withKeys = BUILT_IN_PROVIDER_NAMES.filter((name) => {
    const variable = BUILT_IN_PROVIDERS[name]?.apiKeyEnv
    return BUILT_IN_PROVIDERS[name]?.defaultModel && variable && present(options.env[variable])
  })
  const only = withKeys.length === 1 ? withKeys[0] : undefined
  const defaultModel = only === undefined ? undefined : BUILT_IN_PROVIDERS[only]?.defaultModel
  if (only !== undefined && defaultModel !== undefined)
    return {
      spec: `${only}/${defaultModel}`,
      source: `the ${BUILT_IN_PROVIDERS[only]?.apiKeyEnv} default`,
    }
  const why =
    withKeys.length > 1
      ? `keys for ${withKeys.join(' and ')} are set, so rudder will not guess`
      : 'none is configured'
  throw new ConfigError(
    `no model selected (${why}). Pass --model provider/model (e.g. --model deepseek/deepseek-chat), or add "model": "deepseek/deepseek-chat" to ${config.userFile} or to ${config.projectFile}.`,
  )
}

function chooseBaseURL(
  options: ResolveProviderOptions,
  entry: ProviderConfig,
  builtIn: BuiltInProvider | undefined,
): string | undefined {
  if (entry.baseURL !== undefined) return entry.baseURL
  const variable = builtIn?.baseURLEnv
  const fromEnv = variable === undefined ? undefined : options.env[variable]
  if (variable !== undefined && present(fromEnv)) {
    if (!isHttpUrl(fromEnv))
      throw new ConfigError(
        `environment variable ${variable} is ${JSON.stringify(fromEnv)}, which is not an http(s) URL. Set it to the full address (e.g. ${builtIn?.baseURL}), or unset it.`,
      )
    return fromEnv
  }
  return builtIn?.baseURL
}

/**
 * What chose `baseURL`, for messages such as "cannot reach http://… (base URL from
 * OPENAI_BASE_URL)": the config file that set it, the variable, or rudder's default.
 */
function sourceOfBaseURL(
  baseURL: string,
  entry: ProviderConfig,
  builtIn: BuiltInProvider | undefined,
  env: Environment,
  file: () => string,
): string {
  if (entry.baseURL === baseURL) return file()
  const variable = builtIn?.baseURLEnv
  if (variable !== undefined && env[variable] === baseURL) return variable
  return "rudder's default"
}

function chooseApiKey(
  options: ResolveProviderOptions,
  entry: ProviderConfig,
  builtIn: BuiltInProvider | undefined,
  context: {
    providerName: string
    spec: string
    config: LoadedConfig
    fileOf: (key: string) => string
  },
): string | undefined {
  const { providerName, spec, config, fileOf } = context
  if (entry.apiKey !== undefined) return entry.apiKey
  if (entry.apiKeyEnv !== undefined) {
    const value = options.env[entry.apiKeyEnv]
    if (present(value)) return value
    throw new ConfigError(
      `${fileOf('apiKeyEnv')}: providers.${providerName}.apiKeyEnv names ${entry.apiKeyEnv}, which is not set. Set it (export ${entry.apiKeyEnv}=…) or change apiKeyEnv.`,
    )
  }
  const variable = builtIn?.apiKeyEnv
  const fromEnv = variable === undefined ? undefined : options.env[variable]
  if (present(fromEnv)) return fromEnv
  const needsKey = builtIn?.needsKey ?? entry.api === 'anthropic'
  if (!needsKey) return undefined
  const setVariable = variable ? `set ${variable} (export ${variable}=…), or ` : ''
  throw new ConfigError(
    `no API key for ${providerName} (model ${spec}): ${setVariable}add "apiKeyEnv": "<VARIABLE>" (or "apiKey") under "providers": {"${providerName}": …} in ${config.userFile}.`,
  )
}

function knownModelOf(
  entry: ProviderConfig,
  providerName: string,
  builtIn: BuiltInProvider | undefined,
  model: string,
): KnownModel | undefined {
  const configured = entry.models?.[model]
  if (configured) return { provider: providerName, model, ...configured }
  // A provider of one's own (a proxy, say) may serve a known model under its id.
  return builtIn ? findKnownModel(model, providerName) : findKnownModel(model)
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== ''
}
