/**
 * `rudder serve [--port N] [--host 127.0.0.1]`: one process hosts many live sessions over the
 * configured store and serves them to browsers (docs/spec.md §11). It prints the URL with a
 * fresh token (or `RUDDER_TOKEN`), warns when it listens beyond this machine, and on Ctrl-C
 * stops every session it runs (ending their turns in the log) before it exits.
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { openHost } from '../../runtime/host.js'
import { UsageError } from '../cli/args.js'
import type { CliIo } from '../cli/io.js'
import { startWebServer } from './web-server.js'

export type ServeOptions = {
  readonly port: number
  readonly hostname: string
  readonly store?: string
  readonly provider?: string
  readonly model?: string
  readonly cwd?: string
}

const USAGE =
  'rudder serve [--port N] [--host 127.0.0.1] [--store url] [--provider name] [--model provider/model] [--cwd dir]'

/** Parses the arguments after `serve`. Throws `UsageError` with the fix. */
export function parseServeArgs(args: readonly string[]): ServeOptions {
  let parsed: ReturnType<typeof parseServe>
  try {
    parsed = parseServe(args)
  } catch (error) {
    throw new UsageError(`${(error as Error).message}; usage: ${USAGE}`)
  }
  const { values, positionals } = parsed
  if (positionals.length > 0)
    throw new UsageError(
      `rudder serve takes no task (${JSON.stringify(positionals[0])}); usage: ${USAGE}`,
    )
  const port = values.port === undefined ? 0 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(
      `--port takes a port number (0–65535, 0 for any free one), got ${JSON.stringify(values.port)}`,
    )
  return {
    port,
    hostname: values.host ?? '127.0.0.1',
    ...(values.store === undefined ? {} : { store: values.store }),
    ...(values.provider === undefined ? {} : { provider: values.provider }),
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.cwd === undefined ? {} : { cwd: values.cwd }),
  }
}

function parseServe(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      store: { type: 'string' },
      provider: { type: 'string' },
      model: { type: 'string', short: 'm' },
      cwd: { type: 'string' },
    },
  })
}

/** Runs the server until Ctrl-C. Returns the exit code. */
export async function runServe(args: readonly string[], io: CliIo): Promise<number> {
  const options = parseServeArgs(args)
  const cwd = resolve(io.cwd, options.cwd ?? '.')
  const host = await openHost({
    cwd,
    invocationDir: io.cwd,
    env: io.env,
    home: io.home,
    ...(options.store === undefined ? {} : { store: options.store }),
    defaults: {
      ...(options.provider === undefined ? {} : { provider: options.provider }),
      ...(options.model === undefined ? {} : { model: options.model }),
    },
  })
  let server: Awaited<ReturnType<typeof startWebServer>>
  try {
    const token = io.env.RUDDER_TOKEN
    server = await startWebServer({
      host,
      hostname: options.hostname,
      port: options.port,
      ...(token === undefined || token === '' ? {} : { token }),
      log: (line) => io.stderr.write(`${line}\n`),
    })
  } catch (error) {
    await host.close()
    throw error
  }
  const isLoopback = ['127.0.0.1', 'localhost', '::1'].includes(options.hostname)
  if (!isLoopback)
    io.stderr.write(
      `rudder serve: warning: listening on ${options.hostname}, reachable from other machines; anyone with the token can run commands in ${cwd}. Traffic is not encrypted: put it behind TLS or an SSH tunnel.\n`,
    )
  io.stdout.write(
    `rudder serve: ${host.sessions.size} sessions running; store ${host.store.url.replace(/\/\/[^@/]*@/, '//***@')}\n`,
  )
  io.stdout.write(`Open ${server.tokenUrl}\n`)
  await new Promise<void>((resolveStop) => {
    const stop = io.onInterrupt(() => {
      stop()
      resolveStop()
    })
  })
  io.stderr.write('rudder serve: stopping (ending running turns)…\n')
  try {
    await server.close()
  } finally {
    await host.close()
  }
  return 0
}
