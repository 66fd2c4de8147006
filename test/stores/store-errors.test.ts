/**
 * Failures of the disk under a store (issue 9 item 15): a StoreError that says what was being
 * done, where, and how to fix it, never a raw errno error or a stack trace.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { StoreError } from '../../src/index.js'
import { storeFailure } from '../../src/stores/errors.js'
import { acquireLeaseFile } from '../../src/stores/jsonl/lease-file.js'
import { writeMeta } from '../../src/stores/jsonl/meta-file.js'
import { tempDirectory } from './support/stores.js'

const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code })

describe('store failures', () => {
  it.each([
    ['ENOSPC', /the disk is full: free space/],
    ['SQLITE_FULL', /the disk is full/],
    ['EROFS', /read-only: remount it read-write, or choose a store on a writable disk/],
    ['SQLITE_READONLY_DBMOVED', /read-only/],
    ['EACCES', /permission denied: make the store directory writable/],
  ])('%s becomes a StoreError with how to fix it', (code, fix) => {
    const error = storeFailure('cannot write /srv/store/x', errno(code))
    expect(error).toBeInstanceOf(StoreError)
    expect(error.message).toMatch(/^cannot write \/srv\/store\/x: /)
    expect(error.message).toMatch(fix)
  })

  it('a JSONL lease that cannot be written is a StoreError naming the session and directory', async () => {
    const directory = join(tempDirectory(), 'session')
    // A file where the session directory should be: every write inside it fails (ENOTDIR).
    writeFileSync(directory, 'in the way')
    const attempt = acquireLeaseFile(directory, 's1')
    await expect(attempt).rejects.toBeInstanceOf(StoreError)
    await expect(attempt).rejects.toThrow(
      `cannot take the writer lease of session s1 in ${directory}`,
    )
    await expect(attempt).rejects.toThrow(/a file is in the way/)
  })

  it('listing metadata that cannot be written is a StoreError naming the file', async () => {
    const directory = tempDirectory()
    mkdirSync(join(directory, 'meta.json'))
    const path = join(directory, 'meta.json')
    const attempt = writeMeta(path, {
      header: { id: 's1', formatVersion: 1, createdAt: 1 },
      eventCount: 0,
      updatedAt: 1,
    })
    await expect(attempt).rejects.toBeInstanceOf(StoreError)
    await expect(attempt).rejects.toThrow(`cannot write the listing metadata ${path}`)
  })
})
