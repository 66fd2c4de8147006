/**
 * PostgreSQL store benchmarks (issue 18), each beside a floor measured in the same run on the
 * same server: B4-pg durable append vs a plain batched INSERT of the same rows (with CPU, this
 * process's and the server's, beside the wall time), the durability point vs the floor's INSERT
 * and commit of the same 50 rows, B8-pg list with 1,000 sessions vs the bare query, and
 * follower latency (a commit on one connection → the event yielded by a follower on another).
 * The server is `RUDDER_BENCH_POSTGRES_URL` (default the test server); a schema `store_bench_*`
 * is made and dropped. Times are wall clock: the work happens in the server too.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { openStore, type SessionStore, type StoredSession } from '../src/stores/index.js'
import { type Append, appends } from './fixtures.js'
import { fmt, median, type Pair, type Row, ratios } from './measure.js'
import { WARM_APPENDS } from './stores.js'

const SERVER = process.env.RUDDER_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test'
/** `application_name` of the floor's connection, and of the store's (server CPU by process). */
const FLOOR_NAME = 'rudder_bench_floor'
const STORE_NAME = 'rudder_bench_store'

const envelope = (seq: number, [type, data]: Append) =>
  JSON.stringify({ seq, time: 1_700_000_000_000 + seq, type, data })

const wall = async (run: () => Promise<void>) => {
  const start = process.hrtime.bigint()
  await run()
  return Number(process.hrtime.bigint() - start) / 1e6
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}

export async function postgresBenchmarks(options: { full: boolean }): Promise<Row[]> {
  const schema = `store_bench_${randomBytes(4).toString('hex')}`
  const url = new URL(SERVER)
  url.searchParams.set('schema', schema)
  url.searchParams.set('application_name', STORE_NAME)
  const admin = new pg.Client({ connectionString: SERVER, application_name: FLOOR_NAME })
  try {
    await admin.connect()
  } catch (error) {
    return [
      {
        id: 'B4-pg',
        what: `PostgreSQL benchmarks skipped: no server at ${SERVER} (${(error as Error).message})`,
        figure: '-',
        floor: '-',
        ratio: '-',
        target: '-',
      },
    ]
  }
  const store = await openStore(url.toString())
  try {
    return [
      ...(await append(store, admin, schema, options.full)),
      ...(await listing(store, admin, schema)),
      ...(await followLatency(store, url.toString())),
    ]
  } finally {
    await store.close()
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
  }
}

/**
 * Timed pairs of B4-pg, after untimed runs of `WARM_APPENDS` appends (as B3/B4: V8 compiles the
 * append path between the 10,000th and the 35,000th append, which a process pays once; decision
 * 0181). Wall ratios swing on a shared machine, so as many pairs as B3/B4 had.
 */
const APPEND_PAIRS = 9

/**
 * The CPU time, in ms, the server spent in the backends serving connections named `name`
 * (`application_name`), from /proc: undefined unless the server runs on this machine and its
 * processes can be read. Beside the wall figures, which the machine's noise moves: the floor and
 * the subject should cost the server about the same.
 */
async function serverCpu(admin: pg.Client, name: string): Promise<number | undefined> {
  const pids = (
    await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [name],
    )
  ).rows.map((row) => row.pid)
  let ns = 0
  try {
    for (const pid of pids)
      ns += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0])
  } catch {
    return undefined
  }
  return pids.length > 0 ? ns / 1e6 : undefined
}

async function append(
  store: SessionStore,
  admin: pg.Client,
  schema: string,
  full: boolean,
): Promise<Row[]> {
  const events = appends(full ? 10_000 : 2_000, 3)
  const batches: Append[][] = []
  for (let index = 0; index < events.length; index += 50)
    batches.push(events.slice(index, index + 50))
  // The same table as the store's events, minus what the store owes beyond the rows: no lease,
  // no metadata, no notification (decision 0164).
  await admin.query(
    `CREATE TABLE ${schema}.floor_events (session_id text NOT NULL, seq integer NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))`,
  )
  // What every durable append owes the database beyond its rows, for the physical floor: the
  // lease fence (a heartbeat where the token still holds), the session row, the notification.
  await admin.query(
    `CREATE TABLE ${schema}.floor_leases (session_id text PRIMARY KEY, token text NOT NULL, heartbeat_at timestamptz NOT NULL)`,
  )
  await admin.query(
    `CREATE TABLE ${schema}.floor_sessions (id text PRIMARY KEY, updated_at bigint NOT NULL, event_count integer NOT NULL)`,
  )
  const warmRuns = Math.ceil(WARM_APPENDS / events.length)
  const sessions = await Promise.all(
    Array.from({ length: 2 * APPEND_PAIRS + warmRuns }, () => store.create()),
  )
  const finished: StoredSession[] = []
  const subjectPoints: number[] = []
  const floorPoints: number[] = []
  const commitPoints: number[] = []
  // Statements the store sends per durability point, counted at the driver (every connection
  // but the floor's): each is one round trip (the extended protocol's messages go in one write).
  let statements = 0
  let durabilityPoints = 0
  const send = pg.Client.prototype.query
  const counting = function (this: pg.Client, ...args: unknown[]) {
    if (this !== admin) statements++
    return (send as (...args: unknown[]) => unknown).apply(this, args)
  } as typeof send
  const subject = async () => {
    const session = sessions.pop()!
    pg.Client.prototype.query = counting
    try {
      for (const batch of batches) {
        for (const [type, data] of batch) session.append(type, data as never)
        const start = process.hrtime.bigint()
        await session.flush()
        subjectPoints.push(Number(process.hrtime.bigint() - start) / 1e6)
        durabilityPoints++
      }
    } finally {
      pg.Client.prototype.query = send
    }
    finished.push(session)
  }
  const floor = async () => {
    // A session id as long as the store's (a UUID): the rows and their index entries are the
    // same size, and so is the WAL the server writes for them.
    const id = randomUUID()
    let seq = 0
    for (const batch of batches) {
      const start = process.hrtime.bigint()
      const first = seq
      const lines = batch.map((item) => envelope(seq++, item))
      // Lines as one text split on newlines, seqs from the first and each line's place: a
      // text[] parameter's quotes are escaped by the client and unescaped by the server, and an
      // integer[] costs a quoted element each (the store sends them the same way).
      await admin.query(
        `INSERT INTO ${schema}.floor_events (session_id, seq, line) SELECT $1, $2::integer + n::integer - 1, l FROM unnest(string_to_array($3::text, E'\\n')) WITH ORDINALITY AS t(l, n)`,
        [id, first, lines.join('\n')],
      )
      floorPoints.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
  }
  // The floor plus the database work every durable append owes (the store's statement, sent by
  // hand for rows of the floor's own tables): this store's physical floor.
  const owedFloor = async () => {
    const id = randomUUID()
    const token = randomUUID()
    await admin.query(`INSERT INTO ${schema}.floor_leases VALUES ($1, $2, clock_timestamp())`, [
      id,
      token,
    ])
    await admin.query(`INSERT INTO ${schema}.floor_sessions VALUES ($1, 0, 0)`, [id])
    let seq = 0
    for (const batch of batches) {
      const first = seq
      const lines = batch.map((item) => envelope(seq++, item))
      await admin.query(
        `WITH lease AS (
           UPDATE ${schema}.floor_leases SET heartbeat_at = clock_timestamp() WHERE session_id = $1 AND token = $2 RETURNING 1
         ), ev AS (
           INSERT INTO ${schema}.floor_events (session_id, seq, line)
           SELECT $1, $3::integer + n::integer - 1, l FROM unnest(string_to_array($4::text, E'\\n')) WITH ORDINALITY AS t(l, n)
           WHERE EXISTS (SELECT 1 FROM lease)
         ), notified AS (
           SELECT pg_notify('${schema}_floor', $1) FROM lease
         )
         UPDATE ${schema}.floor_sessions SET updated_at = $5, event_count = $6
         WHERE id = $1 AND EXISTS (SELECT 1 FROM lease) AND EXISTS (SELECT 1 FROM notified)`,
        [id, token, first, lines.join('\n'), 1_700_000_000_000 + seq, seq],
      )
    }
  }
  const cpu = { subject: [] as number[], floor: [] as number[] }
  const serverNames = { subject: STORE_NAME, floor: FLOOR_NAME }
  const timed = async (which: 'subject' | 'floor', run: () => Promise<void>) => {
    ;(globalThis as { gc?: () => void }).gc?.()
    const server = await serverCpu(admin, serverNames[which])
    const used = process.cpuUsage()
    const time = await wall(run)
    const client = process.cpuUsage(used)
    const after = await serverCpu(admin, serverNames[which])
    if (server !== undefined && after !== undefined)
      cpu[which].push((client.user + client.system) / 1000 + after - server)
    return time
  }
  for (let warm = 0; warm < warmRuns; warm++) await subject()
  await floor()
  await owedFloor()
  subjectPoints.length = 0
  floorPoints.length = 0
  const pairs: Pair[] = []
  for (let run = 0; run < APPEND_PAIRS; run++) {
    // Alternating which goes first, so neither always follows the other's checkpoint or vacuum.
    if (run % 2 === 0) {
      const subjectTime = await timed('subject', subject)
      pairs.push({ subject: subjectTime, floor: await timed('floor', floor) })
    } else {
      const floorTime = await timed('floor', floor)
      pairs.push({ subject: await timed('subject', subject), floor: floorTime })
    }
  }
  // The subject against its physical floor, alternating which goes first as above.
  const owedPairs: Pair[] = []
  for (let run = 0; run < APPEND_PAIRS; run++) {
    if (run % 2 === 0) {
      const subjectTime = await wall(subject)
      owedPairs.push({ subject: subjectTime, floor: await wall(owedFloor) })
    } else {
      const floorTime = await wall(owedFloor)
      owedPairs.push({ subject: await wall(subject), floor: floorTime })
    }
  }
  for (let index = 0; index < 200; index++) {
    const start = process.hrtime.bigint()
    await admin.query('BEGIN')
    await admin.query('COMMIT')
    commitPoints.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  for (const session of finished) await session.close()
  // The same appends into a memory: store: the live session, its checks and the encoding, which
  // every store owes and the floor does not do. What B4-pg adds over it is the database path.
  const memory = await openStore('memory:')
  const inMemory = await Promise.all(
    Array.from({ length: APPEND_PAIRS + 1 }, () => memory.create()),
  )
  const memoryRun = async () => {
    const session = inMemory.pop()!
    for (const batch of batches) {
      for (const [type, data] of batch) session.append(type, data as never)
      await session.flush()
    }
  }
  await memoryRun()
  const memoryPairs: Pair[] = []
  for (let run = 0; run < APPEND_PAIRS; run++)
    memoryPairs.push({ subject: await wall(memoryRun), floor: await wall(floor) })
  await memory.close()
  const rows: Row[] = [
    {
      id: 'B4-pg',
      what: `postgres: append ${events.length.toLocaleString('en')} events, durability point every 50 (wall)`,
      figure: fmt.ms(median(pairs.map((pair) => pair.subject))),
      floor: `${fmt.ms(median(pairs.map((pair) => pair.floor)))} stringify+batched INSERT (split lines, seqs by ordinality)+commit`,
      ratio: fmt.ratio(ratios(pairs)),
      target: '≤ 1.3×',
    },
    {
      id: 'B4-pg',
      what: "  the subject against this store's physical floor, interleaved: the floor plus what each durable append owes the database (lease fence, session row, notification: the store's statement, by hand)",
      figure: fmt.ms(median(owedPairs.map((pair) => pair.subject))),
      floor: `${fmt.ms(median(owedPairs.map((pair) => pair.floor)))} physical floor`,
      ratio: fmt.ratio(ratios(owedPairs)),
      target: 'orientation',
    },
    {
      id: 'B4-pg',
      what: '  of which in memory: the same appends into a memory: store (live session, checks, encoding; no I/O)',
      figure: fmt.ms(median(memoryPairs.map((pair) => pair.subject))),
      floor: `${fmt.ms(median(memoryPairs.map((pair) => pair.floor)))} (same floor)`,
      ratio: fmt.ratio(ratios(memoryPairs)),
      target: 'orientation',
    },
  ]
  if (cpu.subject.length === APPEND_PAIRS && cpu.floor.length === APPEND_PAIRS)
    rows.push({
      id: 'B4-pg',
      what: '  CPU of the same runs: this process + the server backends serving it (local server)',
      figure: fmt.ms(median(cpu.subject)),
      floor: `${fmt.ms(median(cpu.floor))} (same floor)`,
      ratio: fmt.ratio(
        ratios(cpu.subject.map((subject, index) => ({ subject, floor: cpu.floor[index]! }))),
      ),
      target: 'orientation',
    })
  rows.push({
    id: 'B4-pg',
    what: '  statements (round trips) the store sends per durability point, counted at the driver',
    figure: (statements / durabilityPoints).toFixed(2),
    floor: '1 (the floor: one INSERT, autocommit)',
    ratio: `${(statements / durabilityPoints).toFixed(2)}×`,
    target: 'orientation',
  })
  rows.push({
    id: 'B4-pg',
    what: 'postgres: durability point latency p50 (wall)',
    figure: fmt.ms(median(subjectPoints)),
    floor: `${fmt.ms(median(floorPoints))} the floor's INSERT+commit of the same 50 rows (a bare BEGIN+COMMIT, which flushes nothing: ${fmt.ms(median(commitPoints))})`,
    ratio: `${(median(subjectPoints) / median(floorPoints)).toFixed(2)}×`,
    target: 'orientation',
  })
  return rows
}

async function listing(store: SessionStore, admin: pg.Client, schema: string): Promise<Row[]> {
  const total = 1000
  const existing = (await store.list({ limit: 100 })).length
  for (let index = existing; index < total; index++) await (await store.create()).close()
  const subject: number[] = []
  const floor: number[] = []
  for (let run = 0; run < 20; run++) {
    subject.push(await wall(async () => void (await store.list({ limit: 50 }))))
    floor.push(
      await wall(async () => {
        await admin.query(
          `SELECT header, event_count, updated_at FROM ${schema}.sessions ORDER BY updated_at DESC, id DESC LIMIT $1`,
          [50],
        )
      }),
    )
  }
  return [
    {
      id: 'B8-pg',
      what: `postgres: list the newest 50 of ${total.toLocaleString('en')} sessions (wall)`,
      figure: fmt.ms(median(subject)),
      floor: `${fmt.ms(median(floor))} the bare SELECT`,
      ratio: `${(median(subject) / median(floor)).toFixed(2)}×`,
      target: 'orientation',
    },
  ]
}

async function followLatency(store: SessionStore, url: string): Promise<Row[]> {
  const follower = await openStore(url)
  const session = await store.create()
  const controller = new AbortController()
  const seen = new Map<number, () => void>()
  const following = (async () => {
    for await (const event of follower.follow(session.header.id, { signal: controller.signal }))
      seen.get(event.seq)?.()
  })()
  const latencies: number[] = []
  try {
    for (let index = 0; index < 200; index++) {
      const arrived = new Promise<void>((resolve) => seen.set(index, resolve))
      const start = process.hrtime.bigint()
      session.append('user/message', {
        id: `m${index}`,
        content: [{ type: 'text', text: `message ${index}` }],
        source: { kind: 'plugin', name: 'bench' },
      } as never)
      await session.flush()
      await arrived
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
  } finally {
    controller.abort()
    await following
    await session.close()
    await follower.close()
  }
  return [
    {
      id: 'F-pg',
      what: 'postgres: follower latency, append+commit on one connection → yielded by a follower on another, p50 / p99',
      figure: `${fmt.ms(percentile(latencies, 50))} / ${fmt.ms(percentile(latencies, 99))}`,
      floor: '-',
      ratio: '-',
      target: 'orientation',
    },
  ]
}
