/**
 * One writer per session across processes (docs/spec.md §9.1): a second process is refused with the
 * holder's pid, readers are not, and a lease left by a killed process is taken over.
 */
import { describe, expect, it } from 'vitest'
import { SessionBusyError } from '../../src/index.js'
import { turnStart, user } from '../support/log-builder.js'
import { startChild } from './support/child-process.js'
import { appendAll, typesOf } from './support/events.js'
import { FILE_STORE_KINDS, storeOf, tempDirectory, urlOf } from './support/stores.js'

describe.each(FILE_STORE_KINDS)('the %s store across processes', (kind) => {
  it('refuses a second process that opens a session for writing, naming the holder', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory)
    const session = await store.create()
    appendAll(session, [user('held here', 'ctx')])
    await session.flush()
    const child = startChild('store-child.ts', [
      urlOf(kind, directory),
      'try-open',
      session.header.id,
    ])
    expect(await child.next()).toMatchObject({
      event: 'refused',
      name: 'SessionBusyError',
      code: 'SESSION_BUSY',
      pid: process.pid,
      message: expect.stringContaining(`open in process ${process.pid}`),
    })
    await session.close()
  })

  it('refuses this process while a child holds the lease, and lets it read', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory)
    const session = await store.create()
    appendAll(session, [user('written first', 'ctx')])
    await session.close()
    const child = startChild('store-child.ts', [urlOf(kind, directory), 'hold', session.header.id])
    const ready = await child.next()
    const attempt = store.open(session.header.id)
    await expect(attempt).rejects.toBeInstanceOf(SessionBusyError)
    await expect(attempt).rejects.toMatchObject({ pid: ready.pid })
    expect((await store.read(session.header.id)).events).toEqual(session.residentEvents)
  })

  it('takes over a lease left by a process that was killed, and repairs what it left open', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory)
    const session = await store.create()
    appendAll(session, [turnStart(1), user('interrupted')])
    await session.close()
    const child = startChild('store-child.ts', [urlOf(kind, directory), 'hold', session.header.id])
    const ready = await child.next()
    // The child opened (and so already repaired) the log; kill it while it holds the lease.
    expect(typesOf(ready.events as never)).toBe('turn/start user/message turn/end')
    await expect(store.open(session.header.id)).rejects.toBeInstanceOf(SessionBusyError)
    await child.kill()
    const reopened = await store.open(session.header.id)
    expect(typesOf(reopened.residentEvents)).toBe('turn/start user/message turn/end')
    await reopened.close()
  })
})
