/** What the CLI needs from its process, injected so tests and embedders own it. */
import type { Readable } from 'node:stream'

/** The signals that stop a run cleanly: Ctrl-C, and `timeout`, CI cancellation, `docker stop`. */
export type StopSignal = 'SIGINT' | 'SIGTERM'

/** What stdin is: a terminal, a pipe or file to read the task from, or something else. */
export type StdinKind = 'terminal' | 'pipe' | 'file' | 'other'

export type CliIo = {
  /** The process's stdin; `rudder acp` speaks over it, a run reads its task from it. */
  readonly stdin?: Readable
  /** What stdin is (default: `other`, never read unless the task is `-`). */
  readonly stdinKind?: StdinKind
  readonly stdout: { write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
  /** Which streams are terminals: progress goes to stderr only when it is one. */
  readonly isTerminal?: { readonly stdout: boolean; readonly stderr: boolean }
  readonly env: Readonly<Record<string, string | undefined>>
  /** The directory rudder was started in. */
  readonly cwd: string
  readonly home: string
  /** Calls `handler` on each Ctrl-C (SIGINT) or SIGTERM; returns a function that stops listening. */
  onInterrupt(handler: (signal: StopSignal) => void): () => void
}
