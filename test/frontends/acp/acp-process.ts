/**
 * `rudder acp` as a real child process of the built CLI, driven by the ACP SDK's own client.
 * Every byte the child writes to stdout is kept: at exit the harness checks each line is a
 * JSON-RPC frame, and that every `session/update` frame reached the client's handler unchanged
 * by the SDK's schema (the SDK drops an update that fails its check, and quietly defaults
 * fields it cannot read: both would show as a difference).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import * as acp from '@agentclientprotocol/sdk'
import { expect } from 'vitest'
import { checkLog, openStore, type SessionEvent, type SessionHeader } from '../../../src/index.js'
import { BIN, cleanEnv, ROOT } from '../cli/run-cli.js'

export type PermissionAnswer =
  | acp.RequestPermissionResponse
  | ((request: acp.RequestPermissionRequest) => Promise<acp.RequestPermissionResponse>)

export type AcpProcessOptions = {
  /**
   * The scripted model: steps of docs/spec.md §8 (JSON: `holdUntilFile` instead of `hold`,
   * released with `release(name)`).
   */
  readonly script: unknown
  readonly args?: readonly string[]
  /** How the client answers `session/request_permission` (default: allow once). */
  readonly permission?: PermissionAnswer
  /** The user config written to `$RUDDER_HOME/config.json`. */
  readonly config?: unknown
  /** Client capabilities sent by `ready()`. */
  readonly clientCapabilities?: acp.ClientCapabilities
  /** Run in the home and workspace of an earlier process (its store and files). */
  readonly after?: AcpProcess
  /** Runs before the child starts, e.g. to put sessions in its store. */
  readonly prepare?: (paths: { home: string; workspace: string }) => Promise<void>
}

export type ExitResult = { code: number | null; signal: NodeJS.Signals | null }

export type AcpProcess = {
  readonly child: ChildProcessWithoutNullStreams
  /** The SDK client's view of the agent. */
  readonly agent: acp.ClientContext
  /** Every `session/update` the client's handler received, parsed by the SDK, in order. */
  readonly updates: acp.SessionNotification[]
  readonly permissions: acp.RequestPermissionRequest[]
  /** Every line the child wrote to stdout, and every line the client wrote to its stdin. */
  readonly fromAgent: string[]
  readonly toAgent: string[]
  /** Both directions in the order the client saw them: `→` written, `←` read. */
  readonly exchange: { readonly direction: '→' | '←'; readonly line: string }[]
  /** A workspace directory (the session cwd) and where scripts' hold files go. */
  readonly workspace: string
  readonly home: string
  stderr(): string
  /** `initialize`, then `session/new` in the workspace; returns the session id. */
  ready(): Promise<string>
  /** Resolves once an update (for any session) satisfies `predicate`. */
  until(predicate: (update: acp.SessionNotification) => boolean): Promise<acp.SessionNotification>
  /** Resolves once the agent's streamed text (of one session, or all) contains `text`. */
  untilText(text: string, sessionId?: string): Promise<void>
  /** Releases a `holdUntilFile` step. */
  release(name: string): void
  /** Writes a raw line to the child's stdin (bad-input tests only). */
  writeRaw(line: string): void
  /** Resolves with the child's response to a raw request id. */
  rawResponse(id: string): Promise<{ result?: unknown; error?: { code: number; message: string } }>
  /** Closes stdin, waits for the exit, then checks the stream (see the file comment). */
  exit(): Promise<ExitResult>
  /** Every session in the store with its events; the store is opened after the child exited. */
  sessions(): Promise<{ header: SessionHeader; events: readonly SessionEvent[] }[]>
}

/** Starts `node bin/rudder.js acp` with its own RUDDER_HOME (and so its own SQLite store). */
export async function startAcp(options: AcpProcessOptions): Promise<AcpProcess> {
  const root = mkdtempSync(join(tmpdir(), 'rudder-acp-'))
  const workspace = options.after?.workspace ?? join(root, 'workspace')
  const home = options.after?.home ?? join(root, 'home')
  mkdirSync(workspace, { recursive: true })
  mkdirSync(home, { recursive: true })
  const scriptFile = join(root, 'script.json')
  writeFileSync(scriptFile, JSON.stringify(options.script))
  if (options.config !== undefined)
    writeFileSync(join(home, 'config.json'), JSON.stringify(options.config))
  await options.prepare?.({ home, workspace })
  const env = cleanEnv({ RUDDER_HOME: home, HOME: home })
  const child = spawn(
    process.execPath,
    [BIN, 'acp', '--provider', `scripted:${scriptFile}`, ...(options.args ?? [])],
    { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] },
  )
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<ExitResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  )

  const fromAgent: string[] = []
  const toAgent: string[] = []
  const exchange: { direction: '→' | '←'; line: string }[] = []
  const rawWaiters = new Map<string, (message: Record<string, unknown>) => void>()
  const input = lineTap(Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>, (line) => {
    fromAgent.push(line)
    exchange.push({ direction: '←', line })
    const message = safeParse(line)
    const id = message?.id
    if (typeof id === 'string' && rawWaiters.has(id)) rawWaiters.get(id)!(message!)
  })
  const output = outputTap(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, (line) => {
    toAgent.push(line)
    exchange.push({ direction: '→', line })
  })

  const updates: acp.SessionNotification[] = []
  const permissions: acp.RequestPermissionRequest[] = []
  const waiters: {
    predicate: (update: acp.SessionNotification) => boolean
    resolve: (update: acp.SessionNotification) => void
  }[] = []
  const answer = options.permission ?? allowOnce
  const app = acp
    .client({ name: 'rudder-test-client' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params)
      for (const waiter of [...waiters]) {
        if (waiter.predicate(params)) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve(params)
        }
      }
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params)
      return typeof answer === 'function' ? answer(params) : answer
    })
  const connection = app.connect(acp.ndJsonStream(output, input))

  return {
    child,
    agent: connection.agent,
    updates,
    permissions,
    fromAgent,
    toAgent,
    exchange,
    workspace,
    home,
    stderr: () => stderr,
    async ready() {
      await connection.agent.request('initialize', {
        protocolVersion: 1,
        clientCapabilities: options.clientCapabilities ?? {},
      })
      const { sessionId } = await connection.agent.request('session/new', {
        cwd: workspace,
        mcpServers: [],
      })
      return sessionId
    },
    until(predicate) {
      const found = updates.find(predicate)
      if (found) return Promise.resolve(found)
      return new Promise((resolve) => waiters.push({ predicate, resolve }))
    },
    async untilText(text, sessionId) {
      const streamed = (): string =>
        updates
          .filter((notification) => sessionId === undefined || notification.sessionId === sessionId)
          .map((notification) =>
            notification.update.sessionUpdate === 'agent_message_chunk' &&
            notification.update.content.type === 'text'
              ? notification.update.content.text
              : '',
          )
          .join('')
      if (streamed().includes(text)) return
      await new Promise<void>((resolve) =>
        waiters.push({
          predicate: () => streamed().includes(text),
          resolve: () => resolve(),
        }),
      )
    },
    release(name) {
      writeFileSync(join(root, name), '')
    },
    writeRaw(line) {
      child.stdin.write(`${line}\n`)
    },
    rawResponse(id) {
      const seen = fromAgent.map(safeParse).find((message) => message?.id === id)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve) => rawWaiters.set(id, resolve))
    },
    async exit() {
      child.stdin.end()
      const result = await exited
      connection.close()
      checkStream(fromAgent, updates)
      return result
    },
    async sessions() {
      const store = await openStore(`sqlite:${join(home, 'sessions.db')}`)
      try {
        const rows = await store.list({ limit: 1000 })
        const out = []
        for (const row of rows) {
          const { header, events } = await store.read(row.id)
          out.push({ header, events })
        }
        return out
      } finally {
        await store.close()
      }
    },
  }
}

/** Each session of the store keeps every invariant; returns them for further checks. */
export async function checkedSessions(
  process: AcpProcess,
): Promise<{ header: SessionHeader; events: readonly SessionEvent[] }[]> {
  const sessions = await process.sessions()
  for (const session of sessions) expect(checkLog(session.events), session.header.id).toEqual([])
  return sessions
}

export const allowOnce: acp.RequestPermissionResponse = {
  outcome: { outcome: 'selected', optionId: 'allow_once' },
}

/** Every stdout line is JSON-RPC, and every update frame reached the handler unchanged. */
function checkStream(lines: readonly string[], updates: readonly acp.SessionNotification[]): void {
  const frames = lines.map((line) => {
    const message = safeParse(line)
    expect(message, `a stdout line that is not JSON-RPC: ${line.slice(0, 200)}`).toMatchObject({
      jsonrpc: '2.0',
    })
    return message!
  })
  const raw = frames
    .filter((frame) => frame.method === 'session/update')
    .map((frame) => frame.params)
  expect(updates.length, 'session/update frames the SDK client dropped').toBe(raw.length)
  expect(updates).toEqual(raw)
}

function safeParse(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/** Passes bytes through and reports each complete line. */
function lineTap(
  source: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder()
  let pending = ''
  return source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true })
        for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
          onLine(pending.slice(0, at))
          pending = pending.slice(at + 1)
        }
        controller.enqueue(chunk)
      },
      flush() {
        if (pending !== '') onLine(pending)
      },
    }),
  )
}

function outputTap(
  sink: WritableStream<Uint8Array>,
  onLine: (line: string) => void,
): WritableStream<Uint8Array> {
  const decoder = new TextDecoder()
  const writer = sink.getWriter()
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      for (const line of decoder.decode(chunk).split('\n')) if (line !== '') onLine(line)
      await writer.write(chunk)
    },
    async close() {
      await writer.close()
    },
  })
}
