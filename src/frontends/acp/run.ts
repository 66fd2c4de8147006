/**
 * `rudder acp`: the ACP agent over this process's stdin and stdout. stdout carries protocol
 * frames and nothing else: diagnostics go to stderr, `console.log` and friends are routed to
 * stderr while the agent runs (a dependency that logs would otherwise corrupt the stream), and
 * tools run their commands with piped output. Returns when stdin ends, after every session was
 * closed (turns canceled and logged, leases released) and the store closed.
 */
import { Readable, Writable } from 'node:stream'
import { format } from 'node:util'
import { openHost } from '../../runtime/host.js'
import { serveAcp } from './serve.js'

export type AcpOptions = {
  readonly provider?: string
  readonly model?: string
  readonly store?: string
  readonly system?: string
  readonly maxSteps?: number
}

/** The process facilities `rudder acp` runs on. */
export type AcpIo = {
  readonly stdin: Readable
  readonly stdout: Writable
  readonly stderr: { write(text: string): unknown }
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly home: string
}

/** Serves ACP until stdin ends; returns the exit code (0). Throws configuration errors at start. */
export async function runAcp(options: AcpOptions, io: AcpIo, version: string): Promise<number> {
  const log = (message: string) => io.stderr.write(`rudder acp: ${message}\n`)
  const restoreConsole = routeConsole(io.stderr)
  try {
    const host = await openHost({
      cwd: io.cwd,
      env: io.env,
      home: io.home,
      ...(options.store === undefined ? {} : { store: options.store }),
      defaults: {
        approvalMode: 'ask',
        ...(options.provider === undefined ? {} : { provider: options.provider }),
        ...(options.model === undefined ? {} : { model: options.model }),
        ...(options.system === undefined ? {} : { system: options.system }),
        ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
      },
    })
    try {
      const model = options.model ?? host.config.config.model ?? ''
      const server = serveAcp({
        input: Readable.toWeb(io.stdin) as ReadableStream<Uint8Array>,
        output: Writable.toWeb(io.stdout) as WritableStream<Uint8Array>,
        host,
        agentInfo: { name: 'rudder', version },
        log,
        // DeepSeek's chat models take no images; the others rudder knows do.
        acceptsImages: options.provider !== 'deepseek' && !model.startsWith('deepseek/'),
      })
      await server.closed
      return 0
    } finally {
      await host.close()
    }
  } finally {
    restoreConsole()
  }
}

const ROUTED = ['log', 'info', 'debug', 'warn', 'trace', 'dir'] as const

/**
 * Sends what `console` would print on stdout to `stderr` instead, until the returned function
 * is called. Global while it lasts: stdout belongs to the protocol for the process's lifetime.
 */
function routeConsole(stderr: { write(text: string): unknown }): () => void {
  const saved = ROUTED.map((name) => [name, console[name]] as const)
  for (const name of ROUTED)
    console[name] = (...args: unknown[]) => {
      stderr.write(`${format(...args)}\n`)
    }
  return () => {
    for (const [name, method] of saved) console[name] = method as never
  }
}
