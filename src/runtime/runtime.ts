/**
 * The composition root: from command-line choices and config files to a running agent over a
 * stored session, with the built-in tools, the approval policy and the workspace context.
 * Front ends call `openRuntime` and use the agent and session it returns.
 */
import { resolve } from 'node:path'
import { type Agent, createAgent } from '../agent/index.js'
import { ConfigError, type JsonObject, RudderError } from '../core/index.js'
import type { Provider } from '../providers/provider.js'
import { replayProvider } from '../providers/replay/index.js'
import { scriptedProviderFromFile } from '../providers/scripted/script-file.js'
import { openStore } from '../stores/index.js'
import type { SessionStore, StoredSession } from '../stores/store.js'
import { type ApprovalPolicy, DEFAULT_APPROVAL_POLICY } from '../tools/approval-policy.js'
import { builtinTools } from '../tools/builtin/index.js'
import { protectedPaths } from '../tools/protected-paths.js'
import { approvalWiring } from './approval.js'
import { type Environment, type LoadedConfig, loadConfig, rudderHome } from './config.js'
import type { RuntimeNotice } from './notices.js'
import { resolveProvider } from './provider-from-config.js'
import { installWorkspaceContext } from './workspace-context.js'

export type RuntimeOptions = {
  /** The workspace: tools are confined to it, and sessions are listed by it. */
  readonly cwd: string
  /** Where relative paths on the command line are resolved (default `cwd`). */
  readonly invocationDir?: string
  readonly env: Environment
  readonly home: string
  /** `scripted:<file.json>`, `replay:<session-id>`, or a provider name (`deepseek`). */
  readonly provider?: string
  /** `provider/model`, or a bare model name when `provider` names the provider. */
  readonly model?: string
  /** A store URL; default: the config's `store`, else `sqlite:~/.rudder/sessions.db`. */
  readonly store?: string
  readonly resume?: string
  /** Continue the newest session of this cwd. */
  readonly continueLatest?: boolean
  /** Approve every call the policy would ask about. */
  readonly yes?: boolean
  readonly system?: string
  readonly maxSteps?: number
  /** Title of a new session. */
  readonly title?: string
  /** Hears what the person running rudder should know during the run (refused protected changes). */
  readonly onNotice?: (notice: RuntimeNotice) => void
}

export type Runtime = {
  readonly config: LoadedConfig
  readonly store: SessionStore
  readonly session: StoredSession
  readonly agent: Agent
  /** `provider/model`, for display. */
  readonly label: string
  /** How many events the session held before this runtime's agent was created. */
  readonly startSeq: number
  /** Flushes and closes the agent, the session and the store. */
  close(): Promise<void>
}

/** A short, stable system prompt; the log records it in `request/header`. */
export function defaultSystemPrompt(cwd: string): string {
  return [
    `You are rudder, a coding agent working in the directory ${cwd}.`,
    'Use the tools to read, search and edit files and to run commands; paths are relative to that directory.',
    'Look before you change things, make the smallest change that solves the task, and check your work by running it.',
    'When you are done, say briefly what you changed and why.',
  ].join(' ')
}

/** Opens everything a front end needs. Throws `ConfigError` (bad flags or config) and store errors. */
export async function openRuntime(options: RuntimeOptions): Promise<Runtime> {
  const cwd = resolve(options.cwd)
  const config = loadConfig({ cwd, env: options.env, home: options.home })
  const store = await openStore(options.store ?? config.config.store, {
    env: { HOME: options.home, ...options.env },
  })
  try {
    const { provider, model, label, params, contextWindow } = await chooseProvider(options, store)
    const session = await openSession(options, store, cwd)
    const startSeq = session.events.length
    const policy = layerPolicy(
      DEFAULT_APPROVAL_POLICY,
      config.config.approval as ApprovalPolicy | undefined,
    )
    const restrictions = config.projectRestrictions
    const guarded = protectedPaths({
      workspace: cwd,
      home: options.home,
      rudderHome: rudderHome({ cwd, env: options.env, home: options.home }),
    })
    const approval = approvalWiring({
      policies: restrictions === undefined ? [policy] : [policy, layerPolicy(policy, restrictions)],
      protectedPaths: guarded,
      yes: options.yes === true,
      userConfigFile: config.userFile,
      ...(options.onNotice === undefined ? {} : { onNotice: options.onNotice }),
    })
    const agent = createAgent({
      session,
      provider,
      model,
      system: options.system ?? config.config.system ?? defaultSystemPrompt(cwd),
      params,
      tools: builtinTools({
        workspace: cwd,
        protectedPaths: guarded,
        ...(config.config.tools?.allowHardLinks === undefined
          ? {}
          : { allowHardLinks: config.config.tools.allowHardLinks }),
      }),
      cwd,
      ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
      ...(contextWindow === undefined ? {} : { compaction: { contextWindow } }),
      hooks: { 'tool-pre': approval.toolPre },
      approve: approval.approve,
    })
    installWorkspaceContext(agent, { cwd, home: options.home, env: options.env })
    let closing: Promise<void> | undefined
    return {
      config,
      store,
      session,
      agent,
      label,
      startSeq,
      close: () => {
        closing ??= (async () => {
          await agent.dispose()
          await session.close()
          await store.close()
        })()
        return closing
      },
    }
  } catch (error) {
    await store.close()
    throw error
  }
}

/**
 * A configured policy refines the defaults rather than replacing them: its tool actions win
 * tool by tool, its bash rules come first, and its `default` (if any) replaces the default one.
 */
export function layerPolicy(
  base: ApprovalPolicy,
  configured: ApprovalPolicy | undefined,
): ApprovalPolicy {
  if (!configured) return base
  const fallback = configured.default ?? base.default
  return {
    ...(fallback === undefined ? {} : { default: fallback }),
    tools: { ...base.tools, ...configured.tools },
    bash: [...(configured.bash ?? []), ...(base.bash ?? [])],
  }
}

type Chosen = {
  provider: Provider
  model: string
  label: string
  params: JsonObject
  contextWindow?: number
}

async function chooseProvider(options: RuntimeOptions, store: SessionStore): Promise<Chosen> {
  const spec = options.provider
  if (spec?.startsWith('scripted:')) {
    const file = resolve(options.invocationDir ?? options.cwd, spec.slice('scripted:'.length))
    const provider = scriptedProviderFromFile(file)
    const model = options.model ?? provider.model ?? 'scripted'
    return { provider, model, label: `scripted/${model}`, params: {} }
  }
  if (spec?.startsWith('replay:')) {
    const id = spec.slice('replay:'.length)
    const { events } = await store.read(id)
    const provider = replayProvider(events)
    const model = options.model ?? provider.model ?? 'replay'
    return { provider, model, label: `replay/${id}`, params: {} }
  }
  let model = options.model
  if (spec !== undefined) {
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(spec)) {
      throw new ConfigError(
        `--provider ${JSON.stringify(spec)}: expected a provider name (deepseek, openai, anthropic, ollama, vllm), scripted:<file.json> or replay:<session-id>`,
      )
    }
    if (model === undefined) model = spec
    else if (!model.startsWith(`${spec}/`)) model = `${spec}/${model}`
  }
  const resolved = resolveProvider({
    cwd: options.cwd,
    env: options.env,
    home: options.home,
    ...(model === undefined ? {} : { model }),
  })
  const contextWindow = resolved.knownModel?.contextWindow
  return {
    provider: resolved.provider,
    model: resolved.model,
    label: `${resolved.providerName}/${resolved.model}`,
    params: resolved.params,
    ...(contextWindow === undefined ? {} : { contextWindow }),
  }
}

async function openSession(
  options: RuntimeOptions,
  store: SessionStore,
  cwd: string,
): Promise<StoredSession> {
  if (options.resume !== undefined) return store.open(options.resume)
  if (options.continueLatest) {
    const [latest] = await store.list({ cwd, limit: 1 })
    if (!latest)
      throw new RudderError(
        'SESSION_NOT_FOUND',
        `there is no session for ${cwd} to continue; start one with rudder "<task>" (or pass --resume <id>)`,
      )
    return store.open(latest.id)
  }
  return store.create({ cwd, ...(options.title === undefined ? {} : { title: options.title }) })
}
