/**
 * Workspace context: the instruction files (`AGENTS.md`, `CLAUDE.md`) that apply to a working
 * directory, framed by this producer in one `<system-reminder>` block and injected as one
 * context message with source `{ kind: 'plugin', name: 'workspace-context' }`.
 *
 * It is injected at session start and again, at prompt admission, only when the framed text
 * changed since the last injection. "The last injection" is read from the session log (the
 * latest `user/message` with this source, unless a compaction has since summarized it away), so
 * a resumed or forked session does not get unchanged files again, and a context that an outer
 * `prompt-submit` listener blocked is simply offered again next time.
 */
import { createHash } from 'node:crypto'
import { readFile, realpath, stat } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import type {
  ContentBlock,
  Delivery,
  JsonValue,
  Session,
  SessionEvent,
  UserMessageData,
} from '../core/index.js'

/** The source of every message this producer writes. */
export const WORKSPACE_CONTEXT_SOURCE = Object.freeze({
  kind: 'plugin',
  name: 'workspace-context',
} as const)

/** File names looked for in each directory from the repository root down to the cwd, in this order. */
export const INSTRUCTION_FILE_NAMES: readonly string[] = ['AGENTS.md', 'CLAUDE.md']

export type WorkspaceContextOptions = {
  /** The working directory; the files of it and its ancestors up to the repository root apply. */
  readonly cwd: string
  /** The user's home directory; `<home>/.rudder/AGENTS.md` applies to every project. */
  readonly home: string
  /** Read for `RUDDER_HOME`, which replaces `<home>/.rudder`. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Longer files are cut with a note. Default 50 000 characters. */
  readonly maxFileChars?: number
  readonly signal?: AbortSignal
}

/** An instruction file that applies. `scope` says whether it came from the user's rudder home. */
export type InstructionFile = {
  readonly path: string
  readonly content: string
  readonly scope: 'user' | 'project'
}

/** What would be injected now: the files, the framed message and its fingerprint. */
export type WorkspaceContext = {
  readonly files: readonly InstructionFile[]
  /** SHA-256 (hex) of the framed text: equal fingerprints mean the model would see the same. */
  readonly fingerprint: string
  readonly message: UserMessageData
}

/**
 * The nearest ancestor of `cwd` (itself included) holding a `.git` directory or file (a
 * worktree or submodule), else `cwd` itself.
 */
export async function repositoryRoot(cwd: string): Promise<string> {
  const start = resolve(cwd)
  for (let directory = start; ; directory = dirname(directory)) {
    if (await exists(join(directory, '.git'))) return directory
    if (dirname(directory) === directory) return start
  }
}

/**
 * Finds the instruction files that apply to `cwd`, most general first: the user's
 * `$RUDDER_HOME/AGENTS.md` (default `<home>/.rudder/AGENTS.md`), then `AGENTS.md` and
 * `CLAUDE.md` of each directory from the repository root down to `cwd`. Files that are empty,
 * unreadable, the same file as one already found (a `CLAUDE.md` symlinked to `AGENTS.md`), or
 * a copy of a file found in the same directory are left out. Never throws for file problems.
 */
export async function discoverInstructionFiles(
  options: WorkspaceContextOptions,
): Promise<InstructionFile[]> {
  const env = options.env ?? process.env
  const rudderHome = env.RUDDER_HOME ?? join(options.home, '.rudder')
  const cwd = resolve(options.cwd)
  const root = await repositoryRoot(cwd)
  const directories: string[] = []
  for (let directory = cwd; ; directory = dirname(directory)) {
    directories.unshift(directory)
    if (directory === root || dirname(directory) === directory) break
  }
  const candidates: { path: string; scope: InstructionFile['scope']; directory: string }[] = [
    { path: join(rudderHome, 'AGENTS.md'), scope: 'user', directory: rudderHome },
    ...directories.flatMap((directory) =>
      INSTRUCTION_FILE_NAMES.map((name) => ({
        path: join(directory, name),
        scope: 'project' as const,
        directory,
      })),
    ),
  ]
  const seenReal = new Set<string>()
  const found: (InstructionFile & { directory: string })[] = []
  for (const candidate of candidates) {
    const file = await readInstructionFile(candidate.path, options)
    if (file === undefined || seenReal.has(file.real)) continue
    seenReal.add(file.real)
    const isCopy = found.some(
      (other) => other.directory === candidate.directory && other.content === file.content,
    )
    if (isCopy) continue
    found.push({
      path: candidate.path,
      content: file.content,
      scope: candidate.scope,
      directory: candidate.directory,
    })
  }
  return found.map(({ path, content, scope }) => ({ path, content, scope }))
}

/**
 * The framed text of the context: one `<system-reminder>` block naming each file's path before
 * its content. Deterministic: the same files give the same text byte for byte.
 */
export function frameInstructionFiles(files: readonly InstructionFile[]): string {
  const sections = files.map((file) => {
    const what =
      file.scope === 'user'
        ? "the user's instructions for every project"
        : 'instructions for this project'
    return `Contents of ${file.path} (${what}):\n\n${file.content}`
  })
  return [
    '<system-reminder>',
    'Instructions from AGENTS.md and CLAUDE.md files that apply to this workspace, from the most general to the most specific. Follow them; where they disagree, the later file wins.',
    '',
    sections.join('\n\n'),
    '</system-reminder>',
  ].join('\n')
}

/** The text that tells the model instruction files it was given earlier are gone. */
export function frameRemovedInstructions(paths: readonly string[]): string {
  return [
    '<system-reminder>',
    `The instruction files given earlier (${paths.join(', ')}) no longer exist; their instructions no longer apply.`,
    '</system-reminder>',
  ].join('\n')
}

/** SHA-256 (hex) of a framed text. */
export function fingerprintOf(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Builds the context message for `cwd`, or `undefined` when no instruction file applies. */
export async function buildWorkspaceContext(
  options: WorkspaceContextOptions,
): Promise<WorkspaceContext | undefined> {
  const files = await discoverInstructionFiles(options)
  if (files.length === 0) return undefined
  const text = frameInstructionFiles(files)
  const fingerprint = fingerprintOf(text)
  return {
    files,
    fingerprint,
    message: contextMessage(
      text,
      fingerprint,
      files.map((file) => file.path),
    ),
  }
}

/** What the log says was last injected: its seq, fingerprint and files. */
export type InjectedContext = {
  readonly seq: number
  readonly fingerprint: string
  readonly files: readonly string[]
}

/**
 * The last workspace-context message still visible to the model in `events`: the latest
 * `user/message` with this producer's source, unless a later compaction summarized it away
 * (its `firstKeptSeq` is past the message). `undefined` when there is none.
 */
export function lastInjectedContext(events: readonly SessionEvent[]): InjectedContext | undefined {
  const tracker = createInjectionTracker()
  return tracker.update(events)
}

/**
 * Scans a growing log incrementally, so each admission reads only the events that are new:
 * `update` skips the events before seq `scanned()`.
 */
function createInjectionTracker(): {
  readonly scanned: () => number
  update(events: readonly SessionEvent[]): InjectedContext | undefined
  /** Forgets what was found and goes on from `seq` (see `injectedContextIn`). */
  restart(seq: number): void
} {
  let scanned = 0
  let last: InjectedContext | undefined
  return {
    scanned: () => scanned,
    update(events) {
      for (const event of events) {
        if (event.seq < scanned) continue
        scanned = event.seq + 1
        if (event.type === 'compaction') {
          const { firstKeptSeq } = event.data as { firstKeptSeq: number }
          if (last !== undefined && firstKeptSeq > last.seq) last = undefined
        } else if (event.type === 'user/message') {
          last = injectedContextOf(event) ?? last
        }
      }
      return last
    },
    restart(seq) {
      scanned = seq
      last = undefined
    },
  }
}

/** The parts of a session `installWorkspaceContext` reads. */
export type WorkspaceContextSession = Pick<
  Session,
  'nextSeq' | 'residentFrom' | 'eventAt' | 'isProjectionLoaded' | 'loadProjection'
>

/**
 * The last injection still visible in `session`, scanning only what `tracker` has not seen.
 * A session opened from a store may not hold the events before `residentFrom`; once its
 * projection is loaded it holds every event the model sees (the last compaction's kept
 * events on, docs/spec.md §9.2), so any `user/message` before `residentFrom` is one the last
 * compaction summarized away, and a scan from `residentFrom` finds what a scan of the whole log
 * would.
 */
async function injectedContextIn(
  session: WorkspaceContextSession,
  tracker: ReturnType<typeof createInjectionTracker>,
  signal: AbortSignal,
): Promise<InjectedContext | undefined> {
  if (tracker.scanned() < session.residentFrom) {
    if (!session.isProjectionLoaded) await session.loadProjection(signal)
    if (tracker.scanned() < session.residentFrom) tracker.restart(session.residentFrom)
  }
  const events: SessionEvent[] = []
  for (let seq = tracker.scanned(); seq < session.nextSeq; seq++) events.push(session.eventAt(seq)!)
  return tracker.update(events)
}

function injectedContextOf(event: SessionEvent): InjectedContext | undefined {
  const data = event.data as { source?: { kind?: unknown; name?: unknown }; meta?: JsonValue }
  if (data.source?.kind !== 'plugin' || data.source.name !== WORKSPACE_CONTEXT_SOURCE.name)
    return undefined
  const meta = data.meta as { fingerprint?: unknown; files?: unknown } | undefined
  if (typeof meta?.fingerprint !== 'string') return undefined
  const files = Array.isArray(meta.files)
    ? meta.files.filter((file): file is string => typeof file === 'string')
    : []
  return { seq: event.seq, fingerprint: meta.fingerprint, files }
}

/** The parts of `prompt-submit`'s admit result this producer reads and extends. */
export type AdmitResult = {
  readonly action: 'admit'
  readonly content: readonly ContentBlock[]
  readonly additionalContexts: readonly UserMessageData[]
}
/** A `prompt-submit` result: admit, or block with a reason. */
export type PromptSubmitOutcome =
  | AdmitResult
  | { readonly action: 'block'; readonly reason: string }

/**
 * The agent surface `installWorkspaceContext` needs. The real agent (src/agent) satisfies it;
 * it is spelled out here so that this module does not depend on the agent's module.
 */
export interface WorkspaceContextAgent {
  on(
    hook: 'session-start',
    listener: (event: {
      readonly reason: 'new' | 'resume' | 'fork'
      readonly signal: AbortSignal
    }) => void | Promise<void>,
  ): () => void
  on(
    hook: 'prompt-submit',
    listener: (
      event: { readonly prompt: UserMessageData; readonly signal: AbortSignal },
      next: () => Promise<PromptSubmitOutcome>,
    ) => PromptSubmitOutcome | Promise<PromptSubmitOutcome>,
  ): () => void
  inject(context: UserMessageData): Delivery
  readonly session: WorkspaceContextSession
}

/**
 * Installs the producer on an agent: at `session-start` it injects the context (the agent is
 * idle, so it is logged at once) unless the log already holds the same one (resume, fork); at
 * each admission (`prompt-submit`, after the downstream listeners) it adds the context to the
 * admitted prompt's `additionalContexts` if the framed text changed since the last injection.
 * When every file that was injected is gone, it says so once. Returns a function that removes
 * both listeners.
 */
export function installWorkspaceContext(
  agent: WorkspaceContextAgent,
  options: WorkspaceContextOptions,
): () => void {
  const tracker = createInjectionTracker()
  // A context handed to inject() but not yet in the log (staged): not offered twice meanwhile.
  let inFlight: string | undefined

  async function changedContext(signal: AbortSignal): Promise<UserMessageData | undefined> {
    const last = await injectedContextIn(agent.session, tracker, signal)
    const lastFingerprint = inFlight ?? last?.fingerprint
    const current = await buildWorkspaceContext({ ...options, signal })
    if (current !== undefined)
      return current.fingerprint === lastFingerprint ? undefined : current.message
    if (last === undefined || last.files.length === 0) return undefined
    const text = frameRemovedInstructions(last.files)
    const fingerprint = fingerprintOf(text)
    return fingerprint === lastFingerprint ? undefined : contextMessage(text, fingerprint, [])
  }

  const offStart = agent.on('session-start', async ({ signal }) => {
    const message = await changedContext(signal)
    if (message === undefined) return
    const fingerprint = (message.meta as { fingerprint: string }).fingerprint
    inFlight = fingerprint
    const delivery = agent.inject(message)
    const settle = () => {
      if (inFlight === fingerprint) inFlight = undefined
    }
    delivery.result.then(settle, settle)
  })
  const offSubmit = agent.on('prompt-submit', async ({ signal }, next) => {
    const result = await next()
    if (result.action !== 'admit') return result
    const message = await changedContext(signal)
    if (message === undefined) return result
    return { ...result, additionalContexts: [...result.additionalContexts, message] }
  })
  return () => {
    offStart()
    offSubmit()
  }
}

function contextMessage(
  text: string,
  fingerprint: string,
  files: readonly string[],
): UserMessageData {
  return {
    content: [{ type: 'text', text }],
    source: WORKSPACE_CONTEXT_SOURCE,
    meta: { fingerprint, files: [...files] },
  }
}

async function readInstructionFile(
  path: string,
  options: WorkspaceContextOptions,
): Promise<{ content: string; real: string } | undefined> {
  try {
    const raw = await readFile(path, {
      encoding: 'utf8',
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })
    let content = raw.replace(/^\uFEFF/, '').trimEnd()
    if (content.trim() === '') return undefined
    const maxChars = options.maxFileChars ?? 50_000
    if (content.length > maxChars) {
      content = `${content.slice(0, maxChars)}\n\n[${path} is cut here: ${content.length - maxChars} more characters; read the file for the rest.]`
    }
    return { content, real: await realpath(path) }
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    // Missing (the usual case), a directory, or unreadable: such a file gives no instructions.
    return undefined
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    // Any failure to stat means we cannot use it as a marker.
    return false
  }
}
