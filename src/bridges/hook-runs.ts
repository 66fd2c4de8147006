/**
 * Runs the hooks that match one moment: all of them at once (as Claude Code and Codex do),
 * identical commands once, each decoded by its dialect, the results in config order so the
 * caller's merge is deterministic. Also the `hook/run` log record of each run
 * (docs/decisions/0110-hook-run-records.md).
 */
import type { JsonObject, JsonValue } from '../core/index.js'
import type { HookSpec } from './hook-config.js'
import { decodeHookRun, type HookReply } from './hook-output.js'
import { type HookProcessResult, runHookProcess } from './hook-process.js'

/** One hook to run, with the JSON it gets on stdin. */
export type PlannedRun = { readonly spec: HookSpec; readonly input: JsonObject }

/** A finished run: what the process did and what it means. */
export type HookRun = {
  readonly spec: HookSpec
  readonly process: HookProcessResult
  readonly reply: HookReply
}

export type RunHooksOptions = {
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly signal: AbortSignal
  /** The timeout of a hook that sets none (the documented default for its event and dialect). */
  readonly defaultTimeoutMs: (spec: HookSpec) => number
  /** Extra environment for one hook (`CLAUDE_ENV_FILE` for Claude Code's SessionStart). */
  readonly extraEnv?: (spec: HookSpec) => Readonly<Record<string, string>>
}

/**
 * Runs `planned` in parallel and resolves with one run per distinct command, in the order
 * given. A later entry with the same dialect, command and arguments as an earlier one is not run.
 */
export async function runHooks(
  planned: readonly PlannedRun[],
  options: RunHooksOptions,
): Promise<HookRun[]> {
  const distinct: PlannedRun[] = []
  const seen = new Set<string>()
  for (const entry of planned) {
    const key = JSON.stringify([entry.spec.dialect, entry.spec.command, entry.spec.args ?? null])
    if (seen.has(key)) continue
    seen.add(key)
    distinct.push(entry)
  }
  return Promise.all(
    distinct.map(async ({ spec, input }) => {
      const process = await runHookProcess({
        command: spec.command,
        ...(spec.args === undefined ? {} : { args: spec.args }),
        cwd: options.cwd,
        env: { ...options.env, ...options.extraEnv?.(spec) },
        // One line of compact JSON: hooks that `read -r` get all of it.
        input: JSON.stringify(input),
        timeoutMs: spec.timeoutMs ?? options.defaultTimeoutMs(spec),
        signal: options.signal,
      })
      return { spec, process, reply: decodeHookRun(spec.dialect, spec.event, process) }
    }),
  )
}

/** Longest stderr or reason kept in a record. */
export const RECORD_TEXT_LIMIT = 500

/** The data of the `hook/run` event for one run. */
export function hookRunRecord(run: HookRun, extra: { readonly callId?: string } = {}): JsonObject {
  const { spec, process, reply } = run
  const decision: string =
    reply.status === 'error'
      ? 'error'
      : reply.status === 'canceled'
        ? 'canceled'
        : reply.stop
          ? 'stop'
          : (reply.decision ?? 'none')
  const reason = reply.stop ? reply.stop.reason : reply.reason
  const record: Record<string, JsonValue> = {
    event: spec.event,
    dialect: spec.dialect,
    file: spec.file,
    key: spec.key,
    matcher: spec.matcher ?? null,
    command: spec.command,
    ...(extra.callId === undefined ? {} : { callId: extra.callId }),
    outcome: process.outcome,
    exitCode: process.exitCode,
    durationMs: process.durationMs,
    decision,
  }
  if (reason !== undefined) record.reason = summarize(reason)
  if (reply.error !== undefined) record.error = summarize(reply.error)
  const stderr = process.stderr.trim()
  if (stderr !== '') record.stderr = summarize(stderr)
  return record
}

/** At most `RECORD_TEXT_LIMIT` characters, saying how much was cut. */
export function summarize(text: string): string {
  if (text.length <= RECORD_TEXT_LIMIT) return text
  // The note takes at most 40 characters.
  const kept = RECORD_TEXT_LIMIT - 40
  return `${text.slice(0, kept)}… [${text.length - kept} more characters]`
}
