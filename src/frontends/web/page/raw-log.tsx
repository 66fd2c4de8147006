/**
 * The raw log for a developer: each event's seq, time, type, producer and the fields that
 * never reach the model (`source`, `meta`), with the whole data one click away.
 */
import { useState } from 'preact/hooks'
import type { MessageSource, SessionEvent } from '../../../index.js'
import { sourceLabel } from '../../view/source-label.js'

const PAGE = 300

export function RawLog({ events }: { events: readonly SessionEvent[]; version: number }) {
  const [shown, setShown] = useState(PAGE)
  const start = Math.max(0, events.length - shown)
  return (
    <div class="raw-log" data-testid="raw-log">
      {start > 0 && (
        <button type="button" class="earlier" onClick={() => setShown(shown + PAGE)}>
          Show {Math.min(PAGE, start)} earlier of {start}
        </button>
      )}
      <table>
        <thead>
          <tr>
            <th>seq</th>
            <th>time</th>
            <th>type</th>
            <th>source</th>
            <th>data</th>
          </tr>
        </thead>
        <tbody>
          {events.slice(start).map((event) => (
            <Row key={event.seq} event={event} />
          ))}
        </tbody>
      </table>
    </div>
  )
}

function Row({ event }: { event: SessionEvent }) {
  const data = event.data as { source?: MessageSource; meta?: unknown }
  return (
    <tr data-seq={event.seq}>
      <td class="seq">{event.seq}</td>
      <td class="time">{new Date(event.time).toISOString().slice(11, 23)}</td>
      <td class="type">
        {event.type}
        {event.ignorable ? ' (ignorable)' : ''}
      </td>
      <td class="source">{data.source ? sourceLabel(data.source) : ''}</td>
      <td>
        <details>
          <summary>{summary(event)}</summary>
          <pre>{JSON.stringify(event.data, null, 2)}</pre>
        </details>
        {data.meta !== undefined && <pre class="meta">meta {JSON.stringify(data.meta)}</pre>}
      </td>
    </tr>
  )
}

function summary(event: SessionEvent): string {
  const text = JSON.stringify(event.data)
  return text.length > 120 ? `${text.slice(0, 119)}…` : text
}
