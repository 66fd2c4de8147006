/**
 * Session modes and config options: the approval presets (`ask`, `auto-edit`, `yolo`) as ACP
 * modes and as a `mode` config option, and the model as a `model` config option. Changing the
 * model goes through `runtime.setModel`, so the next step logs a new `request/header`.
 */
import type * as acp from '@agentclientprotocol/sdk/unstable'
import { findKnownModel, KNOWN_MODELS } from '../../index.js'
import { APPROVAL_MODES, type ApprovalMode } from '../../runtime/approval-control.js'
import type { SessionRuntime } from '../../runtime/host.js'
import { invalidParams } from './errors.js'

/** The modes of a session, for `session/new`, `load`, `resume` and `fork` responses. */
export function modeState(runtime: SessionRuntime): acp.SessionModeState {
  return {
    currentModeId: runtime.approval.mode,
    availableModes: APPROVAL_MODES.map((mode) => ({
      id: mode.id,
      name: mode.name,
      description: mode.description,
    })),
  }
}

/** The config options of a session: its approval mode and its model. */
export function configOptions(runtime: SessionRuntime): acp.SessionConfigOption[] {
  return [
    {
      id: 'mode',
      name: 'Approval',
      category: 'mode',
      type: 'select',
      currentValue: runtime.approval.mode,
      options: APPROVAL_MODES.map((mode) => ({
        value: mode.id,
        name: mode.name,
        description: mode.description,
      })),
    },
    {
      id: 'model',
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: runtime.label,
      options: modelChoices(runtime).map((label) => ({ value: label, name: label })),
    },
  ]
}

/** Sets the approval mode; an unknown mode is -32602 naming the modes there are. */
export function setMode(runtime: SessionRuntime, modeId: string): void {
  if (!APPROVAL_MODES.some((mode) => mode.id === modeId))
    throw invalidParams(
      `unknown mode ${JSON.stringify(modeId)}; the modes are ${APPROVAL_MODES.map((mode) => mode.id).join(', ')}`,
    )
  runtime.approval.setMode(modeId as ApprovalMode)
}

/**
 * Switches the model from the next step. A model of the current provider is passed by its bare
 * name, so the provider (a scripted script, a configured client) carries on; another provider
 * is resolved from config. A model rudder cannot use is -32602 with the configuration's reason.
 */
export async function setModel(runtime: SessionRuntime, value: string): Promise<void> {
  const current = providerOf(runtime.label)
  const slash = value.indexOf('/')
  const spec = slash > 0 && value.slice(0, slash) === current ? value.slice(slash + 1) : value
  if (spec.trim() === '') throw invalidParams('the model is empty; give provider/model')
  try {
    await runtime.setModel(spec)
  } catch (error) {
    throw invalidParams(
      `cannot switch to ${JSON.stringify(value)}: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

/** Sets one config option by id; returns the options as they now are. */
export async function setConfigOption(
  runtime: SessionRuntime,
  configId: string,
  value: unknown,
): Promise<acp.SessionConfigOption[]> {
  if (typeof value !== 'string')
    throw invalidParams(`config option ${JSON.stringify(configId)} takes a string value`)
  switch (configId) {
    case 'mode':
      setMode(runtime, value)
      break
    case 'model':
      await setModel(runtime, value)
      break
    default:
      throw invalidParams(
        `unknown config option ${JSON.stringify(configId)}; there are mode and model`,
      )
  }
  return configOptions(runtime)
}

/**
 * The context window of the session's current model, from the built-in table or the config's
 * `providers.<name>.models`; undefined when neither knows it.
 */
export function contextWindowOf(runtime: SessionRuntime): number | undefined {
  const provider = providerOf(runtime.label)
  const model = runtime.label.slice(provider.length + 1)
  const configured = runtime.config.config.providers?.[provider]?.models?.[model]
  return configured?.contextWindow ?? findKnownModel(model, provider)?.contextWindow
}

/** The current model first, then the configured default and the models known for its provider. */
function modelChoices(runtime: SessionRuntime): string[] {
  const provider = providerOf(runtime.label)
  const choices = new Set<string>([runtime.label])
  const configured = runtime.config.config.model
  if (configured !== undefined) choices.add(configured)
  for (const model of Object.keys(runtime.config.config.providers?.[provider]?.models ?? {}))
    choices.add(`${provider}/${model}`)
  for (const known of KNOWN_MODELS)
    if (known.provider === provider) choices.add(`${known.provider}/${known.model}`)
  return [...choices]
}

/** The provider part of a `provider/model` label. */
function providerOf(label: string): string {
  return label.slice(0, Math.max(0, label.indexOf('/')))
}
