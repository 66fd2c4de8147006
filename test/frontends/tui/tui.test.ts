/**
 * The terminal UI end to end: the built `rudder` in a real pseudo-terminal with a scripted
 * model that holds its stream until the test creates a file, the screen read as a person sees
 * it, then the session log read back from the store (issue 12, docs/spec.md §11).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkLog, openStore, type SessionEvent } from '../../../src/index.js'
import { cleanEnv, runCli } from '../cli/run-cli.js'
import { dialogueOf, writeUnreadSession } from '../unread-history.js'
import { KEYS, killAfterEach, runInTerminal, type TerminalRun } from './pty.js'

const scratch = mkdtempSync(join(tmpdir(), 'rudder-tui-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const track = killAfterEach()

type Setup = { dir: string; workspace: string; store: string; env: Record<string, string> }

function setup(): Setup {
  const dir = mkdtempSync(join(scratch, 'case-'))
  return {
    dir,
    workspace: mkdtempSync(join(dir, 'ws-')),
    store: `sqlite:${join(dir, 'sessions.db')}`,
    env: cleanEnv(),
  }
}

function start(context: Setup, steps: unknown[], extra: readonly string[] = []): TerminalRun {
  const script = join(context.dir, `script-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(script, JSON.stringify(steps))
  const run = runInTerminal(
    [
      '--provider',
      `scripted:${script}`,
      '--store',
      context.store,
      '--cwd',
      context.workspace,
      ...extra,
    ],
    { env: context.env, cwd: context.workspace },
  )
  track(run)
  return run
}

async function sessions(
  context: Setup,
): Promise<{ id: string; events: readonly SessionEvent[] }[]> {
  const store = await openStore(context.store)
  try {
    const listed = await store.list({ limit: 100 })
    const out = []
    for (const listing of listed) {
      const snapshot = await store.read(listing.id)
      expect(checkLog(snapshot.events), listing.id).toEqual([])
      out.push({ id: listing.id, events: snapshot.events })
    }
    return out
  } finally {
    await store.close()
  }
}

/** Waits for the status line to say the agent is idle. */
/** The person's own prompts in a log (not context, steering or references). */
function personPrompts(events: readonly SessionEvent[]): SessionEvent[] {
  return events.filter(
    (event) =>
      event.type === 'user/message' &&
      (event.data as { source: { kind: string } }).source.kind === 'user',
  )
}

const firstText = (event: SessionEvent) =>
  (event.data as { content: { text: string }[] }).content[0]!.text

const idle = (run: TerminalRun) =>
  run.waitFor(/session \w{8} · (turn \d+ · )?idle/, 'the idle status')

describe('rudder in a terminal', () => {
  it('sends with Enter, steers a running turn with Enter and queues a follow-up with Alt+Enter', async () => {
    const context = setup()
    const run = start(context, [
      { text: 'Reading the files.', holdUntilFile: 'go-1' },
      { text: 'Steered answer.' },
      { text: 'Follow-up answer.' },
    ])
    await idle(run)
    run.type('first task')
    run.type(KEYS.enter)
    await run.waitFor('Reading the files.')
    run.type('use tabs')
    run.type(KEYS.enter)
    await run.waitFor(/steer \[staged\] use tabs/)
    run.type('then add tests')
    run.type(KEYS.altEnter)
    // Frames may arrive in pieces: wait for everything asserted below the transcript at once.
    const screen = await run.waitFor(
      (text) =>
        /prompt \[queued\] then add tests/.test(text) && /turn 1 step 1 · running/.test(text),
      'the queued follow-up and the running status',
    )
    expect(screen).toMatch(/› first task/)
    writeFileSync(join(context.dir, 'go-1'), '')
    const done = await run.waitFor('Follow-up answer.')
    expect(done).toMatch(/↳ steer before step 2: use tabs/)
    expect(done).toMatch(/› then add tests/)
    await idle(run)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)

    const [session] = await sessions(context)
    const events = session!.events
    const steering = events.find((event) => event.type === 'steering/message')!
    expect(steering.data).toMatchObject({ turn: 1, content: [{ type: 'text', text: 'use tabs' }] })
    const stepTwo = events.find(
      (event) => event.type === 'step/start' && (event.data as { step: number }).step === 2,
    )!
    expect(steering.seq).toBeLessThan(stepTwo.seq)
    const prompts = personPrompts(events)
    expect(prompts.map(firstText)).toEqual(['first task', 'then add tests'])
    const turnOfFollowUp = events.filter((event) => event.type === 'turn/start').at(-1)!
    expect(turnOfFollowUp.data).toMatchObject({ turn: 2 })
    expect(prompts[1]!.seq).toBe(turnOfFollowUp.seq + 1)
  })

  it('cancels with Esc, puts the queued text back in the editor, quits with Ctrl-C twice (130) and resumes with the transcript', async () => {
    const context = setup()
    const run = start(context, [{ text: 'Thinking hard.', holdUntilFile: 'never' }])
    await idle(run)
    run.type('long task')
    run.type(KEYS.enter)
    await run.waitFor('Thinking hard.')
    run.type('next thing')
    run.type(KEYS.altEnter)
    await run.waitFor(/prompt \[queued\] next thing/)
    run.type(KEYS.escape)
    // The turn ends canceled, the queue empties, and the queued text is back in the editor.
    await run.waitFor(
      (text) =>
        /turn 1 ended: canceled/.test(text) &&
        !/\[queued\]/.test(text) &&
        text.split('\n').some((line) => line.startsWith('next thing')),
      'the canceled turn and the queued text back in the editor',
    )
    run.type(KEYS.ctrlC)
    await run.waitFor('press Ctrl-C again to quit')
    run.type(KEYS.ctrlC)
    expect(await run.exited).toBe(130)

    const [session] = await sessions(context)
    const ends = session!.events.filter((event) => event.type === 'turn/end')
    expect(ends.map((event) => (event.data as { reason: { kind: string } }).reason.kind)).toEqual([
      'canceled',
    ])
    const texts = session!.events
      .filter((event) => event.type === 'user/message')
      .map((event) => JSON.stringify(event.data))
    expect(texts.join('\n')).not.toContain('next thing')

    const again = start(context, [{ text: 'Back again.' }], ['--resume', session!.id])
    const resumed = await idle(again)
    expect(resumed).toMatch(/› long task/)
    expect(resumed).toContain('Thinking hard.')
    expect(resumed).toMatch(/turn 1 ended: canceled/)
    again.type(KEYS.ctrlD)
    expect(await again.exited).toBe(0)
  })

  it('resumes a session whose history the store did not read: the whole transcript, then a turn', async () => {
    const context = setup()
    const { id } = await writeUnreadSession(context.store, { cwd: context.workspace })
    const run = start(context, [{ text: 'Third answer.' }], ['--resume', id])
    const resumed = await idle(run)
    expect(resumed).toMatch(/› first question[\s\S]*first answer[\s\S]*› second question/)
    expect(resumed).toContain('second answer')
    run.type('third question')
    run.type(KEYS.enter)
    await run.waitFor('Third answer.')
    await idle(run)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)
    const [session] = await sessions(context)
    expect(dialogueOf(session!.events).slice(-2)).toEqual(['third question', 'Third answer.'])
    expect(
      session!.events.find((event) => event.type === 'turn/start' && event.seq > 14)?.data,
    ).toMatchObject({ turn: 3 })
  })

  it('withdraws one queued prompt from the pending panel: the next one runs, the withdrawn text never reaches the log', async () => {
    const context = setup()
    const run = start(context, [
      { text: 'Working on it.', holdUntilFile: 'go-1' },
      { text: 'Second answer.' },
    ])
    await idle(run)
    run.type('first task')
    run.type(KEYS.enter)
    await run.waitFor('Working on it.')
    run.type('obsolete idea')
    run.type(KEYS.altEnter)
    await run.waitFor(/1\. prompt \[queued\] obsolete idea/)
    run.type('keep this one')
    run.type(KEYS.altEnter)
    await run.waitFor(/2\. prompt \[queued\] keep this one/)
    // Shift+Tab selects the newest row; Up moves to the first; x withdraws it.
    run.type(KEYS.shiftTab)
    await run.waitFor(/› 2\. prompt \[queued\] keep this one/)
    run.type(KEYS.up)
    await run.waitFor(/› 1\. prompt \[queued\] obsolete idea/)
    run.type('x')
    const withdrawn = await run.waitFor(
      (text) =>
        /prompt \[withdrawn\] obsolete idea/.test(text) &&
        /› 1\. prompt \[queued\] keep this one/.test(text) &&
        /turn 1 step 1 · running/.test(text),
      'the first row withdrawn, the second selected and renumbered, the turn still running',
    )
    // Dropped, not edited: the editor stays empty.
    expect(withdrawn.split('\n').some((line) => line.startsWith('obsolete idea'))).toBe(false)
    run.type(KEYS.escape)
    await run.waitFor((text) => !/› 1\./.test(text), 'the panel giving the focus back')
    writeFileSync(join(context.dir, 'go-1'), '')
    // Frames may arrive in pieces: wait for the answer and the panel's rows at once.
    await run.waitFor(
      (text) =>
        text.includes('Second answer.') &&
        /› keep this one/.test(text) &&
        /prompt \[withdrawn\] obsolete idea/.test(text),
      'the second prompt answered and the withdrawn row still shown',
    )
    await idle(run)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)

    const [session] = await sessions(context)
    const events = session!.events
    expect(JSON.stringify(events)).not.toContain('obsolete idea')
    const prompts = personPrompts(events)
    expect(prompts.map(firstText)).toEqual(['first task', 'keep this one'])
    const ends = events.filter((event) => event.type === 'turn/end')
    expect(ends.map((event) => (event.data as { reason: { kind: string } }).reason.kind)).toEqual([
      'completed',
      'completed',
    ])
    const secondTurn = events.filter((event) => event.type === 'turn/start').at(-1)!
    expect(secondTurn.data).toMatchObject({ turn: 2 })
    expect(prompts[1]!.seq).toBe(secondTurn.seq + 1)
  })

  it('/withdraw n drops a queued prompt, /withdraw a staged steer; Enter on a selected row puts its text back in the editor', async () => {
    const context = setup()
    const run = start(context, [{ text: 'Holding.', holdUntilFile: 'go-1' }])
    await idle(run)
    run.type('first task')
    run.type(KEYS.enter)
    await run.waitFor('Holding.')
    run.type('edit me')
    run.type(KEYS.altEnter)
    run.type('drop me')
    run.type(KEYS.altEnter)
    await run.waitFor(/2\. prompt \[queued\] drop me/)
    run.type('/withdraw 2')
    run.type(KEYS.enter)
    await run.waitFor(/prompt \[withdrawn\] drop me/)
    // A staged steer is withdrawable too: /withdraw without a number takes the newest row.
    run.type('wrong steer')
    run.type(KEYS.enter)
    await run.waitFor(/2\. steer \[staged\] wrong steer/)
    run.type('/withdraw')
    run.type(KEYS.enter)
    await run.waitFor(/steer \[withdrawn\] wrong steer/)
    run.type('/withdraw 5')
    run.type(KEYS.enter)
    await run.waitFor('/withdraw 5: the pending panel numbers its rows 1;')
    run.type(KEYS.altUp)
    await run.waitFor(/› 1\. prompt \[queued\] edit me/)
    run.type(KEYS.enter)
    await run.waitFor(
      (text) =>
        !/\[queued\]/.test(text) && text.split('\n').some((line) => line.startsWith('edit me')),
      'the withdrawn text in the editor and no queued row',
    )
    writeFileSync(join(context.dir, 'go-1'), '')
    const after = await idle(run)
    // The turn ended and nothing else ran; the text waits in the editor.
    expect(after.split('\n').some((line) => line.startsWith('edit me'))).toBe(true)
    expect(after).not.toMatch(/turn 2/)
    run.type(KEYS.ctrlC)
    await run.waitFor('press Ctrl-C again to quit')
    run.type(KEYS.ctrlC)
    expect(await run.exited).toBe(130)

    const [session] = await sessions(context)
    const text = JSON.stringify(session!.events)
    expect(text).not.toContain('edit me')
    expect(text).not.toContain('drop me')
    expect(text).not.toContain('wrong steer')
    expect(session!.events.some((event) => event.type === 'steering/message')).toBe(false)
    expect(session!.events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
  })

  it('asks before a tool runs: allow once runs it, deny sends the typed reason to the model', async () => {
    const context = setup()
    const run = start(context, [
      { toolCalls: [{ id: 'w1', name: 'write', args: { path: 'a.txt', content: 'hello\n' } }] },
      { text: 'Wrote it.' },
      { toolCalls: [{ id: 'w2', name: 'write', args: { path: 'b.txt', content: 'no\n' } }] },
      { text: 'Understood.' },
    ])
    await idle(run)
    run.type('write a')
    run.type(KEYS.enter)
    await run.waitFor(/Allow write\?/)
    run.type('y')
    await run.waitFor('Wrote it.')
    expect(readFileSync(join(context.workspace, 'a.txt'), 'utf8')).toBe('hello\n')
    await idle(run)
    run.type('write b')
    run.type(KEYS.enter)
    await run.waitFor(/Allow write\?/)
    run.type('n')
    await run.waitFor('reason for the model')
    run.type('not in this repo')
    run.type(KEYS.enter)
    const screen = await run.waitFor('Understood.')
    expect(screen).toMatch(/✗ write b\.txt denied/)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)

    const [session] = await sessions(context)
    const results = session!.events.filter((event) => event.type === 'tool/result')
    expect(results.map((event) => (event.data as { isError: boolean }).isError)).toEqual([
      false,
      true,
    ])
    expect(JSON.stringify(results[1]!.data)).toContain('not in this repo')
  })

  it('shows injected context folded and labelled by its source, expanded with Ctrl-O; @path attaches a file', async () => {
    const context = setup()
    writeFileSync(join(context.workspace, 'notes.md'), 'line one\nline two\n')
    const run = start(context, [{ text: 'Read your notes.' }])
    await idle(run)
    run.type('/inject the build uses pnpm')
    run.type(KEYS.enter)
    await run.waitFor(/▸ plugin:tui \(1 line, Ctrl-O to expand\)/)
    run.type('look at @notes.md')
    run.type(KEYS.enter)
    await run.waitFor('Read your notes.')
    run.type(KEYS.ctrlO)
    const expanded = await run.waitFor('line two')
    expect(expanded).toContain('the build uses pnpm')
    expect(expanded).toContain('Contents of notes.md:')
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)

    const [session] = await sessions(context)
    const contexts = session!.events
      .filter((event) => event.type === 'user/message')
      .map(
        (event) =>
          event.data as { source: { kind: string; name?: string }; content: { text: string }[] },
      )
      .filter((data) => data.source.kind === 'plugin' && data.source.name === 'tui')
    expect(contexts.map((data) => data.content[0]!.text)).toEqual([
      'the build uses pnpm',
      'Contents of notes.md:\n\nline one\nline two\n',
    ])
  })

  it('/fork continues a copy, /compact summarizes, and /resume picks a session', async () => {
    const context = setup()
    const long = `${'word '.repeat(20_000)}END-ONE`
    const run = start(context, [
      { text: long },
      { text: 'Second answer.' },
      { text: 'The summary.' },
    ])
    await idle(run)
    run.type('one')
    run.type(KEYS.enter)
    await run.waitFor('END-ONE')
    await idle(run)
    run.type('two')
    run.type(KEYS.enter)
    await run.waitFor('Second answer.')
    await idle(run)
    run.type('/compact keep it short')
    run.type(KEYS.enter)
    await run.waitFor(/compacted \(manual\): [\d,]+ → [\d,]+ tokens/)
    const before = run.text().match(/session (\w{8})/)![1]!
    run.type('/fork')
    run.type(KEYS.enter)
    const note = await run.waitFor(/forked \S+ into \S+/)
    const after = note.match(/forked \S+ into (\w{8})/)![1]!
    expect(after).not.toBe(before)
    // A frame may arrive in pieces: wait for the status line to name the fork.
    const forked = await run.waitFor(`session ${after}`)
    expect(forked).toContain('Second answer.')
    run.type('/resume')
    run.type(KEYS.enter)
    await run.waitFor('Resume which session?')
    run.type(KEYS.enter)
    await run.waitFor(new RegExp(`session ${before}`))
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)

    const all = await sessions(context)
    expect(all).toHaveLength(2)
    const original = all.find((session) => session.id.startsWith(before))!
    const compaction = original.events.find((event) => event.type === 'compaction')!
    expect(JSON.stringify(compaction.data)).toContain('The summary.')
  })

  it('@session:<id> attaches a snapshot of another session as a reference', async () => {
    const context = setup()
    // Each session runs its own copy of the script: both answer with its first step.
    const run = start(context, [{ text: 'The answer is 42.' }])
    await idle(run)
    run.type('what is the answer?')
    run.type(KEYS.enter)
    await run.waitFor('The answer is 42.')
    await idle(run)
    const [first] = await sessions(context)
    run.type('/new')
    run.type(KEYS.enter)
    // The note with the new id: "/new"'s own completion reads "start a new session in …".
    await run.waitFor(/new session [0-9a-f]{8}-/)
    run.type(`compare with @session:${first!.id}`)
    run.type(KEYS.enter)
    const screen = await run.waitFor(/› compare with[\s\S]*The answer is 42\./)
    expect(screen).toContain(`◆ reference:${first!.id}@`)
    await idle(run)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)
    const second = (await sessions(context)).find((session) => session.id !== first!.id)!
    const reference = second.events
      .map((event) => event.data as { source?: { kind: string }; content?: { text: string }[] })
      .find((data) => data.source?.kind === 'reference')!
    expect(reference.source).toEqual({
      kind: 'reference',
      sessionId: first!.id,
      throughSeq: first!.events.length - 1,
    })
    expect(reference.content![0]!.text).toContain('The answer is 42.')
  })

  it('a prompt typed while /new opens its session goes to that session, not lost', async () => {
    const context = setup()
    const run = start(context, [{ text: 'First answer.' }])
    await idle(run)
    run.type('one')
    run.type(KEYS.enter)
    await run.waitFor('First answer.')
    await idle(run)
    // Typed at once, while the new session is still being opened.
    run.type('/new')
    run.type(KEYS.enter)
    run.type('two')
    run.type(KEYS.enter)
    await run.waitFor(/› two[\s\S]*First answer\./)
    await idle(run)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)
    const stored = await sessions(context)
    expect(stored).toHaveLength(2)
    const prompts = stored.map((session) =>
      session.events
        .filter((event) => event.type === 'user/message')
        .map((event) => (event.data as { content: { text: string }[] }).content[0]!.text),
    )
    expect(prompts.sort()).toEqual([['one'], ['two']])
  })

  it('/model switches the model from the next step, logged as a request/header', async () => {
    const context = setup()
    const run = start(context, [{ text: 'First.' }, { text: 'Second.' }])
    await idle(run)
    run.type('one')
    run.type(KEYS.enter)
    await run.waitFor('First.')
    await idle(run)
    run.type('/model mini')
    run.type(KEYS.enter)
    await run.waitFor('model: scripted/mini from the next step')
    run.type('two')
    run.type(KEYS.enter)
    await run.waitFor('Second.')
    await idle(run)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)
    const [session] = await sessions(context)
    const headers = session!.events
      .filter((event) => event.type === 'request/header')
      .map((event) => (event.data as { model: string }).model)
    expect(headers.at(-1)).toBe('mini')
    expect(headers[0]).not.toBe('mini')
  })

  it('takes prompts typed at start-up, before the session is open, and sends them in order', async () => {
    const context = setup()
    const run = start(context, [{ text: 'First answer.' }, { text: 'Second answer.' }])
    // The first frame: the editor takes keys while the host opens (docs/decisions/0083).
    await run.waitFor(/starting…| · idle · /, 'the first frame')
    run.type('early one')
    run.type(KEYS.enter)
    run.type('early two')
    run.type(KEYS.enter)
    await run.waitFor('Second answer.')
    await idle(run)
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)
    const [only] = await sessions(context)
    expect(personPrompts(only!.events).map(firstText)).toEqual(['early one', 'early two'])
  })

  it('a session that cannot be opened after the first frame restores the terminal and says why', async () => {
    const context = setup()
    const run = start(context, [{ text: 'never' }], ['--resume', 'no-such-session'])
    const code = await run.exited
    expect(code).not.toBe(0)
    const output = run.output()
    // The start-up screen was up (alternate screen entered), and was left before the message.
    expect(output).toContain('\x1b[?1049h')
    const left = output.lastIndexOf('\x1b[?1049l')
    expect(left).toBeGreaterThan(-1)
    expect(output.slice(left)).toMatch(/no-such-session/)
  })

  it('quits with Ctrl-D pressed as soon as the first frame is up', async () => {
    const context = setup()
    const run = start(context, [{ text: 'never' }])
    await run.waitFor(/starting…| · idle · /, 'the first frame')
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)
    expect(run.output()).toContain('\x1b[?1049l')
  })

  it('rudder -i "task" opens the UI and sends the task', async () => {
    const context = setup()
    const run = start(context, [{ text: 'Task received.' }], ['-i', 'do the thing'])
    const screen = await run.waitFor('Task received.')
    expect(screen).toMatch(/› do the thing/)
    await idle(run)
    run.type('/quit')
    run.type(KEYS.enter)
    expect(await run.exited).toBe(0)
    await sessions(context)
  })

  it('reflows on resize and writes no colour with NO_COLOR', async () => {
    const context = setup()
    context.env.NO_COLOR = '1'
    const sentence = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'
    const run = start(context, [{ text: sentence }])
    await idle(run)
    run.type('go')
    run.type(KEYS.enter)
    await run.waitFor('lambda mu')
    await idle(run)
    run.resize(30, 20)
    const narrow = await run.waitFor(
      (screen) => screen.includes('lambda') && !screen.includes('epsilon zeta eta theta'),
      'the answer wrapped to 30 columns',
    )
    const rows = narrow.split('\n')
    expect(rows.every((row) => row.length <= 30)).toBe(true)
    expect(rows.some((row) => row.trim().startsWith('lambda') || row.includes(' mu'))).toBe(true)
    // SGR colour codes (foreground 30–39) never appear; cursor and screen control may.
    expect(run.output()).not.toMatch(new RegExp(`${String.fromCharCode(27)}\\[(?:\\d+;)*3\\dm`))
    run.type(KEYS.ctrlD)
    expect(await run.exited).toBe(0)
  })

  it('SIGTERM during a turn ends it canceled in the log and restores the terminal', async () => {
    const context = setup()
    const run = start(context, [{ text: 'Working slowly.', holdUntilFile: 'never' }])
    await idle(run)
    run.type('slow task')
    run.type(KEYS.enter)
    await run.waitFor('Working slowly.')
    run.signal('SIGTERM')
    expect(await run.exited).toBe(143)
    // The alternate screen was left: the last thing written switches back to the normal one.
    expect(run.output()).toContain('\x1b[?1049l')
    const [session] = await sessions(context)
    const end = session!.events.find((event) => event.type === 'turn/end')!
    expect(end.data).toMatchObject({ reason: { kind: 'canceled' } })
  })

  it('keeps the headless contract without a terminal', async () => {
    const context = setup()
    const noTask = await runCli([], { env: context.env })
    expect(noTask.code).toBe(2)
    expect(noTask.stderr).toContain('no task given')
    const explicit = await runCli(['interactive'], { env: context.env })
    expect(explicit.code).toBe(2)
    expect(explicit.stderr).toContain('the terminal UI needs a terminal')
  })
})
