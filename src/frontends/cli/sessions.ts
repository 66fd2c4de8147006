/**
 * `rudder sessions list|show|export|import|fork|repair`: the store from the command line.
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import {
  chooseStoreUrl,
  loadConfig,
  openStore,
  type SessionEvent,
  type SessionHeader,
  type SessionListing,
  type SessionStore,
} from '../../index.js'
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
  const store = await openStore(chooseStoreUrl(storeUrl, io.env, config.config.store), {
    env: { HOME: io.home, ...io.env },
  })
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
      } else io.stdout.write(formatListing(rows))
      return 0
    }
    case 'show': {
      const { header, events, tornTail, openTurn } = await store.read(command.id)
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
      const out = command.out === undefined ? io.stdout : createWriteStream(command.out)
      for await (const line of store.exportJsonl(command.id)) out.write(line)
      if (out !== io.stdout) {
        const stream = out as ReturnType<typeof createWriteStream>
        stream.end()
        await finished(stream)
      }
      return 0
    }
    case 'import': {
      const header = await store.importJsonl(createReadStream(command.file))
      io.stdout.write(`${header.id}\n`)
      return 0
    }
    case 'fork': {
      const session = await store.fork(
        command.id,
        command.atSeq === undefined ? {} : { atSeq: command.atSeq },
      )
      io.stdout.write(`${session.header.id}\n`)
      await session.close()
      return 0
    }
    case 'repair': {
      const salvage = await store.repair(command.id)
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
  }
}

function formatListing(rows: readonly SessionListing[]): string {
  const lines = rows.map((row) => {
    const updated = new Date(row.updatedAt).toISOString().replace('T', ' ').slice(0, 16)
    const title = row.title ?? '(untitled)'
    return `${row.id}  ${updated}  ${String(row.eventCount).padStart(6)} events  ${title}`
  })
  return `${lines.join('\n')}\n`
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
