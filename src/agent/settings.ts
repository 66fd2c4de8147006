/**
 * The agent's settings as callers give them and as a step uses them, and the checks of the
 * numbers `createAgent` takes. Caller mistakes throw `INVALID_INPUT` before anything runs.
 */
import { RudderError } from '../core/index.js'
import type { ModelParams, Provider } from '../providers/provider.js'
import { defaultSpillDirectory } from '../tools/output-spill.js'
import type { Tool } from '../tools/tool.js'
import type { AgentOptions } from './agent-api.js'
import { refuseWithoutApprover } from './approval.js'
import type { StepSettings } from './turn-context.js'

/** What a step's request is made with (see `Agent.configure`). */
export type AgentSettings = {
  readonly provider: Provider
  readonly model: string
  readonly system: string
  readonly params: ModelParams
  readonly tools: readonly Tool[]
}
/** A change of settings; a new `provider` without a `model` uses the provider's own model. */
export type AgentSettingsChange = Partial<AgentSettings>

/** The settings in both forms: as a step uses them, and as `agent.settings` shows them. */
export type Settings = { readonly step: StepSettings; readonly public: AgentSettings }

/** Checks `settings` (a provider that streams, unique tool names) and indexes the tools. */
export function toSettings(settings: AgentSettings): Settings {
  checkProvider(settings.provider)
  const tools = new Map<string, Tool>()
  for (const tool of settings.tools) {
    if (tools.has(tool.name))
      throw new RudderError(
        'INVALID_INPUT',
        `createAgent: two tools are named ${JSON.stringify(tool.name)}; tool names must be unique`,
      )
    tools.set(tool.name, tool)
  }
  return {
    step: {
      provider: settings.provider,
      model: settings.model,
      system: settings.system,
      params: settings.params,
      tools,
      toolSpecs: [...tools.values()].map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
    },
    public: Object.freeze({ ...settings, tools: [...settings.tools] }),
  }
}

/** The settings `createAgent` starts with (throws for a provider that cannot stream or no model). */
export function initialSettings(options: AgentOptions): Settings {
  const { provider } = options
  checkProvider(provider)
  return toSettings({
    provider,
    model: options.model ?? provider.model ?? missingModel(provider),
    system: options.system ?? '',
    params: options.params ?? {},
    tools: options.tools ?? [],
  })
}

/** Applies a change; a new provider without a model brings its own model. */
export function changedSettings(current: AgentSettings, changes: AgentSettingsChange): Settings {
  const next = { ...current, ...changes }
  const model =
    changes.model ?? (changes.provider ? changes.provider.model : undefined) ?? next.model
  return toSettings({ ...next, model: model || missingModel(next.provider) })
}

export function checkProvider(provider: Provider | undefined): asserts provider is Provider {
  if (!provider || typeof provider.stream !== 'function')
    throw new RudderError(
      'INVALID_INPUT',
      'createAgent: provider must implement stream(request, signal)',
    )
}

export function missingModel(provider: Provider): never {
  throw new RudderError(
    'INVALID_INPUT',
    `createAgent: no model; pass createAgent({ model }) (provider ${provider.id} names no default)`,
  )
}

/** The limits and defaults a turn runs with, from `createAgent`'s options (checked). */
export function agentLimits(options: AgentOptions) {
  return {
    approve: options.approve ?? refuseWithoutApprover,
    maxSteps: wholeNumber(options.maxSteps ?? 100, 'maxSteps', 1),
    maxStopContinuations: wholeNumber(options.maxStopContinuations ?? 8, 'maxStopContinuations', 0),
    toolOutput: {
      limit: options.toolOutput?.limit ?? 50_000,
      dir: options.toolOutput?.dir ?? defaultSpillDirectory(),
    },
    cwd: options.cwd ?? process.cwd(),
  }
}

/** `value` if it is a whole number of at least `least`; else `INVALID_INPUT` naming the option. */
export function wholeNumber(value: number, name: string, least: number): number {
  if (!Number.isInteger(value) || value < least)
    throw new RudderError(
      'INVALID_INPUT',
      `createAgent: ${name} must be a whole number of at least ${least}, got ${value}`,
    )
  return value
}

/** How long an idle agent waits before releasing its session's history (default one minute). */
export function releaseHistoryDelay(options: AgentOptions): number {
  const value = options.releaseHistoryAfterMs ?? 60_000
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0)
    throw new RudderError(
      'INVALID_INPUT',
      `createAgent: releaseHistoryAfterMs must be a number of ms ≥ 0 (Infinity for never), got ${value}`,
    )
  return value
}
