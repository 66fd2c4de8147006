/**
 * `memory:`: sessions held in this process only, stored as the same lines as the file formats
 * so that every rule above (checking, repair, fork, export) runs the same code. Gone when the
 * process ends. The lease is per store: a second writer in this process is refused.
 */
import { SessionBusyError, type SessionHeader } from '../../core/index.js'
import type { Backend, StoredRecord } from '../backend.js'
import { sessionExists, sessionNotFound } from '../errors.js'
import type { Lease } from '../lease.js'
import { listingOf, page } from '../listing.js'

type MemorySession = {
  readonly header: SessionHeader
  readonly headerText: string
  readonly lines: string[]
  updatedAt: number
  isHeld: boolean
  /** The projection checkpoint as stored (checkpoint.ts). */
  checkpoint?: string
}

export function createMemoryBackend(): Backend {
  const url = 'memory:'
  const sessions = new Map<string, MemorySession>()
  /** Followers of each session, told after every batch written. */
  const watchers = new Map<string, Set<() => void>>()

  function get(id: string): MemorySession {
    const session = sessions.get(id)
    if (!session) throw sessionNotFound(id, url)
    return session
  }

  function hold(session: MemorySession): Lease {
    if (session.isHeld) throw new SessionBusyError(session.header.id, process.pid)
    session.isHeld = true
    let isReleased = false
    return {
      async release() {
        if (isReleased) return
        isReleased = true
        session.isHeld = false
      },
    }
  }

  function add(header: SessionHeader, lines: string[], updatedAt: number): Lease {
    if (sessions.has(header.id)) throw sessionExists(header.id, url)
    const session = { header, headerText: JSON.stringify(header), lines, updatedAt, isHeld: false }
    sessions.set(header.id, session)
    return hold(session)
  }

  return {
    url,
    blobs: undefined,
    describe: (id) => `memory:${id}`,
    locate: (id, seq) => `memory:${id} seq ${seq}`,
    exists: async (id) => sessions.has(id),
    ids: async () => [...sessions.keys()],
    create: async (header) => add(header, [], header.createdAt),
    acquire: async (id) => hold(get(id)),
    readHeader: async (id) => ({ text: get(id).headerText, location: `memory:${id} header` }),
    async *records(id, options = {}) {
      const lines = get(id).lines
      const end = Math.min(lines.length, (options.throughSeq ?? lines.length) + 1)
      const batch: StoredRecord[] = []
      for (let seq = options.fromSeq ?? 0; seq < end; seq++)
        batch.push({
          kind: 'line',
          text: lines[seq]!,
          where: seq,
          position: seq,
        })
      yield batch
    },
    async openWriter(id) {
      const session = get(id)
      return {
        async write(events, lines) {
          session.lines.push(...lines)
          session.updatedAt = events.at(-1)?.time ?? session.updatedAt
          for (const onChange of watchers.get(id) ?? []) onChange()
        },
        // Rows and lines are keyed by seq: a prefix needs no byte position.
        positionOf: (seq) => seq,
        async close() {},
      }
    },
    async copyPrefix(sourceId, header, throughSeq) {
      const source = get(sourceId)
      const lease = add(header, source.lines.slice(0, throughSeq + 1), header.createdAt)
      return { lease, isCheckpointed: false }
    },
    readCheckpoint: async (id) => get(id).checkpoint,
    async writeCheckpoint(id, text) {
      get(id).checkpoint = text
    },
    async list(options) {
      const rows = [...sessions.values()].map((session) =>
        listingOf(session.header, session.lines.length, session.updatedAt),
      )
      return page(rows, options)
    },
    async remove(id) {
      sessions.delete(id)
    },
    async watch(id, onChange) {
      const set = watchers.get(id) ?? new Set()
      watchers.set(id, set)
      set.add(onChange)
      return async () => {
        set.delete(onChange)
      }
    },
    async close() {
      sessions.clear()
    },
  }
}
