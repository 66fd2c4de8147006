/**
 * Durable SQLite appends without a sync on the main thread (decision 0146). An append commits
 * with `synchronous=NORMAL`, which in WAL mode writes the transaction's frames to the WAL and
 * syncs nothing; this then `fdatasync`s the WAL on the thread pool before the durability point
 * resolves. That is the one sync `synchronous=FULL` would have made inside the commit, so a
 * resolved flush survives a power loss as before, and the event loop never waits for the disk.
 */
import { type FileHandle, open } from 'node:fs/promises'
import type Database from 'better-sqlite3'

export type WalSync = {
  /**
   * Runs `work` in an immediate transaction that commits without a sync (frames written to
   * the WAL, visible to readers), restoring `synchronous=FULL` for every other commit.
   */
  commitUnsynced<T>(work: () => T): T
  /** Makes everything committed so far durable: one `fdatasync` of the WAL. */
  sync(): Promise<void>
  close(): Promise<void>
}

/**
 * The WAL sync of `db` at `path`, or undefined when the database is not in WAL mode (a file
 * system without shared memory): then appends keep committing with `synchronous=FULL`.
 */
export function createWalSync(db: Database.Database, path: string): WalSync | undefined {
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') return undefined
  // SQLite keeps the WAL beside the database under this name and deletes it only when the
  // last connection closes; ours stays open as long as this handle, so it is the same file.
  const walPath = `${path}-wal`
  let handle: Promise<FileHandle> | undefined
  // Built once: a transaction function per append would cost its wrappers every batch.
  const transaction = db.transaction((work: () => unknown) => work())
  return {
    commitUnsynced<T>(work: () => T): T {
      // A pragma takes effect when compiled, so it is executed each time, not prepared once.
      db.exec('PRAGMA synchronous = NORMAL')
      try {
        return transaction.immediate(work) as T
      } finally {
        db.exec('PRAGMA synchronous = FULL')
      }
    },
    async sync() {
      handle ??= open(walPath, 'r')
      const opened = handle
      try {
        await (await opened).datasync()
      } catch (error) {
        // A failed open is retried by the next sync; a failed sync is the caller's to report.
        if (handle === opened) handle = undefined
        await (await opened.catch(() => undefined))?.close().catch(() => {})
        throw error
      }
    },
    async close() {
      const opened = handle
      handle = undefined
      await (await opened?.catch(() => undefined))?.close()
    },
  }
}
