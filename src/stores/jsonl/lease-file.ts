/**
 * The JSONL writer lease: numbered lock files `writer.<n>.lock` in the session's directory
 * (decision 0011). The highest number is the current state: a holder's pid and host, or a
 * release marker. Taking the lease means creating the next number with `link`, which fails if
 * the file exists, so of two processes racing for one number exactly one wins; the winner then
 * checks that no higher number appeared meanwhile. Numbers only grow, so a late racer working
 * from an old view can never win against a newer holder.
 */
import { randomUUID } from 'node:crypto'
import { link, readdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SessionBusyError, StoreError } from '../../core/index.js'
import { storeFailure } from '../errors.js'
import { currentHolder, isHolderAlive, type Lease, type LeaseHolder } from '../lease.js'

const LOCK = /^writer\.(\d+)\.lock$/
const lockName = (generation: number) => `writer.${generation}.lock`

type LockState = { readonly holder?: LeaseHolder; readonly released?: true }

/** Lock generations present in `directory`, highest first. */
async function generations(directory: string): Promise<number[]> {
  const names = await readdir(directory)
  const out: number[] = []
  for (const name of names) {
    const match = LOCK.exec(name)
    if (match) out.push(Number(match[1]))
  }
  return out.sort((a, b) => b - a)
}

async function readState(directory: string, generation: number): Promise<LockState | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(join(directory, lockName(generation)), 'utf8'))
    if (typeof value !== 'object' || value === null) return {}
    const record = value as Record<string, unknown>
    if (record.released === true) return { released: true }
    if (typeof record.pid === 'number' && typeof record.host === 'string')
      return { holder: { pid: record.pid, host: record.host } }
    return {}
  } catch (error) {
    // Gone: a newer holder cleaned it up after we listed the directory. Look again.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    // Unreadable or not JSON: lock files are complete when they appear (they are linked
    // into place), so this is damage, and a damaged lock holds nothing.
    return {}
  }
}

/** Creates `generation` with `content` atomically; false if it exists already. */
async function createGeneration(
  directory: string,
  generation: number,
  content: string,
): Promise<boolean> {
  const temporary = join(directory, `writer.${process.pid}-${randomUUID()}.tmp`)
  await writeFile(temporary, content, { flag: 'wx' })
  try {
    await link(temporary, join(directory, lockName(generation)))
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    await unlink(temporary)
  }
}

async function removeBelow(directory: string, generation: number): Promise<void> {
  for (const older of await generations(directory)) {
    if (older >= generation) continue
    await unlink(join(directory, lockName(older))).catch(() => {
      // Another process cleaned it up first.
    })
  }
}

/**
 * Takes the writer lease of the session in `directory`. Throws `SessionBusyError` naming the
 * pid of a live holder (this process included); takes over from a dead one.
 */
export async function acquireLeaseFile(directory: string, sessionId: string): Promise<Lease> {
  try {
    return await takeLeaseFile(directory, sessionId)
  } catch (error) {
    throw storeFailure(
      `cannot take the writer lease of session ${sessionId} in ${directory}`,
      error,
    )
  }
}

/**
 * Takes the writer lease of a new session: `directory` was just made by this process's
 * `mkdir` and holds no log yet, so no other process can take a lease there (`acquire` refuses
 * a session without a log). Generation 1 is linked into place directly, without the three
 * listings of `acquireLeaseFile` (B11). Should another holder have raced us to generation 1
 * anyway, this falls back to `acquireLeaseFile`. Not for a directory that held leases before:
 * generation 1 may be gone there while a later one stands.
 */
export async function createLeaseFile(directory: string, sessionId: string): Promise<Lease> {
  try {
    const content = JSON.stringify({
      ...currentHolder(),
      token: randomUUID(),
      acquiredAt: Date.now(),
    })
    if (await createGeneration(directory, 1, content)) return leaseOf(directory, 1)
  } catch (error) {
    throw storeFailure(
      `cannot take the writer lease of session ${sessionId} in ${directory}`,
      error,
    )
  }
  return acquireLeaseFile(directory, sessionId)
}

async function takeLeaseFile(directory: string, sessionId: string): Promise<Lease> {
  const holder = currentHolder()
  const content = JSON.stringify({ ...holder, token: randomUUID(), acquiredAt: Date.now() })
  // Each lost race means another process made progress, so this ends quickly; the bound only
  // turns a pathological loop into an error.
  for (let attempt = 0; attempt < 100; attempt++) {
    const [latest] = await generations(directory)
    if (latest !== undefined) {
      const state = await readState(directory, latest)
      if (state === undefined) continue
      if (state.holder && isHolderAlive(state.holder))
        throw new SessionBusyError(sessionId, state.holder.pid, state.holder.host)
    }
    const mine = (latest ?? 0) + 1
    if (!(await createGeneration(directory, mine, content))) continue
    const [newest] = await generations(directory)
    if (newest !== undefined && newest > mine) {
      // A newer holder exists: our view was stale. Withdraw and look again.
      await unlink(join(directory, lockName(mine))).catch(() => {
        // Already cleaned up by the newer holder.
      })
      continue
    }
    await removeBelow(directory, mine)
    return leaseOf(directory, mine)
  }
  throw new StoreError(
    `could not take the writer lease of session ${sessionId} in ${directory}: too many processes raced for it; try again`,
  )
}

function leaseOf(directory: string, generation: number): Lease {
  let isReleased = false
  return {
    async release() {
      if (isReleased) return
      isReleased = true
      // A release marker one number up (rather than deleting ours) keeps numbers growing, so a
      // process that read an older state cannot win the next number against a newer holder.
      const marker = JSON.stringify({ released: true, by: process.pid })
      await createGeneration(directory, generation + 1, marker).catch(() => {
        // The directory is gone or read-only: there is nothing left to release.
      })
      await unlink(join(directory, lockName(generation))).catch(() => {
        // Already removed by a process that took over after the marker appeared.
      })
    },
  }
}
