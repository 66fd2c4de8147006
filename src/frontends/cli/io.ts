/** What the CLI needs from its process, injected so tests and embedders own it. */
import type { Readable } from 'node:stream'

export type CliIo = {
  /** The process's stdin; only `rudder acp` reads it. */
  readonly stdin?: Readable
  readonly stdout: { write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
  readonly env: Readonly<Record<string, string | undefined>>
  /** The directory rudder was started in. */
  readonly cwd: string
  readonly home: string
  /** Calls `handler` on each Ctrl-C (SIGINT); returns a function that stops listening. */
  onInterrupt(handler: () => void): () => void
}
