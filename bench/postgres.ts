/**
 * PostgreSQL store benchmarks (issue 18), each beside a floor measured in the same run on the
 * same server: B4-pg durable append vs a plain batched INSERT of the same rows, the durability
 * point vs a bare commit round trip, B8-pg list with 1,000 sessions vs the bare query, and
 * follower latency (a commit on one connection → the event yielded by a follower on another).
 * The server is `RUDDER_BENCH_POSTGRES_URL` (default the test server); a schema `store_bench_*`
 * is made and dropped. Times are wall clock: the work happens in the server too.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { openStore, type SessionStore, type StoredSession } from '../src/stores/index.js'
import { type Append, appends } from './fixtures.js'
import { fmt, median, type Pair, type Row, ratios } from './measure.js'

const SERVER = process.env.RUDDER_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test'

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
  const admin = new pg.Client({ connectionString: SERVER })
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
  await admin.query(
    `CREATE TABLE ${schema}.floor_events (session_id text NOT NULL, seq integer NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))`,
  )
  const sessions = await Promise.all(Array.from({ length: 5 }, () => store.create()))
  const finished: StoredSession[] = []
  const subjectPoints: number[] = []
  const floorPoints: number[] = []
  const commitPoints: number[] = []
  let floorRun = 0
  const pairs: Pair[] = []
  for (let run = 0; run < 5; run++) {
    const subject = await wall(async () => {
      const session = sessions.pop()!
      for (const batch of batches) {
        for (const [type, data] of batch) session.append(type, data as never)
        const start = process.hrtime.bigint()
        await session.flush()
        subjectPoints.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
      finished.push(session)
    })
    const floor = await wall(async () => {
      const id = `floor-${floorRun++}`
      let seq = 0
      for (const batch of batches) {
        const seqs = batch.map(() => seq++)
        const lines = batch.map((item, index) => envelope(seqs[index]!, item))
        const start = process.hrtime.bigint()
        // Lines as one text split on newlines: cheaper than a text[] parameter, whose quotes
        // the client escapes and the server unescapes (the store does the same).
        await admin.query(
          `INSERT INTO ${schema}.floor_events (session_id, seq, line) SELECT $1, s, l FROM unnest($2::integer[], string_to_array($3::text, E'\\n')) AS t(s, l)`,
          [id, seqs, lines.join('\n')],
        )
        floorPoints.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
    })
    pairs.push({ subject, floor })
  }
  for (let index = 0; index < 200; index++) {
    const start = process.hrtime.bigint()
    await admin.query('BEGIN')
    await admin.query('COMMIT')
    commitPoints.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  for (const session of finished) await session.close()
  return [
    {
      id: 'B4-pg',
      what: `postgres: append ${events.length.toLocaleString('en')} events, durability point every 50 (wall)`,
      figure: fmt.ms(median(pairs.map((pair) => pair.subject))),
      floor: `${fmt.ms(median(pairs.map((pair) => pair.floor)))} stringify+batched INSERT (unnest, split lines)+commit`,
      ratio: fmt.ratio(ratios(pairs)),
      target: '≤ 1.3×',
    },
    {
      id: 'B4-pg',
      what: 'postgres: durability point latency p50 (wall)',
      figure: fmt.ms(median(subjectPoints)),
      floor: `${fmt.ms(median(commitPoints))} bare BEGIN+COMMIT round trip`,
      ratio: `${(median(subjectPoints) / median(commitPoints)).toFixed(2)}×`,
      target: 'orientation',
    },
  ]
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
