/**
 * The PostgreSQL store shared by hosts (issue 18, docs/spec.md §9.1): real processes on the real
 * server, each with its own host name. One writer per session (busy names the holder's host),
 * takeover once a holder's heartbeat lapsed, a stale writer refused by the database, a dropped
 * connection that loses nothing committed, followers that see another process's appends.
 */
import { describe, expect, it } from 'vitest'
import { SessionBusyError, type SessionEvent, StoreError } from '../../src/index.js'
import { openStore } from '../../src/stores/index.js'
import { cleanEnv, runCli } from '../frontends/cli/run-cli.js'
import {
  assistant,
  stepEnd,
  stepStart,
  toolCall,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'
import { startChild } from './support/child-process.js'
import { appendAll, typesOf } from './support/events.js'
import { adminQuery, placeSchema } from './support/postgres.js'

/** A schema for this test and stores on it, all closed and dropped afterwards. */
const place = placeSchema

/** Makes a lease look as if its holder stopped beating an hour ago (time passing, without waiting). */
async function ageLease(schema: string, id: string): Promise<void> {
  await adminQuery(
    `UPDATE ${schema}.leases SET heartbeat_at = now() - interval '1 hour' WHERE session_id = $1`,
    [id],
  )
}

describe('the PostgreSQL store across hosts', () => {
  it('refuses a second host with SessionBusyError naming the holder host, and lets it read', async () => {
    const here = await place()
    try {
      const store = await here.open({ hostName: 'host-b' })
      const session = await store.create()
      appendAll(session, [user('written first', 'ctx')])
      await session.close()
      const child = startChild('store-child.ts', [here.url, 'hold', session.header.id], {
        STORE_CHILD_HOST: 'host-a',
      })
      const ready = await child.next()
      const attempt = store.open(session.header.id)
      await expect(attempt).rejects.toBeInstanceOf(SessionBusyError)
      await expect(attempt).rejects.toMatchObject({ pid: ready.pid, host: 'host-a' })
      await expect(attempt).rejects.toThrow(/on host host-a/)
      expect((await store.read(session.header.id)).events).toEqual(session.residentEvents)
      await child.kill()
    } finally {
      await here.done()
    }
  })

  it("takes over a SIGKILLed holder's lease once its heartbeat lapsed, and repairs the open turn", async () => {
    const here = await place()
    try {
      const store = await here.open({ hostName: 'host-b' })
      const session = await store.create()
      appendAll(session, [turnStart(1), user('interrupted')])
      await session.close()
      const child = startChild('store-child.ts', [here.url, 'hold', session.header.id], {
        STORE_CHILD_HOST: 'host-a',
      })
      await child.next()
      await child.kill()
      // Another host cannot see that the holder died: only a lapsed heartbeat frees the lease.
      await expect(store.open(session.header.id)).rejects.toBeInstanceOf(SessionBusyError)
      await ageLease(here.schema, session.header.id)
      const reopened = await store.open(session.header.id)
      expect(typesOf(reopened.residentEvents)).toBe('turn/start user/message turn/end')
      await reopened.close()
    } finally {
      await here.done()
    }
  })

  it('takes over at once from a dead holder on the same host', async () => {
    const here = await place()
    try {
      const store = await here.open()
      const session = await store.create()
      await session.close()
      const child = startChild('store-child.ts', [here.url, 'hold', session.header.id])
      await child.next()
      await expect(store.open(session.header.id)).rejects.toBeInstanceOf(SessionBusyError)
      await child.kill()
      await (await store.open(session.header.id)).close()
    } finally {
      await here.done()
    }
  })

  it("refuses a stale writer's late write after its lease was taken over (no split brain)", async () => {
    const here = await place()
    try {
      const stale = await (await here.open({ hostName: 'host-a' })).create()
      appendAll(stale, [user('before the takeover', 'ctx')])
      await stale.flush()
      await ageLease(here.schema, stale.header.id)
      const winner = await (await here.open({ hostName: 'host-b' })).open(stale.header.id)
      appendAll(winner, [user('from the new holder', 'ctx')])
      await winner.flush()
      appendAll(stale, [user('late write', 'ctx')])
      const late = stale.flush()
      await expect(late).rejects.toBeInstanceOf(StoreError)
      await expect(late).rejects.toThrow(/lost the writer lease .* to process \d+ on host host-b/)
      await expect(stale.close()).rejects.toBeInstanceOf(StoreError)
      await winner.close()
      const reader = await here.open()
      const texts = (await reader.read(stale.header.id)).events.map(
        (event) => (event.data as { content: { text: string }[] }).content[0]!.text,
      )
      expect(texts).toEqual(['before the takeover', 'from the new holder'])
    } finally {
      await here.done()
    }
  })

  it('loses no committed event when its connection is killed mid-batch, and the writer stops with a clear error', async () => {
    const name = `store_kill_${process.pid}`
    const here = await place(`&application_name=${name}`)
    try {
      const store = await here.open()
      const session = await store.create()
      appendAll(session, [user('committed', 'ctx')])
      await session.flush()
      // Hold the lease row locked, so the next batch waits inside its statement; kill it there.
      const admin = await import('pg').then(
        (pg) => new pg.default.Client({ connectionString: here.url.split('?')[0] }),
      )
      await admin.connect()
      try {
        await admin.query('BEGIN')
        await admin.query(`SELECT 1 FROM ${here.schema}.leases WHERE session_id = $1 FOR UPDATE`, [
          session.header.id,
        ])
        appendAll(session, [user('in flight', 'ctx')])
        // Caught now: it rejects while this test is still busy killing the connection.
        const flushed = session.flush().then(
          () => undefined,
          (error: unknown) => error,
        )
        let killed = 0
        while (killed === 0) {
          const result = await admin.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
            [name],
          )
          killed = result.rowCount ?? 0
        }
        await admin.query('ROLLBACK')
        const failure = await flushed
        expect(failure).toBeInstanceOf(StoreError)
        expect((failure as Error).message).toMatch(/PostgreSQL at .*: terminating connection/)
        expect(() => appendAll(session, [user('after', 'ctx')])).toThrow(StoreError)
      } finally {
        await admin.end()
      }
      await session.close().catch(() => {})
      const reopened = await (await here.open()).open(session.header.id)
      expect(typesOf(reopened.residentEvents)).toBe('user/message')
      await reopened.close()
    } finally {
      await here.done()
    }
  })

  it("follows another process's appends live, in order, with no gap and no duplicate", async () => {
    const here = await place()
    try {
      const store = await here.open()
      const session = await store.create()
      appendAll(session, [user('first', 'ctx')])
      await session.close()
      const controller = new AbortController()
      const seen: SessionEvent[] = []
      const following = (async () => {
        for await (const event of store.follow(session.header.id, {
          fromSeq: 1,
          signal: controller.signal,
        })) {
          seen.push(event)
          if (seen.length === 20) controller.abort()
        }
      })()
      const child = startChild('store-child.ts', [here.url, 'append', session.header.id, '20'])
      const appended = await child.next()
      await following
      expect(seen.map((event) => event.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
      expect(JSON.parse(JSON.stringify(seen))).toEqual((appended.events as SessionEvent[]).slice(1))
      await child.kill()
    } finally {
      await here.done()
    }
  })

  it('rudder sessions show --follow --json prints the log, then what another process appends', async () => {
    const here = await place()
    try {
      const store = await here.open()
      const session = await store.create()
      appendAll(session, [user('stored', 'ctx')])
      await session.close()
      const lines: string[] = []
      let child: ReturnType<typeof startChild> | undefined
      const run = await runCli(
        ['sessions', 'show', '--follow', '--json', session.header.id, '--store', here.url],
        {
          env: cleanEnv(),
          onLine: (line, process) => {
            lines.push(line)
            if (lines.length === 1)
              child = startChild('store-child.ts', [here.url, 'append', session.header.id, '3'])
            if (lines.length === 4) process.kill('SIGINT')
          },
        },
      )
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      expect(lines.map((line) => JSON.parse(line).seq)).toEqual([0, 1, 2, 3])
      await child?.kill()
    } finally {
      await here.done()
    }
  })
})

describe('choosing the PostgreSQL store', () => {
  it('RUDDER_STORE points the CLI at it, and --store wins over it', async () => {
    const here = await place()
    try {
      const session = await (await here.open()).create({ title: 'shared' })
      await session.close()
      const env = cleanEnv({ RUDDER_STORE: here.url })
      const listed = await runCli(['sessions', 'list', '--all', '--json'], { env })
      expect(listed.stderr).toBe('')
      expect(listed.stdout).toContain(session.header.id)
      const overridden = await runCli(['sessions', 'list', '--all', '--store', 'memory:'], { env })
      expect(overridden.stdout).toBe('no sessions yet\n')
    } finally {
      await here.done()
    }
  })
})

/** One turn whose tool returns `output` (over 1 MiB: a blob). */
function appendToolTurn(session: Parameters<typeof appendAll>[0], output: string): void {
  appendAll(session, [
    turnStart(1),
    user('read it'),
    stepStart(1, 1),
    assistant('', [{ id: 'c1', name: 'read' }]),
    toolCall('c1', 'read'),
    [
      'tool/result',
      { callId: 'c1', name: 'read', content: [{ type: 'text', text: output }], isError: false },
    ],
    stepEnd(1, 1),
    turnEnd(1),
  ])
}

describe('large payloads in the PostgreSQL store', () => {
  it('moves payloads over 1 MiB to the blobs table once per content, and gives them back', async () => {
    const here = await place()
    try {
      const store = await here.open()
      const session = await store.create()
      const big = 'line of tool output ✓\n'.repeat(80_000)
      appendToolTurn(session, big)
      await session.close()
      const fork = await store.fork(session.header.id)
      await fork.close()
      const sizes = await adminQuery(
        `SELECT max(octet_length(line)) AS largest FROM ${here.schema}.events`,
      )
      expect(Number(sizes.rows[0].largest)).toBeLessThan(1024 * 1024)
      const blobs = await adminQuery(`SELECT bytes FROM ${here.schema}.blobs`)
      expect(blobs.rows.map((row) => row.bytes)).toEqual([Buffer.byteLength(big)])
      const reopened = await (await here.open()).open(fork.header.id)
      expect(reopened.residentEvents).toEqual(session.residentEvents)
      await reopened.close()
      let exported = ''
      for await (const line of store.exportJsonl(session.header.id)) exported += line
      // Exports are self-contained: the payload is inlined again.
      expect(exported.includes(JSON.stringify(big))).toBe(true)
    } finally {
      await here.done()
    }
  })

  it('deletes a session under its lease and collects the blobs no session uses, sparing fresh ones', async () => {
    const here = await place()
    try {
      const store = await here.open()
      const session = await store.create()
      const big = 'only this session ✓\n'.repeat(80_000)
      appendToolTurn(session, big)
      const id = session.header.id
      // Open here: deleting it would pull the log from under its writer.
      await expect(store.delete(id)).rejects.toMatchObject({ code: 'SESSION_BUSY' })
      await session.close()
      await store.delete(id)
      await expect(store.read(id)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
      const rows = await adminQuery(
        `SELECT (SELECT count(*) FROM ${here.schema}.events) AS events, (SELECT count(*) FROM ${here.schema}.message_text) AS texts, (SELECT count(*) FROM ${here.schema}.leases) AS leases`,
      )
      expect(rows.rows[0]).toEqual({ events: '0', texts: '0', leases: '0' })
      // Written just now: a writer may be about to refer to it, so the sweep spares it.
      expect(await store.collectBlobs()).toBe(0)
      await adminQuery(`UPDATE ${here.schema}.blobs SET touched_at = now() - interval '2 hours'`)
      expect(await store.collectBlobs()).toBe(1)
      expect((await adminQuery(`SELECT count(*) AS n FROM ${here.schema}.blobs`)).rows[0].n).toBe(
        '0',
      )
    } finally {
      await here.done()
    }
  })
})

describe('the PostgreSQL store refuses what it cannot use', () => {
  it('names the server, the database and the fix when it cannot connect, never the password', async () => {
    const attempt = openStore('postgres://ada:hunter2@127.0.0.1:1/test?schema=store_none')
    await expect(attempt).rejects.toBeInstanceOf(StoreError)
    await expect(attempt).rejects.toThrow(
      /PostgreSQL at 127\.0\.0\.1:1 \(database test\).*start the server/,
    )
    await expect(attempt).rejects.not.toThrow(/hunter2/)
  })

  it('refuses a schema migrated by a newer rudder', async () => {
    const here = await place()
    try {
      await (await here.open()).close()
      await adminQuery(`UPDATE ${here.schema}.schema_version SET version = version + 1`)
      await expect(openStore(here.url)).rejects.toMatchObject({ code: 'FORMAT_TOO_NEW' })
    } finally {
      await here.done()
    }
  })
})
