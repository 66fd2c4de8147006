/**
 * Making directory entries durable: a new or renamed file survives a power loss only once its
 * directory is synced too.
 */
import { open } from 'node:fs/promises'
import type { StoreCounters } from './store.js'

/** fsyncs a directory so that files created or renamed in it are durable. */
export async function syncDirectory(
  path: string,
  counters: StoreCounters | undefined,
): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.sync()
    if (counters) counters.syncs++
  } finally {
    await handle.close()
  }
}
