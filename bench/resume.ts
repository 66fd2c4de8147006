/**
 * B1 (resume to ready for input) at a small and a large size, and B9 (heap held by an idle open
 * session), for JSONL and SQLite. The floor of B1 is the same resume of a 1 MB session in the
 * same run: the target is flat (≤ 1.3×). The floor of B9 is the target itself (256 KB per idle
 * session), beside the session's log size. Default sizes are 1 MB and 100 MB; `--full` adds 1 GB.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from '../src/index.js'
import { openStore, type SessionStore } from '../src/stores/index.js'
import { scriptedProvider } from '../src/testing.js'
import { fmt, median, type Pair, type Row, ratios } from './measure.js'
import { bigLog, KINDS, type Kind, urlOf, writeSession } from './stores.js'

const MiB = 1024 * 1024
const gc = () => (globalThis as { gc?: () => void }).gc?.()

/** Wall time from `store.open` to an agent ready for input over the resumed session. */
async function resumeMs(store: SessionStore, id: string): Promise<number> {
  gc()
  const start = process.hrtime.bigint()
  const session = await store.open(id)
  const agent = createAgent({ session, provider: scriptedProvider([]) })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  await agent.dispose()
  await session.close()
  return ms
}

/** Heap retained by one open, idle session after a full collection, in bytes. */
async function idleHeap(store: SessionStore, id: string): Promise<number> {
  gc()
  gc()
  const before = process.memoryUsage().heapUsed
  const session = await store.open(id)
  const agent = createAgent({ session, provider: scriptedProvider([]) })
  await agent.idle()
  gc()
  gc()
  const held = process.memoryUsage().heapUsed - before
  await agent.dispose()
  await session.close()
  return held
}

/**
 * Heap retained by one open session after a turn, idle, before and after it releases its
 * history (what the agent does after `releaseHistoryAfterMs` idle, decision 0166), in bytes.
 */
async function heapAfterTurn(
  store: SessionStore,
  id: string,
): Promise<{ held: number; released: number }> {
  gc()
  gc()
  const before = process.memoryUsage().heapUsed
  const session = await store.open(id)
  const provider = scriptedProvider([{ text: 'done' }])
  const agent = createAgent({ session, provider })
  await agent.send('one more question').result
  await agent.idle()
  // The scripted provider keeps every request (and its transcript) for tests to read; a
  // provider that talks to a model keeps none.
  ;(provider.requests as unknown[]).length = 0
  gc()
  gc()
  const held = process.memoryUsage().heapUsed - before
  if (!(await session.releaseHistory())) throw new Error('bench: the session did not release')
  gc()
  gc()
  const released = process.memoryUsage().heapUsed - before
  await agent.dispose()
  await session.close()
  return { held, released }
}

export async function resumeBenchmarks(options: { full: boolean }): Promise<Row[]> {
  const directory = mkdtempSync(join(tmpdir(), 'rudder-bench-resume-'))
  const sizes = options.full ? [100 * MiB, 1024 * MiB] : [100 * MiB]
  const rows: Row[] = []
  try {
    for (const kind of KINDS as readonly Kind[]) {
      const store = await openStore(urlOf(kind, join(directory, kind)))
      const small = await writeSession(store, bigLog(MiB, 11))
      for (const size of sizes) {
        const large = await writeSession(store, bigLog(size, 12))
        await resumeMs(store, small) // warm caches and JIT
        await resumeMs(store, large)
        // 21 pairs, not 5: each resume takes a few ms of wall time, where one scheduling delay
        // moved a median of 5 by half (ratios read 0.91× and 1.66× in two runs of the same code).
        const pairs: Pair[] = []
        for (let index = 0; index < 21; index++)
          pairs.push({ subject: await resumeMs(store, large), floor: await resumeMs(store, small) })
        rows.push({
          id: 'B1',
          what: `${kind}: resume to ready of a ${size / MiB} MB session (wall)`,
          figure: fmt.ms(median(pairs.map((pair) => pair.subject))),
          floor: `${fmt.ms(median(pairs.map((pair) => pair.floor)))} same, 1 MB`,
          ratio: fmt.ratio(ratios(pairs)),
          target: '≤ 1.3×; ≤ 300 ms',
        })
        if (size !== 100 * MiB) continue
        const held = median([
          await idleHeap(store, large),
          await idleHeap(store, large),
          await idleHeap(store, large),
        ])
        rows.push({
          id: 'B9',
          what: `${kind}: heap held by an idle open ${size / MiB} MB session (after GC)`,
          figure: `${(held / 1024).toFixed(0)} KB`,
          floor: '256 KB target',
          ratio: `${(held / (256 * 1024)).toFixed(1)}×`,
          target: '≤ 256 KB',
        })
        const afterTurn = [
          await heapAfterTurn(store, large),
          await heapAfterTurn(store, large),
          await heapAfterTurn(store, large),
        ]
        const released = median(afterTurn.map((sample) => sample.released))
        rows.push({
          id: 'B9',
          what: `${kind}: same, after a turn, once idle it released its history`,
          figure: `${(released / 1024).toFixed(0)} KB`,
          floor: `${(median(afterTurn.map((sample) => sample.held)) / MiB).toFixed(1)} MB held before`,
          ratio: `${(released / (256 * 1024)).toFixed(1)}×`,
          target: '≤ 256 KB',
        })
      }
      await store.close()
    }
    return rows
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}
