/**
 * `rudder sessions list|show|export|import|fork|repair|delete|prune`: the store from the command
 * line. Every id may be an unambiguous prefix (src/runtime/session-ids.ts).
 */
import { randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream, openSync } from 'node:fs'
import { finished } from 'node:stream/promises'
import {
  loadConfig,
  RudderError,
  type SessionEvent,
  type SessionHeader,
  type SessionListing,
  type SessionStore,
} from '../../index.js'
import { openChosenStore } from '../../runtime/chosen-store.js'
import { resolveSessionId } from '../../runtime/session-ids.js'
import type { SessionsCommand } from './args.js'
import type { CliIo } from './io.js'
import { renderTranscript } from './transcript.js'

export async function runSessions(
  command: SessionsCommand,
  storeUrl: string | undefined,
  io: CliIo,
): Promise<number> {
  const config = loadConfig({ cwd: io.cwd, env: io.env, home: io.home })
  for (const notice of config.notices) io.stderr.write(`rudder: ${notice.message}\n`)
  const store = await openChosenStore(storeUrl, { HOME: io.home, ...io.env }, config.config.store)
  try {
    return await run(command, store, io)
  } finally {
    await store.close()
  }
}

async function run(command: SessionsCommand, store: SessionStore, io: CliIo): Promise<number> {
  switch (command.action) {
    case 'list': {
      const rows = await store.list({
        limit: command.limit,
        ...(command.cwd === undefined ? {} : { cwd: command.cwd }),
      })
      if (command.json) {
        for (const row of rows) io.stdout.write(`${JSON.stringify(row)}\n`)
      } else if (rows.length === 0) {
        io.stdout.write(
          command.cwd === undefined
            ? 'no sessions yet\n'
            : `no sessions for ${command.cwd} (rudder sessions list --all shows every directory)\n`,
        )
      } else io.stdout.write(formatListing(rows, true))
      return 0
    }
    case 'show': {
      const id = await resolveSessionId(store, command.id)
      const { header, events, tornTail, openTurn } = await store.read(id)
      if (command.follow) return follow(store, header, events.length, command.json, io, events)
      if (command.json) {
        for (const event of events) io.stdout.write(`${JSON.stringify(event)}\n`)
        return 0
      }
      io.stdout.write(renderTranscript(header, events))
      if (openTurn !== undefined)
        io.stdout.write(
          `(turn ${openTurn} is still open: running elsewhere, or interrupted by a crash)\n`,
        )
      if (tornTail)
        io.stdout.write(
          `(a partial last line of ${tornTail.bytes} bytes at ${tornTail.location} is not shown)\n`,
        )
      return 0
    }
    case 'export': {
      const id = await resolveSessionId(store, command.id)
      // Opened first, so a missing directory is reported with its path before anything is read.
      const out =
        command.out === undefined
          ? io.stdout
          : createWriteStream('', { fd: openSync(command.out, 'w') })
      for await (const line of store.exportJsonl(id)) out.write(line)
      if (out !== io.stdout) {
        const stream = out as ReturnType<typeof createWriteStream>
        stream.end()
        await finished(stream)
      }
      return 0
    }
    case 'import': {
      const input = createReadStream('', { fd: openSync(command.file, 'r') })
      try {
        const header = await store.importJsonl(command.asNew ? withNewId(input) : input)
        io.stdout.write(`${header.id}\n`)
      } catch (error) {
        if (error instanceof RudderError && /already has a session/.test(error.message))
          throw new RudderError(
            'INVALID_INPUT',
            `${error.message}; import it as a new session with rudder sessions import ${command.file} --as-new`,
          )
        throw error
      } finally {
        input.destroy()
      }
      return 0
    }
    case 'fork': {
      const session = await store.fork(
        await resolveSessionId(store, command.id),
        command.atSeq === undefined ? {} : { atSeq: command.atSeq },
      )
      io.stdout.write(`${session.header.id}\n`)
      await session.close()
      return 0
    }
    case 'help':
      return 0
    case 'repair': {
      const sourceId = await resolveSessionId(store, command.id)
      const healthy = await isHealthy(store, sourceId)
      if (healthy !== undefined) {
        io.stderr.write(`rudder: ${sourceId} ${healthy}; nothing to repair, nothing created\n`)
        return 0
      }
      const salvage = await store.repair(sourceId)
      const id = salvage.session.header.id
      await salvage.session.close()
      io.stdout.write(`${id}\n`)
      io.stderr.write(
        salvage.problem
          ? `rudder: copied the ${salvage.keptEvents} valid events of ${salvage.sourceId} into ${id}; the copy stopped at ${salvage.problem.location}: ${salvage.problem.message}. The original is unchanged.\n`
          : `rudder: ${salvage.sourceId} had no damage; copied all ${salvage.keptEvents} events into ${id}. The original is unchanged.\n`,
      )
      return 0
    }
    case 'delete': {
      // Every id is resolved before anything is deleted: one bad id deletes nothing.
      const ids = [
        ...new Set(await Promise.all(command.ids.map((id) => resolveSessionId(store, id)))),
      ]
      for (const id of ids) {
        await store.delete(id)
        io.stdout.write(`deleted ${id}\n`)
      }
      await reportBlobs(store, io)
      return 0
    }
    case 'prune': {
      const before = Date.now() - command.olderThanMs
      const old = (await everySession(store, command.cwd)).filter((row) => row.updatedAt < before)
      if (command.dryRun) {
        for (const row of old) io.stdout.write(`would delete ${row.id}  ${row.title ?? ''}\n`)
        io.stderr.write(`rudder: ${old.length} sessions would be deleted (--dry-run)\n`)
        return 0
      }
      let busy = 0
      for (const row of old) {
        try {
          await store.delete(row.id)
          io.stdout.write(`deleted ${row.id}\n`)
        } catch (error) {
          if (!(error instanceof RudderError) || error.code !== 'SESSION_BUSY') throw error
          busy++
          io.stderr.write(`rudder: kept ${row.id}: it is being written now\n`)
        }
      }
      io.stderr.write(
        `rudder: deleted ${old.length - busy} sessions last written before ${new Date(before).toISOString()}${command.cwd === undefined ? '' : ` in ${command.cwd} (--all for every directory)`}\n`,
      )
      await reportBlobs(store, io)
      return 0
    }
  }
}

async function reportBlobs(store: SessionStore, io: CliIo): Promise<void> {
  const removed = await store.collectBlobs()
  if (removed > 0) io.stderr.write(`rudder: removed ${removed} large payloads no session uses\n`)
}

/** Every listing row (of `cwd`, if given), page by page. */
async function everySession(
  store: SessionStore,
  cwd: string | undefined,
): Promise<SessionListing[]> {
  const rows: SessionListing[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await store.list({
      limit: 500,
      ...(cwd === undefined ? {} : { cwd }),
      ...(cursor === undefined ? {} : { cursor }),
    })
    rows.push(...page)
    if (page.length < 500) return rows
    cursor = page.at(-1)!.cursor
  }
}

/** Undefined when the log has damage `repair` is for; else what to tell the person. */
async function isHealthy(store: SessionStore, id: string): Promise<string | undefined> {
  try {
    const snapshot = await store.read(id)
    if (snapshot.tornTail !== undefined) return undefined
    return snapshot.openTurn === undefined
      ? 'has no damage'
      : `has no damage (its open turn ${snapshot.openTurn} is closed as canceled when it is next opened, unless it is running now)`
  } catch (error) {
    if (error instanceof RudderError && error.code === 'LOG_CORRUPT') return undefined
    throw error
  }
}

/** An export's text with a new session id in its header line (`import --as-new`). */
async function* withNewId(input: AsyncIterable<string | Buffer>): AsyncIterable<string> {
  let head = ''
  let replaced = false
  for await (const chunk of input) {
    if (replaced) {
      yield chunk.toString()
      continue
    }
    head += chunk.toString()
    const newline = head.indexOf('\n')
    if (newline < 0) continue
    yield `${newHeader(head.slice(0, newline))}${head.slice(newline)}`
    replaced = true
  }
  if (!replaced && head !== '') yield newHeader(head)
}

function newHeader(line: string): string {
  let header: Record<string, unknown>
  try {
    header = JSON.parse(line) as Record<string, unknown>
  } catch {
    // The import reports the bad header with its line.
    return line
  }
  return JSON.stringify({ ...header, id: randomUUID() })
}

/** A header row, then one row per session: id, last write, events, directory, title. */
function formatListing(rows: readonly SessionListing[], showDirectory: boolean): string {
  const table = rows.map((row) => [
    row.id,
    new Date(row.updatedAt).toISOString().replace('T', ' ').slice(0, 16),
    String(row.eventCount),
    ...(showDirectory ? [row.cwd ?? '-'] : []),
    row.title ?? '(untitled)',
  ])
  const head = ['ID', 'UPDATED (UTC)', 'EVENTS', ...(showDirectory ? ['DIRECTORY'] : []), 'TITLE']
  const widths = head.map((title, column) =>
    Math.max(title.length, ...table.map((cells) => cells[column]!.length)),
  )
  const format = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1
          ? cell
          : column === 2
            ? cell.padStart(widths[column]!)
            : cell.padEnd(widths[column]!),
      )
      .join('  ')
  return `${[head, ...table].map(format).join('\n')}\n`
}

/**
 * `sessions show --follow`: what is stored, then every event any process appends, until
 * Ctrl-C (docs/spec.md §9.1 `follow`).
 */
async function follow(
  store: SessionStore,
  header: SessionHeader,
  fromSeq: number,
  json: boolean,
  io: CliIo,
  stored: readonly SessionEvent[],
): Promise<number> {
  const print = (batch: readonly SessionEvent[], first: boolean) => {
    if (json) for (const event of batch) io.stdout.write(`${JSON.stringify(event)}\n`)
    // The transcript's first two lines describe the session: shown once, not per batch.
    else
      io.stdout.write(
        first
          ? renderTranscript(header, batch)
          : renderTranscript(header, batch).split('\n').slice(2).join('\n'),
      )
  }
  print(stored, true)
  const controller = new AbortController()
  const stop = io.onInterrupt(() => controller.abort())
  try {
    for await (const event of store.follow(header.id, { fromSeq, signal: controller.signal }))
      print([event], false)
  } finally {
    stop()
  }
  return 0
}
