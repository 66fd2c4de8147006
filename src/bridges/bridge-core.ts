/**
 * What every mapped moment shares: choosing the hooks that match, the common input fields of
 * each dialect, running, the `hook/run` records (appended inside the turn they belong to, or
 * held until the next turn opens), notices for the person, and the transcript file hooks read.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Agent } from '../agent/index.js'
import type { JsonObject, JsonValue, Session } from '../core/index.js'
import type { Dialect, HookSpec } from './hook-config.js'
import { type HookRun, hookRunRecord, type PlannedRun, runHooks } from './hook-runs.js'

/** A notice for the person using rudder (never the model). */
export type BridgeNotice = {
  readonly level: 'info' | 'warning' | 'error'
  /** `hook:PreToolUse`, or `hooks` for load-time notices. */
  readonly source: string
  readonly message: string
}

export type HookBridgeOptions = {
  /** The hooks to run, in config order (`discoverHooks`). */
  readonly specs: readonly HookSpec[]
  /** The session's working directory: hooks run there; `CLAUDE_PROJECT_DIR` names it. */
  readonly cwd: string
  /** The environment hooks inherit. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Where systemMessages, hook errors and stop reasons go. */
  readonly notify: (notice: BridgeNotice) => void
  /** Claude Code's name for the approval mode now (`default`, `acceptEdits`, `bypassPermissions`). */
  readonly permissionMode?: () => string
  /** A directory for per-session files: the transcript hooks may read. */
  readonly stateDir: string
  /** Claude Code's `CLAUDE_ENV_FILE` for SessionStart hooks; the bash tool should source it. */
  readonly envFile?: string
}

/** The documented default timeouts, in milliseconds. */
export function defaultTimeoutMs(spec: HookSpec): number {
  if (spec.dialect === 'claude' && spec.event === 'UserPromptSubmit') return 30_000
  if (spec.dialect === 'claude' && spec.event === 'SessionEnd') return 1_500
  return 600_000
}

/** Events whose matcher Claude Code or Codex ignores. */
const NO_MATCHER = new Set(['UserPromptSubmit', 'Stop', 'PostToolBatch'])
/** Codex events whose input carries `permission_mode`. */
const CODEX_WITH_MODE = new Set([
  'SessionStart',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
])

export type BridgeCore = ReturnType<typeof createBridgeCore>

export function createBridgeCore(options: HookBridgeOptions, agent: Agent) {
  const session: Session = agent.session
  const transcriptPath = join(options.stateDir, `${session.header.id}.jsonl`)
  /** The seq after the last event written to the transcript file. */
  let transcriptWritten = 0
  /** Whether the transcript file was made (it may hold no events yet). */
  let isTranscriptStarted = false
  /** Writes queue here, so two hooks starting at once do not write an event twice. */
  let transcriptWrites: Promise<void> = Promise.resolve()
  // The turn structure of the log so far comes from its fold: a resumed session need not hold
  // its history in memory (docs/spec.md §9.2).
  const opened = session.state()
  let turn = opened.lastTurn
  let isTurnOpen = opened.openTurn !== undefined
  const pending: JsonObject[] = []
  const reported = new Set<string>()
  const stopSubscription = session.subscribe((event) => track(event.type, event.data))

  function track(type: string, data: unknown): void {
    if (type === 'turn/start') {
      turn = (data as { turn: number }).turn
      isTurnOpen = true
    } else if (type === 'turn/end') isTurnOpen = false
  }

  /**
   * Brings the transcript file up to date through the last event logged now: rudder's events
   * as JSON lines. The part of the log a resumed session does not hold is read from the store.
   */
  function writeTranscript(signal: AbortSignal): Promise<void> {
    const throughSeq = session.nextSeq - 1
    const write = async () => {
      if (!isTranscriptStarted) {
        mkdirSync(options.stateDir, { recursive: true })
        writeFileSync(transcriptPath, '')
        isTranscriptStarted = true
      }
      if (transcriptWritten > throughSeq) return
      for await (const batch of session.readEvents({
        fromSeq: transcriptWritten,
        throughSeq,
        signal,
      })) {
        if (batch.length === 0) continue
        appendFileSync(transcriptPath, batch.map((event) => `${JSON.stringify(event)}\n`).join(''))
        transcriptWritten = batch.at(-1)!.seq + 1
      }
    }
    transcriptWrites = transcriptWrites.catch(() => undefined).then(write)
    return transcriptWrites
  }

  const core = {
    options,
    agent,
    session,
    /** The turn hooks of this moment belong to (the next one before it opens). */
    currentTurn: () => (isTurnOpen ? turn : turn + 1),

    /** The hooks of `event` (per dialect) that match one of `names`. */
    select(
      events: Readonly<Partial<Record<Dialect, string>>>,
      names?: (dialect: Dialect) => readonly string[] | undefined,
    ): HookSpec[] {
      return options.specs.filter((spec) => {
        if (events[spec.dialect] !== spec.event) return false
        if (NO_MATCHER.has(spec.event)) return true
        const candidates = names?.(spec.dialect)
        if (candidates === undefined) return names === undefined
        return candidates.some((name) => spec.matches(name))
      })
    },

    /**
     * The input fields every event of `dialect` carries. The transcript file they name is
     * brought up to date when the hooks run (`run`).
     */
    commonInput(dialect: Dialect, event: string): Record<string, JsonValue> {
      const base: Record<string, JsonValue> = {
        session_id: session.header.id,
        transcript_path: transcriptPath,
        cwd: options.cwd,
        hook_event_name: event,
      }
      const mode = options.permissionMode?.() ?? 'default'
      if (dialect === 'claude') return { ...base, permission_mode: mode }
      return {
        ...base,
        model: agent.settings.model,
        ...(event === 'SessionStart' ? {} : { turn_id: String(core.currentTurn()) }),
        ...(CODEX_WITH_MODE.has(event) ? { permission_mode: mode } : {}),
      }
    },

    async run(planned: readonly PlannedRun[], signal: AbortSignal): Promise<HookRun[]> {
      if (planned.length === 0) return []
      try {
        await writeTranscript(signal)
      } catch (error) {
        // Canceled while reading the log: the hooks see the signal and end as canceled too.
        if (!signal.aborted) throw error
      }
      return runHooks(planned, {
        cwd: options.cwd,
        env: { ...options.env, CLAUDE_PROJECT_DIR: options.cwd },
        signal,
        defaultTimeoutMs,
        extraEnv: (spec) =>
          spec.dialect === 'claude' && spec.event === 'SessionStart' && options.envFile
            ? { CLAUDE_ENV_FILE: options.envFile }
            : {},
      })
    },

    /**
     * Logs each run as `hook/run` inside the open turn; outside a turn the records wait for
     * the next `step` (`flush`). Reports errors, systemMessages and ignored fields.
     */
    record(runs: readonly HookRun[], extra: { readonly callId?: string } = {}): JsonObject[] {
      const records = runs.map((run) => hookRunRecord(run, extra))
      if (isTurnOpen) for (const record of records) append(record)
      for (const run of runs) core.report(run)
      return records
    },

    /** Holds records made outside a turn until the next turn's first step. */
    hold(records: readonly JsonObject[]): void {
      pending.push(...records)
    },

    flush(): void {
      for (const record of pending.splice(0)) append(record)
    },

    isTurnOpen: () => isTurnOpen,

    report(run: HookRun): void {
      const { spec, reply } = run
      const source = `hook:${spec.event}`
      if (reply.status === 'error')
        options.notify({
          level: 'warning',
          source,
          message: `${spec.event} hook \`${spec.command}\` (${spec.file}) failed: ${reply.error}`,
        })
      if (reply.systemMessage !== undefined)
        options.notify({ level: 'warning', source, message: reply.systemMessage })
      for (const field of reply.ignored) {
        const key = `${spec.file}\0${spec.key}\0${field}`
        if (reported.has(key)) continue
        reported.add(key)
        options.notify({
          level: 'info',
          source,
          message: `${spec.file}: ${spec.key} answered with ${field}, which rudder does not support; ignored.`,
        })
      }
    },

    dispose(): void {
      stopSubscription()
    },
  }

  function append(record: JsonObject): void {
    session.append('hook/run', record, { ignorable: true })
  }

  return core
}

/** A context message in the hook's own words, with the extension point it came through. */
export function hookContext(
  hook: 'prompt-submit' | 'tool-pre' | 'tool-post' | 'turn-stopping' | 'session-start',
  spec: HookSpec,
  text: string,
) {
  return {
    content: [{ type: 'text' as const, text }],
    source: { kind: 'hook' as const, hook, name: spec.command },
    meta: { dialect: spec.dialect, event: spec.event, file: spec.file },
  }
}
