/**
 * The message editor: Enter sends (idle) or steers the running turn; Shift+Enter is a new line;
 * Queue sends a follow-up for after the current turn; Context injects the text as context from
 * a named producer. The text stays in the editor until the host accepted it.
 */
import { useState } from 'preact/hooks'

export type EditorAction =
  | { readonly kind: 'send' | 'steer' | 'queue'; readonly text: string }
  | { readonly kind: 'inject'; readonly text: string; readonly name: string }

export function Editor(props: {
  text: string
  onText: (text: string) => void
  isRunning: boolean
  isReadOnly: boolean
  onAction: (action: EditorAction) => Promise<boolean>
}) {
  const [isContext, setIsContext] = useState(false)
  const [name, setName] = useState('web')
  const [isBusy, setIsBusy] = useState(false)
  const run = async (action: EditorAction) => {
    if (action.text.trim() === '' || isBusy) return
    setIsBusy(true)
    try {
      if (await props.onAction(action)) props.onText('')
    } finally {
      setIsBusy(false)
    }
  }
  const primary = () =>
    run(
      isContext
        ? { kind: 'inject', text: props.text, name: name.trim() || 'web' }
        : { kind: props.isRunning ? 'steer' : 'send', text: props.text },
    )
  return (
    <div class="editor">
      {isContext && (
        <label class="context-name">
          context from plugin:
          <input
            data-testid="context-name"
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </label>
      )}
      <textarea
        data-testid="editor"
        rows={3}
        placeholder={
          props.isReadOnly
            ? 'Read-only: another process runs this session'
            : props.isRunning
              ? 'Enter steers the running turn · Queue sends after it'
              : 'Message · Enter sends · Shift+Enter new line'
        }
        disabled={props.isReadOnly}
        value={props.text}
        onInput={(event) => props.onText(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault()
            void primary()
          }
        }}
      />
      <div class="buttons">
        <button
          type="button"
          data-testid="primary"
          class="primary"
          disabled={props.isReadOnly || isBusy}
          onClick={() => void primary()}
        >
          {isContext ? 'Inject' : props.isRunning ? 'Steer' : 'Send'}
        </button>
        <button
          type="button"
          data-testid="queue"
          disabled={props.isReadOnly || isBusy || isContext}
          onClick={() => void run({ kind: 'queue', text: props.text })}
        >
          Queue
        </button>
        <label class="toggle">
          <input
            type="checkbox"
            data-testid="context-toggle"
            checked={isContext}
            onChange={(event) => setIsContext(event.currentTarget.checked)}
          />{' '}
          context
        </label>
      </div>
    </div>
  )
}
