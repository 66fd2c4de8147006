/**
 * The composition root for front ends that hold many sessions (the terminal UI's `/resume`,
 * an ACP connection, the web host): one store and the user's configuration opened once, and
 * any number of live sessions, each with its own workspace, project config, provider, agent,
 * approval control and workspace context. `openRuntime` (runtime.ts) is one host with one
 * session, for the headless CLI.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type Agent, createAgent } from '../agent/index.js'
import { type DiscoveredHooks, discoverHooks } from '../bridges/discovery.js'
import { ConfigError, type JsonObject, RudderError } from '../core/index.js'
import { createMcpManager, type McpManager } from '../mcp/manager.js'
import type { McpServerConfig } from '../mcp/server-config.js'
import type { Provider } from '../providers/provider.js'
import type { SessionStore, StoredSession } from '../stores/store.js'
import { type ApprovalPolicy, DEFAULT_APPROVAL_POLICY } from '../tools/approval-policy.js'
import { builtinTools } from '../tools/builtin/index.js'
import { protectedPaths } from '../tools/index.js'
import {
  type ApprovalControl,
  type ApprovalMode,
  type Asker,
  createApprovalControl,
} from './approval-control.js'
import { openChosenStore } from './chosen-store.js'
import { type Environment, type LoadedConfig, loadConfig, rudderHome } from './config.js'
import { type NetworkOverrides, retryOptionsOf } from './config-network.js'
import { BUILT_IN_PROVIDER_NAMES, BUILT_IN_PROVIDERS } from './config-providers.js'
import { chooseMcpServers } from './mcp-servers.js'
import { createNoticeBoard, type NoticeBoard } from './notices.js'
import { packageVersion } from './package-version.js'
import { resolveProvider } from './provider-from-config.js'
import { resolveSessionId } from './session-ids.js'
import { isDirectoryTrusted } from './trust.js'
import { installWorkspaceContext } from './workspace-context.js'

export type HostOptions = {
  /** The default workspace of new sessions, and where the host's own config is read. */
  readonly cwd: string
  /** Where relative paths on the command line are resolved (default `cwd`). */
  readonly invocationDir?: string
  readonly env: Environment
  readonly home: string
  /** A store URL; default: the config's `store`, else `sqlite:~/.rudder/sessions.db`. */
  readonly store?: string
  /** Defaults for every session (each session may override them). */
  readonly defaults?: SessionDefaults
}

/** What a session is run with unless its own options say otherwise. */
export type SessionDefaults = NetworkOverrides & {
  /** `scripted:<file.json>`, `replay:<session-id>`, or a provider name (`deepseek`). */
  readonly provider?: string
  /** `provider/model`, or a bare model name when `provider` names the provider. */
  readonly model?: string
  readonly system?: string
  readonly maxSteps?: number
  readonly approvalMode?: ApprovalMode
  /** With nobody to ask (no asker), approve what the policy asks about (`--yes`). */
  readonly approveUnattended?: boolean
  /** What the model is told about how to allow a call refused for want of an approver. */
  readonly unattendedHint?: string
}

/** Which session to run: new (the default), resumed, the newest of its cwd, or a fork. */
export type SessionChoice =
  | { readonly kind: 'new'; readonly title?: string }
  | { readonly kind: 'resume'; readonly id: string }
  | { readonly kind: 'continue' }
  | { readonly kind: 'fork'; readonly id: string; readonly atSeq?: number }

export type OpenSessionOptions = SessionDefaults & {
  /** The session's workspace (default: the host's `cwd`). Tools are confined to it. */
  readonly cwd?: string
  readonly choice?: SessionChoice
  /** Who answers approval questions; none (headless) refuses them or, with `approveUnattended`, approves. */
  readonly asker?: Asker
  /**
   * MCP servers for this session beyond the configured ones (an ACP client's `mcpServers`);
   * one with a configured server's name replaces it.
   */
  readonly mcpServers?: readonly McpServerConfig[]
}

/** One live session: its agent and everything composed around it. */
export interface SessionRuntime {
  readonly cwd: string
  readonly config: LoadedConfig
  readonly session: StoredSession
  readonly agent: Agent
  /** `provider/model` now, for display. */
  readonly label: string
  /** How many events the session held before this runtime's agent was created. */
  readonly startSeq: number
  readonly approval: ApprovalControl
  /** The session's MCP servers (their tools are the agent's, beside the built-ins). */
  readonly mcp: McpManager
  /**
   * Switches the model (`provider/model`, or a model of the current provider) from the next
   * step on; the change is logged as a new `request/header`. Throws `ConfigError` for an
   * unknown provider or a missing key, changing nothing.
   */
  setModel(spec: string): Promise<void>
  /** Disposes the agent and closes the session (the store stays open). */
  close(): Promise<void>
}

export interface Host {
  readonly cwd: string
  /** The configuration read for the host's cwd. */
  readonly config: LoadedConfig
  readonly store: SessionStore
  /** Notices for the person (never the model), from every session of this host. */
  readonly notices: NoticeBoard
  /** Opens a session and an agent over it. Throws `ConfigError` and store errors. */
  openSession(options?: OpenSessionOptions): Promise<SessionRuntime>
  /** The sessions open now, by id. */
  readonly sessions: ReadonlyMap<string, SessionRuntime>
  /** Closes every open session, then the store. */
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

export async function openHost(options: HostOptions): Promise<Host> {
  const cwd = resolve(options.cwd)
  const config = loadConfig({ cwd, env: options.env, home: options.home })
  const env = { HOME: options.home, ...options.env }
  const store = await openChosenStore(options.store, env, config.config.store)
  const notices = createNoticeBoard()
  const sessions = new Map<string, SessionRuntime>()
  let closing: Promise<void> | undefined

  const host: Host = {
    cwd,
    config,
    store,
    notices,
    sessions,
    async openSession(sessionOptions = {}) {
      if (closing)
        throw new RudderError('DISPOSED', 'this host is closing; open a new one with openHost()')
      const runtime = await openSessionRuntime({
        host: options,
        store,
        notices,
        options: { ...options.defaults, ...sessionOptions },
        cwd: resolve(cwd, sessionOptions.cwd ?? cwd),
        onClose: (id) => sessions.delete(id),
      })
      sessions.set(runtime.session.header.id, runtime)
      return runtime
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...sessions.values()].map((runtime) => runtime.close()))
        await store.close()
      })()
      return closing
    },
  }
  return host
}

type Composition = {
  readonly host: HostOptions
  readonly store: SessionStore
  readonly notices: NoticeBoard
  readonly options: OpenSessionOptions
  readonly cwd: string
  readonly onClose: (id: string) => void
}

async function openSessionRuntime(composition: Composition): Promise<SessionRuntime> {
  const { host, store, options, cwd, notices } = composition
  const location = { cwd, env: host.env, home: host.home }
  const config = loadConfig(location)
  // Hooks are read for this session's cwd; a broken hook config fails here, before anything runs.
  const hooks = discoverHooks({
    cwd,
    home: host.home,
    env: host.env,
    isProjectTrusted: isDirectoryTrusted(location, cwd),
    rudderUserFile: config.userFile,
    rudderProjectFile: config.projectFile,
  })
  const chosen = await chooseProvider(composition, options)
  const mcpChoice = chooseMcpServers(
    location,
    config,
    isDirectoryTrusted(location, config.projectDir),
  )
  const session = await openChosenSession(store, options.choice ?? { kind: 'new' }, cwd)
  const sessionId = session.header.id
  for (const notice of config.notices)
    notices.publish({ level: 'warning', source: 'rudder', sessionId, message: notice.message })
  for (const { file, names } of mcpChoice.ignored)
    notices.publish({
      level: 'warning',
      source: 'rudder',
      sessionId,
      message: `${file}: the MCP servers ${names.join(', ')} were not started because ${cwd} is not a trusted directory. If you trust this project, run: rudder trust ${cwd}`,
    })
  const extra = new Set((options.mcpServers ?? []).map((server) => server.name))
  const mcp = createMcpManager({
    servers: [
      ...mcpChoice.servers.filter((server) => !extra.has(server.name)),
      ...(options.mcpServers ?? []),
    ],
    workspace: cwd,
    env: host.env,
    logDir: join(rudderHome(location), 'logs', 'mcp'),
    clientVersion: packageVersion(),
    onNotice: ({ server, message }) =>
      notices.publish({ level: 'warning', source: `mcp:${server}`, sessionId, message }),
  })
  try {
    const startSeq = session.nextSeq
    const policy = layerPolicy(DEFAULT_APPROVAL_POLICY, config.config.approval as ApprovalPolicy)
    const restrictions = config.projectRestrictions
    const guarded = protectedPaths({
      workspace: cwd,
      home: host.home,
      rudderHome: rudderHome(location),
    })
    const approval = createApprovalControl({
      policies: restrictions === undefined ? [policy] : [policy, layerPolicy(policy, restrictions)],
      protectedPaths: guarded,
      onNotice: (message) =>
        notices.publish({ level: 'warning', source: 'rudder', sessionId, message }),
      toolDefault: (name) => mcp.toolDefault(name),
      ...optionalFields({
        mode: options.approvalMode,
        asker: options.asker,
        approveUnattended: options.approveUnattended,
        unattendedHint: options.unattendedHint,
      }),
    })
    const bridge = await hookBridgeFor(hooks, {
      cwd,
      env: host.env,
      sessionId,
      notices,
      permissionMode: () => CLAUDE_PERMISSION_MODES[approval.mode],
    })
    // SessionStart hooks may write `export` lines to CLAUDE_ENV_FILE; every bash call sources it.
    const builtins = builtinTools({
      workspace: cwd,
      protectedPaths: guarded,
      ...optionalFields({ allowHardLinks: config.config.tools?.allowHardLinks }),
      ...(bridge ? { bash: { env: { BASH_ENV: bridge.envFile } } } : {}),
    })
    const agent = createAgent({
      session,
      provider: chosen.provider,
      model: chosen.model,
      system: options.system ?? config.config.system ?? defaultSystemPrompt(cwd),
      params: chosen.params,
      tools: [...builtins, ...mcp.tools()],
      cwd,
      ...optionalFields({ maxSteps: options.maxSteps }),
      retry: retryOptionsOf(config.config.retry, options),
      ...(chosen.contextWindow === undefined
        ? {}
        : { compaction: { contextWindow: chosen.contextWindow } }),
      // The policy runs outermost, so a later hook can only narrow what it allows.
      hooks: { 'tool-pre': approval.toolPre },
      approve: bridge ? bridge.hooks.wrapApprove(approval.approve) : approval.approve,
    })
    installWorkspaceContext(agent, location)
    // MCP servers start before the first step (or at once when eager); a change of their tools
    // reaches the next step's request/header.
    const stopFollowingTools = mcp.onToolsChanged(() =>
      agent.configure({ tools: [...builtins, ...mcp.tools()] }),
    )
    agent.on('step', () => mcp.start({ everything: true }))
    void mcp.start()
    // After the approval control, so the policy stays the outermost tool-pre listener.
    const uninstallHooks = bridge?.hooks.install(agent)
    let label = chosen.label
    let closing: Promise<void> | undefined
    return {
      cwd,
      config,
      session,
      agent,
      get label() {
        return label
      },
      startSeq,
      approval,
      mcp,
      async setModel(spec) {
        // A bare model name keeps the provider (a scripted script is not restarted).
        if (!spec.includes('/')) {
          agent.configure({ model: spec })
          label = `${label.slice(0, label.indexOf('/'))}/${spec}`
          return
        }
        const { provider: _provider, ...rest } = options
        const next = await chooseProvider(composition, { ...rest, model: spec })
        agent.configure({ provider: next.provider, model: next.model, params: next.params })
        label = next.label
      },
      close() {
        closing ??= (async () => {
          stopFollowingTools()
          try {
            await bridge?.hooks.end()
            await agent.dispose()
            uninstallHooks?.()
          } finally {
            await Promise.allSettled([mcp.close(), session.close()])
            composition.onClose(session.header.id)
          }
        })()
        return closing
      },
    }
  } catch (error) {
    await Promise.allSettled([mcp.close(), session.close()])
    throw error
  }
}

/** Claude Code's names for rudder's approval modes, as hooks see them in `permission_mode`. */
const CLAUDE_PERMISSION_MODES: Record<ApprovalMode, string> = {
  ask: 'default',
  'auto-edit': 'acceptEdits',
  yolo: 'bypassPermissions',
}

/**
 * The command-hook bridge of one session, or undefined when no hook applies. Load-time notices
 * (untrusted project hooks, ignored fields) are published once, here.
 */
async function hookBridgeFor(
  hooks: DiscoveredHooks,
  options: {
    readonly cwd: string
    readonly env: Environment
    readonly sessionId: string
    readonly notices: NoticeBoard
    readonly permissionMode: () => string
  },
) {
  const { sessionId, notices } = options
  for (const message of hooks.notices)
    notices.publish({ level: 'info', source: 'hooks', message, sessionId })
  if (hooks.specs.length === 0) return undefined
  // The bridge (hook processes, their records) loads only when a hook applies (bench B10).
  const { createHookBridge } = await import('../bridges/bridge.js')
  const stateDir = join(tmpdir(), 'rudder', 'hooks')
  const envFile = join(stateDir, `${sessionId}.env`)
  mkdirSync(stateDir, { recursive: true })
  writeFileSync(envFile, '')
  const bridge = createHookBridge({
    specs: hooks.specs,
    cwd: options.cwd,
    env: options.env,
    stateDir,
    envFile,
    permissionMode: options.permissionMode,
    notify: (notice) => notices.publish({ ...notice, sessionId }),
  })
  return { hooks: bridge, envFile }
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
  readonly provider: Provider
  readonly model: string
  readonly label: string
  readonly params: JsonObject
  readonly contextWindow?: number
}

async function chooseProvider(composition: Composition, options: SessionDefaults): Promise<Chosen> {
  const { host, store, cwd } = composition
  const spec = options.provider
  if (spec?.startsWith('scripted:')) {
    const file = resolve(host.invocationDir ?? host.cwd, spec.slice('scripted:'.length))
    // The test and replay providers load only when asked for (bench B10).
    const { scriptedProviderFromFile } = await import('../providers/scripted/script-file.js')
    const provider = scriptedProviderFromFile(file)
    const model = options.model ?? provider.model ?? 'scripted'
    return { provider, model, label: `scripted/${model}`, params: {} }
  }
  if (spec?.startsWith('replay:')) {
    const id = await resolveSessionId(store, spec.slice('replay:'.length))
    const { events } = await store.read(id)
    const { replayProvider } = await import('../providers/replay/index.js')
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
    if (model === undefined) model = providerDefaultModel(spec, cwd, host)
    else if (!model.startsWith(`${spec}/`)) model = `${spec}/${model}`
  }
  const resolved = resolveProvider({
    cwd,
    env: host.env,
    home: host.home,
    ...optionalFields({
      model,
      timeoutMs: options.timeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
    }),
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

/**
 * `--provider <name>` without `--model`: the provider's default model, or an error about the
 * provider (not about `--model`): unknown, or one that serves any model and needs it named.
 */
function providerDefaultModel(spec: string, cwd: string, host: HostOptions): string {
  const builtIn = BUILT_IN_PROVIDERS[spec]
  const configured = loadConfig({ cwd, env: host.env, home: host.home }).config.providers?.[spec]
  if (builtIn?.defaultModel !== undefined) return `${spec}/${builtIn.defaultModel}`
  if (builtIn === undefined && configured === undefined)
    throw new ConfigError(
      `--provider ${JSON.stringify(spec)}: no such provider; use one of ${BUILT_IN_PROVIDER_NAMES.join(', ')}, scripted:<file.json> or replay:<session-id>, or define "providers": {"${spec}": {"api": …, "baseURL": …}} in a config file`,
    )
  throw new ConfigError(
    `--provider ${spec} serves any model: name one with --model, e.g. --model ${spec}/qwen3:8b (rudder models lists known ones)`,
  )
}

async function openChosenSession(
  store: SessionStore,
  choice: SessionChoice,
  cwd: string,
): Promise<StoredSession> {
  switch (choice.kind) {
    case 'new':
      return store.create({ cwd, ...(choice.title === undefined ? {} : { title: choice.title }) })
    case 'resume':
      return store.open(await resolveSessionId(store, choice.id))
    case 'continue': {
      const [latest] = await store.list({ cwd, limit: 1 })
      if (!latest)
        throw new RudderError(
          'SESSION_NOT_FOUND',
          `there is no session for ${cwd} to continue; start one with rudder "<task>" (or pass --resume <id>)`,
        )
      return store.open(latest.id)
    }
    case 'fork':
      return store.fork(choice.id, choice.atSeq === undefined ? {} : { atSeq: choice.atSeq })
  }
}

/** Drops the fields whose value is undefined (for options under exactOptionalPropertyTypes). */
function optionalFields<T extends Record<string, unknown>>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value
  return out as { [K in keyof T]?: Exclude<T[K], undefined> }
}
