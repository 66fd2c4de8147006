/**
 * The writer lease (docs/spec.md §9.1): one process writes a session at a time. A lease names its
 * holder's pid and host; a lease whose holder is dead is taken over. Readers never take one.
 */
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/** Held by the one writer of a session; `release` lets the next one in. */
export interface Lease {
  /** Gives the lease up. Idempotent; never throws for a lease already gone. */
  release(): Promise<void>
}

/** Who holds a lease. */
export type LeaseHolder = { readonly pid: number; readonly host: string }

/** This process, as a lease holder. */
export function currentHolder(): LeaseHolder {
  return { pid: process.pid, host: hostname() }
}

/**
 * Whether the holder may still be writing. A holder on another host cannot be checked and
 * counts as alive (the safe answer). A zombie (exited, not yet reaped) counts as dead.
 */
export function isHolderAlive(holder: LeaseHolder): boolean {
  if (holder.host !== hostname()) return true
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return false
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    // EPERM: the process exists but belongs to another user, so it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  return !isZombie(holder.pid)
}

function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The state letter follows the command name, which is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
  } catch {
    // No /proc entry: the process is gone between the two checks, or /proc is not mounted.
    return false
  }
}
