/**
 * A child process for multi-process store tests, run as
 * `node --import tsx store-child.ts <store-url> <command> [session-id]`. It reports on stdout,
 * one JSON object per line, and then waits (holding whatever it opened) until it is killed or
 * its stdin closes.
 *
 * Commands:
 * - `hold <id>`: open the session for writing and hold the lease.
 * - `try-open <id>`: try to open the session for writing; report the error, if any.
 * - `append <id> <n>`: open the session and append `n` plugin messages, each its own durable
 *   batch; report `appended` and keep holding it.
 * - `write-open-turn`: create a session and write a turn that stops inside a tool call, one
 *   durable batch per event; report the events and the batch boundaries.
 */
import type { SessionEvent } from '../../../src/index.js'
import { openStore } from '../../../src/stores/index.js'
import {
  assistant,
  stepStart,
  toolCall,
  turnEnd,
  turnStart,
  user,
} from '../../support/log-builder.js'

const [url, command, id] = process.argv.slice(2)
const report = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`)
// PostgreSQL: another host name (two hosts on one machine) and a short lease.
const store = await openStore(url, {
  ...(process.env.STORE_CHILD_HOST ? { hostName: process.env.STORE_CHILD_HOST } : {}),
  ...(process.env.STORE_CHILD_LEASE_TTL_MS
    ? { leaseTtlMs: Number(process.env.STORE_CHILD_LEASE_TTL_MS) }
    : {}),
})

switch (command) {
  case 'hold': {
    const session = await store.open(id!)
    report({ event: 'ready', pid: process.pid, events: session.residentEvents })
    break
  }
  case 'try-open': {
    try {
      const session = await store.open(id!)
      report({ event: 'opened', events: session.residentEvents.length })
      await session.close()
    } catch (error) {
      const { name, code, pid, message } = error as Record<string, unknown>
      report({ event: 'refused', name, code, pid, message })
    }
    await store.close()
    process.exit(0)
    break
  }
  case 'append': {
    const session = await store.open(id!)
    for (let index = 0; index < Number(process.argv[5]); index++) {
      const [type, data] = user(`from the child ${index}`, 'child')
      session.append(type, data as never)
      await session.flush()
    }
    report({ event: 'appended', pid: process.pid, events: session.residentEvents })
    break
  }
  case 'write-open-turn': {
    const session = await store.create({ title: 'child' })
    const durable: number[] = []
    for (const [type, data] of [
      user('before', 'plugin'),
      turnStart(1),
      user('first'),
      turnEnd(1),
      turnStart(2),
      user('second'),
      stepStart(2, 1),
      assistant('', [{ id: 'c1', name: 'write' }, { id: 'c2' }]),
      toolCall('c1', 'write'),
    ]) {
      session.append(type, data as never)
      await session.flush()
      durable.push(session.residentEvents.length)
    }
    const events: readonly SessionEvent[] = session.residentEvents
    report({ event: 'ready', pid: process.pid, id: session.header.id, events, durable })
    break
  }
  default:
    throw new Error(`store-child: unknown command ${command}`)
}

// Stay alive, holding what was opened, until the parent kills us or closes stdin.
process.stdin.resume()
process.stdin.on('end', () => process.exit(0))
