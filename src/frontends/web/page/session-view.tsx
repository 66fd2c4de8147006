/**
 * One session: its status line and actions, the transcript (or the raw log), approval
 * questions, the inputs' fates and the editor.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { PendingItem } from '../../../index.js'
import type { DeliveryAnswer } from '../wire.js'
import { api, attempt } from './api-client.js'
import { Approvals } from './approvals.js'
import { Editor, type EditorAction } from './editor.js'
import { PendingPanel } from './pending-panel.js'
import { RawLog } from './raw-log.js'
import { createSessionClient, type SessionClient, type SessionState } from './session-client.js'
import { TranscriptView } from './transcript-view.js'

function useSessionClient(id: string): SessionClient | undefined {
  const [client, setClient] = useState<SessionClient>()
  const [, setVersion] = useState(0)
  useEffect(() => {
    // At most one render per frame however fast deltas arrive.
    let frame = 0
    const created = createSessionClient(id, () => {
      // While the log replays, nothing is drawn: the transcript appears once, caught up.
      if (frame !== 0 || created.state.connection === 'replaying') return
      frame = requestAnimationFrame(() => {
        frame = 0
        setVersion(created.state.version)
      })
    })
    setClient(created)
    return () => {
      cancelAnimationFrame(frame)
      created.close()
    }
  }, [id])
  return client
}

export function SessionView({ id, tab }: { id: string; tab: 'transcript' | 'log' }) {
  const client = useSessionClient(id)
  const [text, setText] = useState('')
  const main = useRef<HTMLElement>(null)
  const caughtUpAt = client?.state.caughtUpAt
  useLayoutEffect(() => {
    // When the first replay was drawn (ms since the page started): the bench's paint figure.
    const element = main.current
    if (!element || caughtUpAt === undefined || element.dataset.paintedMs !== undefined) return
    requestAnimationFrame(() => {
      element.dataset.paintedMs = String(Math.round(performance.now()))
    })
  }, [caughtUpAt])
  if (!client) return <main class="session" />
  const { state } = client
  const path = `/api/sessions/${encodeURIComponent(id)}`
  const onError = (message: string) => client.notify(message)
  const isRunning = state.transcript.status.agent !== 'idle'
  const isReadOnly = state.mode.kind === 'follow' && state.mode.busy !== undefined

  const onAction = async (action: EditorAction): Promise<boolean> => {
    const endpoint = { send: 'send', steer: 'steer', queue: 'send', inject: 'inject' }[action.kind]
    const body =
      action.kind === 'inject'
        ? { text: action.text, source: { kind: 'plugin', name: action.name } }
        : { text: action.text }
    const answer = await attempt(
      () => api<DeliveryAnswer>('POST', `${path}/${endpoint}`, body),
      onError,
    )
    if (answer) client.notify(undefined)
    return answer !== undefined
  }
  const post = (suffix: string, body: unknown = {}) =>
    attempt(() => api<unknown>('POST', `${path}/${suffix}`, body), onError)
  const cancel = async () => {
    const answer = (await post('cancel')) as { discarded: PendingItem[] } | undefined
    const back = (answer?.discarded ?? [])
      .map((item) =>
        item.data.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
      )
      .filter((value) => value !== '')
    if (back.length > 0) setText([...back, text].filter((value) => value !== '').join('\n'))
  }
  const fork = async () => {
    const answer = (await post('fork')) as { header: { id: string } } | undefined
    if (answer) location.hash = `#/s/${answer.header.id}`
  }

  return (
    <main class="session" data-testid="session" data-connection={state.connection} ref={main}>
      <header class="session-head">
        <div class="title">
          <a class="back" href="#/">
            ‹
          </a>
          <strong>{state.header?.title ?? 'untitled session'}</strong>{' '}
          <span class="meta id">{id}</span>
        </div>
        <StatusLine state={state} />
        <div class="actions">
          <button
            type="button"
            data-testid="cancel"
            disabled={!isRunning}
            onClick={() => void cancel()}
          >
            Cancel
          </button>
          <button type="button" onClick={() => void post('compact')} disabled={isReadOnly}>
            Compact
          </button>
          <button type="button" onClick={() => void fork()}>
            Fork
          </button>
          {state.mode.kind === 'live' ? (
            <button type="button" onClick={() => void post('close')}>
              Stop here
            </button>
          ) : (
            <button type="button" onClick={() => void post('open')}>
              Run here
            </button>
          )}
          <a class="button" href={`${path}/export`} download>
            Export
          </a>
          <a class={`button${tab === 'log' ? '' : ' selected'}`} href={`#/s/${id}`}>
            Transcript
          </a>
          <a
            class={`button${tab === 'log' ? ' selected' : ''}`}
            href={`#/s/${id}/log`}
            data-testid="log-tab"
          >
            Log
          </a>
        </div>
      </header>
      {state.notice !== undefined && (
        <div class="notice" role="status">
          {state.notice}{' '}
          <button type="button" onClick={() => client.notify(undefined)}>
            ×
          </button>
        </div>
      )}
      {tab === 'log' ? (
        <RawLog events={state.events} version={state.version} />
      ) : (
        <TranscriptView items={state.transcript.items} version={state.version} />
      )}
      <Approvals sessionId={id} approvals={state.approvals} onError={onError} />
      <PendingPanel inputs={state.inputs} />
      <Editor
        text={text}
        onText={setText}
        isRunning={isRunning}
        isReadOnly={isReadOnly}
        onAction={onAction}
      />
    </main>
  )
}

function StatusLine({ state }: { state: SessionState }) {
  const { status } = state.transcript
  const mode =
    state.mode.kind === 'live'
      ? 'running here'
      : state.mode.busy
        ? state.mode.busy.message
        : 'not running here: read-only until you send'
  return (
    <div
      class="status-line"
      data-testid="status"
      data-agent={status.agent}
      data-mode={state.mode.kind}
    >
      <span class={`chip agent-${status.agent}`}>{status.agent}</span>
      {status.turn !== undefined && (
        <span>
          turn {status.turn}
          {status.step === undefined ? '' : ` · step ${status.step}`}
        </span>
      )}
      {(state.label ?? status.model) !== undefined && <span>{state.label ?? status.model}</span>}
      {status.usage !== undefined && (
        <span>
          {status.usage.inputTokens} in · {status.usage.outputTokens} out
        </span>
      )}
      {status.retry !== undefined && (
        <span class="warn">
          retry {status.retry.attempt} in {Math.round(status.retry.delayMs / 1000)} s:{' '}
          {status.retry.error.message}
        </span>
      )}
      <span class="meta">
        seq {status.lastSeq} · {state.connection}
      </span>
      <span class={`mode mode-${state.mode.kind}`} data-testid="mode">
        {mode}
      </span>
    </div>
  )
}
