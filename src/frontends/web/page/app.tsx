/**
 * The page: the session list beside the open session (one or the other on a phone), routed by
 * the URL's hash (`#/s/<id>`, `#/s/<id>/log`) so a reload opens the same view.
 */
import { useEffect, useState } from 'preact/hooks'
import { SessionList } from './session-list.js'
import { SessionView } from './session-view.js'

type Route =
  | { readonly view: 'list' }
  | { readonly view: 'session'; readonly id: string; readonly tab: 'transcript' | 'log' }

function readRoute(): Route {
  const match = /^#\/s\/([^/]+)(\/log)?$/.exec(location.hash)
  if (!match) return { view: 'list' }
  return {
    view: 'session',
    id: decodeURIComponent(match[1]!),
    tab: match[2] ? 'log' : 'transcript',
  }
}

export function App() {
  const [route, setRoute] = useState(readRoute)
  useEffect(() => {
    const onHash = () => setRoute(readRoute())
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])
  return (
    <div class={`app view-${route.view}`}>
      <SessionList {...(route.view === 'session' ? { activeId: route.id } : {})} />
      {route.view === 'session' ? (
        <SessionView key={route.id} id={route.id} tab={route.tab} />
      ) : (
        <main class="session empty">
          <p>Pick a session, or start a new one.</p>
        </main>
      )}
    </div>
  )
}
