/** What the CLI needs from its process, injected so tests and embedders own it. */

export type CliIo = {
  readonly stdout: { write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
  readonly env: Readonly<Record<string, string | undefined>>
  /** The directory rudder was started in. */
  readonly cwd: string
  readonly home: string
  /** Calls `handler` on each Ctrl-C (SIGINT); returns a function that stops listening. */
  onInterrupt(handler: () => void): () => void
}
