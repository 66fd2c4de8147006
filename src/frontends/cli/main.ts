/**
 * The `rudder` command line. Returns the exit code: 0 success, 1 failure, 2 usage or
 * configuration errors (SPEC §11).
 */
import { readFileSync } from 'node:fs'

/** Where the CLI reads and writes; injected so tests and embedders own the streams. */
export type CliIo = {
  readonly stdout: { write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
  readonly env: Readonly<Record<string, string | undefined>>
}

const HELP = `rudder: an agent harness whose model sees exactly what the session log holds.

Usage:
  rudder --version        print the version
  rudder --help           print this help
`

/** Runs the CLI with `args` (without the node and script paths). */
export async function main(args: readonly string[], io: CliIo): Promise<number> {
  const [first] = args
  if (first === '--version' || first === '-v') {
    io.stdout.write(`rudder ${version()}\n`)
    return 0
  }
  if (first === undefined || first === '--help' || first === '-h') {
    io.stdout.write(HELP)
    return 0
  }
  io.stderr.write(
    `rudder: unknown argument ${JSON.stringify(first)}. Run \`rudder --help\` for usage.\n`,
  )
  return 2
}

function version(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
  ) as { version: string }
  return manifest.version
}
