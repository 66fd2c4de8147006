/**
 * One session for one task: the headless CLI's composition root. It is a host (host.ts) with
 * a single session; front ends that hold many sessions use `openHost` directly.
 */
import type { SessionStore } from '../stores/store.js'
import type { Environment } from './config.js'
import { openHost, type SessionDefaults, type SessionRuntime } from './host.js'
import type { NoticeBoard } from './notices.js'

export { defaultSystemPrompt, layerPolicy } from './host.js'

export type RuntimeOptions = SessionDefaults & {
  /** The workspace: tools are confined to it, and sessions are listed by it. */
  readonly cwd: string
  /** Where relative paths on the command line are resolved (default `cwd`). */
  readonly invocationDir?: string
  readonly env: Environment
  readonly home: string
  /** A store URL; default: the config's `store`, else `sqlite:~/.rudder/sessions.db`. */
  readonly store?: string
  /** A session id, or an unambiguous prefix of one (session-ids.ts). */
  readonly resume?: string
  /** Continue the newest session of this cwd. */
  readonly continueLatest?: boolean
  /** Approve every call the policy would ask about. */
  readonly yes?: boolean
  /** Title of a new session. */
  readonly title?: string
}

export type Runtime = SessionRuntime & {
  readonly store: SessionStore
  readonly notices: NoticeBoard
}

/** Opens a store and one session with its agent. Throws `ConfigError` (bad flags or config) and store errors. */
export async function openRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { cwd, invocationDir, env, home, store, resume, continueLatest, yes, title, ...defaults } =
    options
  const host = await openHost({
    cwd,
    env,
    home,
    ...(invocationDir === undefined ? {} : { invocationDir }),
    ...(store === undefined ? {} : { store }),
    defaults: {
      unattendedHint:
        'The user can allow it with --yes or in the "approval" section of .rudder/config.json.',
      ...defaults,
      ...(yes ? { approveUnattended: true } : {}),
    },
  })
  try {
    const runtime = await host.openSession({
      choice:
        resume !== undefined
          ? { kind: 'resume', id: resume }
          : continueLatest
            ? { kind: 'continue' }
            : { kind: 'new', ...(title === undefined ? {} : { title }) },
    })
    return {
      cwd: runtime.cwd,
      config: runtime.config,
      session: runtime.session,
      agent: runtime.agent,
      get label() {
        return runtime.label
      },
      startSeq: runtime.startSeq,
      approval: runtime.approval,
      mcp: runtime.mcp,
      setModel: (spec) => runtime.setModel(spec),
      store: host.store,
      notices: host.notices,
      close: () => host.close(),
    }
  } catch (error) {
    await host.close()
    throw error
  }
}
