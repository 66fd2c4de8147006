/**
 * The stdio transport for local MCP servers. The SDK's own transport leaves the server in our
 * process group (a terminal's Ctrl-C reaches it, and its own children outlive it) and
 * inherits stderr (a server's log lines would land on ours, and on an ACP client's stream).
 * This one starts the server in its own process group, appends its stderr to a log file, and
 * kills the whole group on close.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import { dirname } from 'node:path'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

export type StdioTransportOptions = {
  readonly command: string
  readonly args: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
  /** Where the server's stderr goes (appended). */
  readonly logFile: string
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private child: ChildProcess | undefined
  private log: WriteStream | undefined
  private readonly buffer = new ReadBuffer()
  private isClosed = false

  constructor(private readonly options: StdioTransportOptions) {}

  /** The server's process id, once started. */
  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      mkdirSync(dirname(this.options.logFile), { recursive: true })
      this.log = createWriteStream(this.options.logFile, { flags: 'a', mode: 0o600 })
      const child = spawn(this.options.command, [...this.options.args], {
        cwd: this.options.cwd,
        env: { ...this.options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        // Its own process group: a terminal's Ctrl-C does not reach it, and close() kills all of it.
        detached: true,
        windowsHide: true,
      })
      this.child = child
      child.once('error', (error) => {
        reject(error)
        this.onerror?.(error)
      })
      child.once('spawn', () => resolve())
      child.once('close', () => this.closed())
      child.stdin?.on('error', (error) => this.onerror?.(error))
      child.stdout?.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk)
        for (;;) {
          let message: JSONRPCMessage | null
          try {
            message = this.buffer.readMessage()
          } catch (error) {
            this.onerror?.(error as Error)
            continue
          }
          if (message === null) break
          this.onmessage?.(message)
        }
      })
      child.stderr?.pipe(this.log)
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin
      if (!stdin || this.isClosed) {
        reject(new Error('the MCP server is not running'))
        return
      }
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once('drain', resolve)
    })
  }

  async close(): Promise<void> {
    const child = this.child
    if (!child || this.isClosed) return
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
    child.stdin?.end()
    this.signalGroup('SIGTERM')
    // A server that ignores SIGTERM gets SIGKILL; the timer never keeps the process alive.
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), 2000)
    timer.unref()
    await exited
    clearTimeout(timer)
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid
    if (pid === undefined) return
    try {
      process.kill(-pid, signal)
    } catch {
      // The group is already gone.
    }
  }

  private closed(): void {
    if (this.isClosed) return
    this.isClosed = true
    this.buffer.clear()
    // Children the server left behind in its group go with it.
    this.signalGroup('SIGKILL')
    this.log?.end()
    this.onclose?.()
  }
}
