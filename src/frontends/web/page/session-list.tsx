/**
 * The sessions of the store, newest first, with full-text search over their messages and a
 * button to start a new one. Sessions this host runs show their status.
 */
import { useEffect, useState } from 'preact/hooks'
import type { SearchHit } from '../../../index.js'
import type { SessionSummary } from '../wire.js'
import { api, attempt } from './api-client.js'

export function SessionList({ activeId }: { activeId?: string }) {
  const [sessions, setSessions] = useState<SessionSummary[]>([])
  const [query, setQuery] = useState('')
  const [hits, setHits] = useState<SearchHit[] | undefined>()
  const [problem, setProblem] = useState<string>()

  useEffect(() => {
    let isCurrent = true
    const load = async () => {
      const answer = await attempt(
        () => api<{ sessions: SessionSummary[] }>('GET', '/api/sessions?limit=100'),
        setProblem,
      )
      if (answer && isCurrent) setSessions(answer.sessions)
    }
    void load()
    // The list is a convenience; each open session has its own live stream.
    const timer = setInterval(() => void load(), 3000)
    return () => {
      isCurrent = false
      clearInterval(timer)
    }
  }, [activeId])

  const search = async (text: string) => {
    setQuery(text)
    if (text.trim() === '') return setHits(undefined)
    const answer = await attempt(
      () => api<{ hits: SearchHit[] }>('GET', `/api/search?q=${encodeURIComponent(text)}&limit=50`),
      setProblem,
    )
    if (answer) setHits(answer.hits)
  }
  const create = async () => {
    const answer = await attempt(
      () => api<{ header: { id: string } }>('POST', '/api/sessions', {}),
      setProblem,
    )
    if (answer) location.hash = `#/s/${answer.header.id}`
  }

  return (
    <nav class="sessions" data-testid="session-list">
      <div class="list-head">
        <button
          type="button"
          class="primary"
          data-testid="new-session"
          onClick={() => void create()}
        >
          New session
        </button>
        <input
          type="search"
          placeholder="Search messages"
          value={query}
          data-testid="search"
          onInput={(event) => void search(event.currentTarget.value)}
        />
      </div>
      {problem !== undefined && <div class="notice">{problem}</div>}
      {hits ? (
        <ul>
          {hits.length === 0 && <li class="meta">no message matches</li>}
          {hits.map((hit) => (
            <li key={`${hit.sessionId}:${hit.seq}`}>
              <a href={`#/s/${hit.sessionId}`} data-testid="hit">
                <span class="meta">
                  {hit.sessionId.slice(0, 8)} · seq {hit.seq}
                </span>
                <div>{hit.snippet}</div>
              </a>
            </li>
          ))}
        </ul>
      ) : (
        <ul>
          {sessions.map((session) => (
            <li key={session.id} class={session.id === activeId ? 'active' : ''}>
              <a href={`#/s/${session.id}`} data-testid="session-link" data-id={session.id}>
                <div>
                  {session.title ?? 'untitled'}
                  {session.live && (
                    <span class={`chip agent-${session.status ?? 'idle'}`}>
                      {session.status ?? 'idle'}
                    </span>
                  )}
                </div>
                <span class="meta">
                  {new Date(session.updatedAt).toLocaleString()} · {session.eventCount} events
                  {session.cwd === undefined ? '' : ` · ${session.cwd}`}
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </nav>
  )
}
