/**
 * The shape of rudder's config files (`~/.rudder/config.json`, `.rudder/config.json`), as a zod
 * schema: the trust boundary for what a person wrote by hand. Every object is strict, so a
 * misspelled key is an error that names it rather than a setting silently ignored.
 *
 * To add a top-level key (`store`, `approval`, …): add it to `CONFIG_SHAPE` below. Loading,
 * merging (the project file wins key by key) and error messages follow without other changes.
 * A key that could send the user's keys elsewhere or run something unasked (hooks, MCP servers)
 * also goes in `TRUSTED_ONLY_KEYS`, so an untrusted project cannot set it.
 */
import { isAbsolute } from 'node:path'
import type { z } from 'zod'
import { isHttpUrl } from '../providers/base-url.js'
import { getApprovalPolicySchema } from '../tools/approval-policy.js'
import { type Zod, zodNow } from '../tools/lazy-zod.js'
import { getNetworkSchemas } from './config-network.js'

/** `provider/model`, e.g. `deepseek/deepseek-chat`; the model part may itself contain `/`. */
export const MODEL_SPEC = /^[a-z0-9][a-z0-9._-]*\/\S+$/

/**
 * The config schemas, built on first use rather than at import (bench B10): a run without
 * config files never builds them.
 */
function buildConfigSchemas(z: Zod = zodNow()) {
  // Parameter names the adapters build themselves; a config may not set them.
  const reserved = z
    .never({ error: 'is set by rudder for every request and cannot be a parameter; remove it' })
    .optional()

  const paramsSchema = z
    .object({
      temperature: z.number().min(0).optional(),
      maxTokens: z.number().int().positive().optional(),
      topP: z.number().gt(0).max(1).optional(),
      model: reserved,
      messages: reserved,
      system: reserved,
      stream: reserved,
      tools: reserved,
    })
    // Other parameters go to the request body as written (`top_k`, `thinking`, `reasoning_effort`).
    .catchall(z.json())

  const knownModelSchema = z.strictObject({
    contextWindow: z.number().int().positive(),
    maxOutputTokens: z.number().int().positive(),
  })

  /** The keys of one entry under `providers`. */
  const PROVIDER_SHAPE = {
    /** Which wire protocol: needed for a provider name rudder does not know. */
    api: z.enum(['openai-compatible', 'anthropic']).optional(),
    baseURL: z
      .string()
      .refine(isHttpUrl, 'must be an http(s) URL, e.g. "http://localhost:11434/v1"')
      .optional(),
    /** The key itself. Prefer `apiKeyEnv` in files that are shared or committed. */
    apiKey: z.string().min(1, 'must not be empty').optional(),
    /** The environment variable that holds the key. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name, e.g. "MY_API_KEY"')
      .optional(),
    /** Request parameters for every request to this provider. */
    params: paramsSchema.optional(),
    /** Context windows and output limits of models the built-in table does not know. */
    models: z.record(z.string().min(1), knownModelSchema).optional(),
    /** `timeoutMs`, `idleTimeoutMs`, `maxResponseChars` (see config-network.ts). */
    ...getNetworkSchemas().providerLimitsShape,
  }

  const providerSchema = z.strictObject(PROVIDER_SHAPE)

  /** The top-level keys of a config file. */
  const CONFIG_SHAPE = {
    /** The default model, `provider/model`. */
    model: z
      .string()
      .regex(MODEL_SPEC, 'must be "provider/model", e.g. "deepseek/deepseek-chat"')
      .optional(),
    /** Settings per provider name (`openai`, `deepseek`, `anthropic`, `ollama`, `vllm`, or your own). */
    providers: z
      .record(
        z
          .string()
          .regex(
            /^[a-z0-9][a-z0-9._-]*$/,
            'provider names are lowercase letters, digits, ".", "_", "-"',
          ),
        providerSchema,
      )
      .optional(),
    /** Where sessions live: `sqlite:<path>`, `jsonl:<dir>`, `postgres://…` or `memory:` (default `sqlite:~/.rudder/sessions.db`). */
    store: z
      .string()
      .regex(
        /^(sqlite:|jsonl:|memory:|postgres:|postgresql:)/,
        'must be a store URL: "sqlite:<path>", "jsonl:<dir>", "postgres://user@host:port/database" or "memory:"',
      )
      .optional(),
    /** Which tool calls run, ask, or are refused (see the approval policy of src/tools). */
    approval: getApprovalPolicySchema().optional(),
    /** The system prompt, replacing rudder's default. */
    system: z.string().optional(),
    /** How the agent retries failed requests: `maxRetries`, `baseDelayMs`, `maxDelayMs`. */
    retry: getNetworkSchemas().retry.optional(),
    /** MCP servers, name → entry in Claude Code's `.mcp.json` shape (checked by src/mcp). */
    mcpServers: z.record(z.string(), z.unknown()).optional(),
    /**
     * Command hooks in Claude Code's shape ({ "PreToolUse": [{ "matcher", "hooks": [...] }] }).
     * Checked by the hook bridges (src/bridges), which report problems with file and key.
     */
    hooks: z.record(z.string(), z.unknown()).optional(),
    /**
     * Project directories whose `.rudder/config.json` applies in full (absolute real paths,
     * written by `rudder trust`). Read from the user file only.
     */
    trustedDirectories: z
      .array(z.string().refine(isAbsolute, 'must be an absolute path, e.g. "/home/me/project"'))
      .optional(),
    /** Settings of the built-in tools. */
    tools: z
      .strictObject({
        /**
         * `write` and `edit` replace files that have more than one hard link (their other names
         * keep the old content) instead of refusing them.
         */
        allowHardLinks: z.boolean().optional(),
      })
      .optional(),
  }

  const configSchema = z.strictObject(CONFIG_SHAPE)
  return { configSchema, providerSchema, knownModelSchema, CONFIG_SHAPE, PROVIDER_SHAPE }
}

let configSchemas: ReturnType<typeof buildConfigSchemas> | undefined

/** The config schemas, built once (a pure construction, so sharing it is safe). */
export function getConfigSchemas(): ReturnType<typeof buildConfigSchemas> {
  configSchemas ??= buildConfigSchemas()
  return configSchemas
}

/**
 * Keys a project's config may set only once the user trusts its directory (`rudder trust`):
 * where requests and the user's keys go, where sessions are stored, and anything that runs
 * commands (hooks, MCP servers). `*` stands for one key (a provider name). Approval is handled
 * apart: an untrusted project may only tighten it. Front ends report what was set aside.
 */
export const TRUSTED_ONLY_KEYS: readonly string[] = [
  'providers.*.baseURL',
  'providers.*.apiKey',
  'providers.*.apiKeyEnv',
  'providers.*.api',
  'store',
  'hooks',
  'mcpServers',
]

/** Keys only the user's own file may set, trusted project or not. */
export const USER_ONLY_KEYS: readonly string[] = ['trustedDirectories']

/** One config file, or several merged. */
export type RudderConfig = z.infer<ReturnType<typeof buildConfigSchemas>['configSchema']>
export type ProviderConfig = z.infer<ReturnType<typeof buildConfigSchemas>['providerSchema']>

/** The keys allowed at a path of the config, for "unknown key" messages. */
export function knownKeysAt(path: readonly PropertyKey[]): readonly string[] | undefined {
  const { CONFIG_SHAPE, PROVIDER_SHAPE, knownModelSchema } = getConfigSchemas()
  if (path.length === 0) return Object.keys(CONFIG_SHAPE)
  if (path.length === 1 && path[0] === 'approval') return ['default', 'tools', 'bash']
  if (path.length === 1 && path[0] === 'retry') return Object.keys(getNetworkSchemas().retry.shape)
  if (path.length === 1 && path[0] === 'tools') return ['allowHardLinks']
  if (path.length === 2 && path[0] === 'providers') return Object.keys(PROVIDER_SHAPE)
  if (path.length === 4 && path[0] === 'providers' && path[2] === 'models')
    return Object.keys(knownModelSchema.shape)
  return undefined
}
