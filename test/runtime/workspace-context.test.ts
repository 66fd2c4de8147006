import { mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import {
  createSession,
  type Delivery,
  type Session,
  type SessionEvent,
  type UserMessageData,
} from '../../src/core/index.js'
import {
  buildWorkspaceContext,
  discoverInstructionFiles,
  fingerprintOf,
  frameInstructionFiles,
  installWorkspaceContext,
  lastInjectedContext,
  type PromptSubmitOutcome,
  repositoryRoot,
  WORKSPACE_CONTEXT_SOURCE,
  type WorkspaceContextAgent,
} from '../../src/runtime/workspace-context.js'
import { openStore } from '../../src/stores/index.js'
import { writeUnreadSession } from '../frontends/unread-history.js'
import {
  assistant,
  compaction,
  type Entry,
  header,
  stepEnd,
  stepStart,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'

async function tempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'rudder-context-')))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  return dir
}

async function put(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, content)
}

/** outer/AGENTS.md (above the repo), repo/.git, repo/AGENTS.md, repo/CLAUDE.md, repo/pkg/AGENTS.md, repo/pkg/src (cwd). */
async function layout() {
  const root = await tempDir()
  const home = join(root, 'home')
  const repo = join(root, 'outer', 'repo')
  const cwd = join(repo, 'pkg', 'src')
  await mkdir(cwd, { recursive: true })
  await mkdir(join(repo, '.git'))
  await put(join(root, 'outer', 'AGENTS.md'), 'outside the repository\n')
  await put(join(home, '.rudder', 'AGENTS.md'), 'user rules\n')
  await put(join(repo, 'AGENTS.md'), 'repo rules\n')
  await put(join(repo, 'CLAUDE.md'), 'claude rules\n')
  await put(join(repo, 'pkg', 'AGENTS.md'), 'package rules\n')
  return { root, home, repo, cwd, env: {} }
}

describe('discoverInstructionFiles', () => {
  it('finds the user file, then each directory from the repository root down to the cwd', async () => {
    const { home, repo, cwd, env } = await layout()
    expect(await repositoryRoot(cwd)).toBe(repo)
    expect(await discoverInstructionFiles({ cwd, home, env })).toEqual([
      { path: join(home, '.rudder', 'AGENTS.md'), content: 'user rules', scope: 'user' },
      { path: join(repo, 'AGENTS.md'), content: 'repo rules', scope: 'project' },
      { path: join(repo, 'CLAUDE.md'), content: 'claude rules', scope: 'project' },
      { path: join(repo, 'pkg', 'AGENTS.md'), content: 'package rules', scope: 'project' },
    ])
  })

  it('uses only the cwd when there is no repository', async () => {
    const root = await tempDir()
    const cwd = join(root, 'a', 'b')
    await put(join(root, 'a', 'AGENTS.md'), 'parent\n')
    await put(join(cwd, 'AGENTS.md'), 'here\n')
    const files = await discoverInstructionFiles({ cwd, home: join(root, 'home'), env: {} })
    expect(files).toEqual([{ path: join(cwd, 'AGENTS.md'), content: 'here', scope: 'project' }])
  })

  it('reads the user file from RUDDER_HOME instead of ~/.rudder', async () => {
    const { home, root, cwd } = await layout()
    await put(join(root, 'custom', 'AGENTS.md'), 'custom home\n')
    const files = await discoverInstructionFiles({
      cwd,
      home,
      env: { RUDDER_HOME: join(root, 'custom') },
    })
    expect(files[0]).toEqual({
      path: join(root, 'custom', 'AGENTS.md'),
      content: 'custom home',
      scope: 'user',
    })
    expect(files.map((file) => file.content)).not.toContain('user rules')
  })

  it('leaves out empty files, a CLAUDE.md symlinked to AGENTS.md, and same-directory copies', async () => {
    const root = await tempDir()
    await mkdir(join(root, '.git'))
    await put(join(root, 'AGENTS.md'), 'rules\n')
    await symlink('AGENTS.md', join(root, 'CLAUDE.md'))
    await put(join(root, 'sub', 'AGENTS.md'), 'same\n')
    await put(join(root, 'sub', 'CLAUDE.md'), 'same\n')
    await put(join(root, 'sub', 'deeper', 'AGENTS.md'), '  \n')
    const files = await discoverInstructionFiles({
      cwd: join(root, 'sub', 'deeper'),
      home: join(root, 'h'),
      env: {},
    })
    expect(files.map((file) => file.path)).toEqual([
      join(root, 'AGENTS.md'),
      join(root, 'sub', 'AGENTS.md'),
    ])
  })

  it('cuts very long files with a note', async () => {
    const root = await tempDir()
    await put(join(root, 'AGENTS.md'), 'x'.repeat(30))
    const [file] = await discoverInstructionFiles({
      cwd: root,
      home: join(root, 'h'),
      env: {},
      maxFileChars: 10,
    })
    expect(file!.content).toBe(
      `${'x'.repeat(10)}\n\n[${join(root, 'AGENTS.md')} is cut here: 20 more characters; read the file for the rest.]`,
    )
  })
})

describe('buildWorkspaceContext', () => {
  it('frames every file in one system-reminder block naming its path', async () => {
    const { home, repo, cwd, env } = await layout()
    const context = await buildWorkspaceContext({ cwd, home, env })
    const text = [
      '<system-reminder>',
      'Instructions from AGENTS.md and CLAUDE.md files that apply to this workspace, from the most general to the most specific. Follow them; where they disagree, the later file wins.',
      '',
      `Contents of ${join(home, '.rudder', 'AGENTS.md')} (the user's instructions for every project):`,
      '',
      'user rules',
      '',
      `Contents of ${join(repo, 'AGENTS.md')} (instructions for this project):`,
      '',
      'repo rules',
      '',
      `Contents of ${join(repo, 'CLAUDE.md')} (instructions for this project):`,
      '',
      'claude rules',
      '',
      `Contents of ${join(repo, 'pkg', 'AGENTS.md')} (instructions for this project):`,
      '',
      'package rules',
      '</system-reminder>',
    ].join('\n')
    expect(context!.message).toEqual({
      content: [{ type: 'text', text }],
      source: { kind: 'plugin', name: 'workspace-context' },
      meta: { fingerprint: fingerprintOf(text), files: context!.files.map((file) => file.path) },
    })
    expect(frameInstructionFiles(context!.files)).toBe(text)
  })

  it('gives nothing when no file applies', async () => {
    const root = await tempDir()
    expect(
      await buildWorkspaceContext({ cwd: root, home: join(root, 'h'), env: {} }),
    ).toBeUndefined()
  })

  it('changes the fingerprint exactly when the framed text changes', async () => {
    const { home, repo, cwd, env } = await layout()
    const first = await buildWorkspaceContext({ cwd, home, env })
    const again = await buildWorkspaceContext({ cwd, home, env })
    expect(again!.fingerprint).toBe(first!.fingerprint)
    await writeFile(join(repo, 'pkg', 'AGENTS.md'), 'package rules, revised\n')
    const changed = await buildWorkspaceContext({ cwd, home, env })
    expect(changed!.fingerprint).not.toBe(first!.fingerprint)
    // Trailing whitespace is not part of the framed text, so it is not a change.
    await writeFile(join(repo, 'pkg', 'AGENTS.md'), 'package rules, revised\n\n\n')
    expect((await buildWorkspaceContext({ cwd, home, env }))!.fingerprint).toBe(
      changed!.fingerprint,
    )
  })
})

/** A fake of the agent surface: hooks run as the real agent runs them; inject appends at once. */
function fakeAgent(initialEvents: SessionEvent[] = [], session: Session = createSession()) {
  for (const event of initialEvents)
    session.append(event.type as 'user/message', event.data as never)
  const listeners: {
    start: ((event: never) => unknown)[]
    submit: ((event: never, next: never) => unknown)[]
  } = {
    start: [],
    submit: [],
  }
  const agent: WorkspaceContextAgent = {
    on(hook: 'session-start' | 'prompt-submit', listener: (event: never, next: never) => unknown) {
      const list = hook === 'session-start' ? listeners.start : listeners.submit
      list.push(listener)
      return () => list.splice(list.indexOf(listener), 1)
    },
    inject(context: UserMessageData): Delivery {
      const event = session.append('user/message', {
        id: `m${session.residentEvents.length}`,
        ...context,
      })
      return { id: event.data.id, result: Promise.resolve({ status: 'logged', seq: event.seq }) }
    },
    session,
  } as WorkspaceContextAgent
  const signal = new AbortController().signal
  return {
    agent,
    session,
    async start(reason: 'new' | 'resume' | 'fork' = 'new') {
      for (const listener of listeners.start)
        await (listener as (event: unknown) => unknown)({ reason, signal })
    },
    /** Runs the prompt-submit waterfall over a downstream default that already holds one context. */
    async submit(): Promise<PromptSubmitOutcome> {
      const downstream: PromptSubmitOutcome = {
        action: 'admit',
        content: [{ type: 'text', text: 'prompt' }],
        additionalContexts: [
          { content: [{ type: 'text', text: 'other' }], source: { kind: 'plugin', name: 'other' } },
        ],
      }
      const run = (index: number): Promise<PromptSubmitOutcome> => {
        const listener = listeners.submit[index] as
          | ((
              event: unknown,
              next: () => Promise<PromptSubmitOutcome>,
            ) => Promise<PromptSubmitOutcome>)
          | undefined
        if (listener === undefined) return Promise.resolve(downstream)
        return listener(
          {
            prompt: { content: [{ type: 'text', text: 'prompt' }], source: { kind: 'user' } },
            signal,
          },
          () => run(index + 1),
        )
      }
      return run(0)
    },
    /** Logs what an admitted result carries, as the agent would. */
    admit(result: PromptSubmitOutcome) {
      if (result.action !== 'admit') return
      for (const context of result.additionalContexts) agent.inject(context)
    },
    injected(): SessionEvent[] {
      return session.residentEvents.filter(
        (event) =>
          (event.data as { source?: { name?: string } }).source?.name === 'workspace-context',
      )
    },
  }
}

describe('installWorkspaceContext', () => {
  it('injects the context at session start, once, with the plugin source', async () => {
    const { home, cwd, env } = await layout()
    const fake = fakeAgent()
    installWorkspaceContext(fake.agent, { cwd, home, env })
    await fake.start()
    const expected = await buildWorkspaceContext({ cwd, home, env })
    expect(fake.injected().map((event) => event.data)).toEqual([{ id: 'm0', ...expected!.message }])
    expect((fake.injected()[0]!.data as UserMessageData).source).toEqual(WORKSPACE_CONTEXT_SOURCE)
  })

  it('injects nothing when no file applies', async () => {
    const root = await tempDir()
    const fake = fakeAgent()
    installWorkspaceContext(fake.agent, { cwd: root, home: join(root, 'h'), env: {} })
    await fake.start()
    const result = await fake.submit()
    expect(fake.session.residentEvents).toEqual([])
    expect(result.action === 'admit' && result.additionalContexts.length).toBe(1)
  })

  it('adds a changed context at admission after the downstream contexts, and nothing when unchanged', async () => {
    const { home, repo, cwd, env } = await layout()
    const fake = fakeAgent()
    installWorkspaceContext(fake.agent, { cwd, home, env })
    await fake.start()
    const unchanged = await fake.submit()
    expect(unchanged).toEqual({
      action: 'admit',
      content: [{ type: 'text', text: 'prompt' }],
      additionalContexts: [
        { content: [{ type: 'text', text: 'other' }], source: { kind: 'plugin', name: 'other' } },
      ],
    })
    await writeFile(join(repo, 'AGENTS.md'), 'repo rules v2\n')
    const changed = await fake.submit()
    const expected = await buildWorkspaceContext({ cwd, home, env })
    expect(changed.action === 'admit' && changed.additionalContexts).toEqual([
      { content: [{ type: 'text', text: 'other' }], source: { kind: 'plugin', name: 'other' } },
      expected!.message,
    ])
    fake.admit(changed)
    const afterLogging = await fake.submit()
    expect(afterLogging.action === 'admit' && afterLogging.additionalContexts).toHaveLength(1)
  })

  it('offers a changed context again when the admission that carried it did not log it', async () => {
    const { home, repo, cwd, env } = await layout()
    const fake = fakeAgent()
    installWorkspaceContext(fake.agent, { cwd, home, env })
    await fake.start()
    await writeFile(join(repo, 'AGENTS.md'), 'repo rules v2\n')
    const blockedLater = await fake.submit()
    expect(blockedLater.action === 'admit' && blockedLater.additionalContexts).toHaveLength(2)
    // An outer listener blocked that prompt, so nothing was logged: the next admission offers it.
    const next = await fake.submit()
    expect(next.action === 'admit' && next.additionalContexts).toHaveLength(2)
  })

  it('passes a downstream block through untouched', async () => {
    const { home, repo, cwd, env } = await layout()
    const fake = fakeAgent()
    installWorkspaceContext(fake.agent, { cwd, home, env })
    // Registered later, this listener runs inside the producer's `next()`.
    fake.agent.on('prompt-submit', async () => ({ action: 'block', reason: 'not now' }))
    await fake.start()
    await writeFile(join(repo, 'AGENTS.md'), 'repo rules v2\n')
    expect(await fake.submit()).toEqual({ action: 'block', reason: 'not now' })
  })

  it('does not re-inject unchanged files into a resumed session, but does after a change', async () => {
    const { home, repo, cwd, env } = await layout()
    const first = fakeAgent()
    installWorkspaceContext(first.agent, { cwd, home, env })
    await first.start()
    const resumed = fakeAgent([...first.session.residentEvents])
    installWorkspaceContext(resumed.agent, { cwd, home, env })
    await resumed.start('resume')
    expect(resumed.injected()).toHaveLength(1)
    await writeFile(join(repo, 'AGENTS.md'), 'repo rules v2\n')
    const again = fakeAgent([...first.session.residentEvents])
    installWorkspaceContext(again.agent, { cwd, home, env })
    await again.start('resume')
    expect(again.injected()).toHaveLength(2)
  })

  it('injects again after a compaction summarized the earlier injection away', async () => {
    const { home, cwd, env } = await layout()
    const fake = fakeAgent()
    installWorkspaceContext(fake.agent, { cwd, home, env })
    await fake.start()
    fake.session.append('compaction', {
      id: 'c1',
      summary: [{ type: 'text', text: 'summary' }],
      firstKeptSeq: 1,
      reason: 'manual',
      tokensBefore: 10,
    } as never)
    expect(lastInjectedContext(fake.session.residentEvents)).toBeUndefined()
    const result = await fake.submit()
    expect(result.action === 'admit' && result.additionalContexts).toHaveLength(2)
  })

  it('says once that the injected files are gone', async () => {
    const root = await tempDir()
    await put(join(root, 'AGENTS.md'), 'rules\n')
    const fake = fakeAgent()
    installWorkspaceContext(fake.agent, { cwd: root, home: join(root, 'h'), env: {} })
    await fake.start()
    await unlink(join(root, 'AGENTS.md'))
    const removed = await fake.submit()
    const notice = removed.action === 'admit' ? removed.additionalContexts[1] : undefined
    expect(notice?.content).toEqual([
      {
        type: 'text',
        text: `<system-reminder>\nThe instruction files given earlier (${join(root, 'AGENTS.md')}) no longer exist; their instructions no longer apply.\n</system-reminder>`,
      },
    ])
    fake.admit(removed)
    const after = await fake.submit()
    expect(after.action === 'admit' && after.additionalContexts).toHaveLength(1)
  })

  it('removes its listeners when uninstalled', async () => {
    const { home, cwd, env } = await layout()
    const fake = fakeAgent()
    const uninstall = installWorkspaceContext(fake.agent, { cwd, home, env })
    uninstall()
    await fake.start()
    expect(fake.session.residentEvents).toEqual([])
  })

  describe('in a resumed session whose history the store did not read', () => {
    /** Two turns, the context logged before `contextAt`'s turn, a compaction keeping turn 2. */
    async function resumed(context: UserMessageData, before: 1 | 2) {
      const ctx: Entry = ['user/message', { id: 'ctx', ...context }]
      const turn = (n: 1 | 2): Entry[] => [
        turnStart(n),
        user(`question ${n}`),
        stepStart(n, 1),
        header(),
        assistant(`answer ${n}`),
        stepEnd(n, 1),
        turnEnd(n),
      ]
      const entries =
        before === 1
          ? [ctx, ...turn(1), ...turn(2), compaction(8)]
          : [...turn(1), ctx, ...turn(2), compaction(7)]
      const root = await tempDir()
      const url = `jsonl:${join(root, 'store')}`
      const stored = await writeUnreadSession(url, { entries })
      const store = await openStore(url)
      const session = await store.open(stored.id)
      onTestFinished(async () => {
        await session.close()
        await store.close()
      })
      expect(session.residentFrom).toBeGreaterThan(0)
      const fake = fakeAgent([], session)
      const logged = () => {
        const added: SessionEvent[] = []
        for (let seq = stored.events.length; seq < session.nextSeq; seq++)
          added.push(session.eventAt(seq)!)
        return added
      }
      return { fake, logged }
    }

    it('does not inject unchanged files again when the last injection is kept', async () => {
      const { home, cwd, env } = await layout()
      const context = (await buildWorkspaceContext({ cwd, home, env }))!.message
      const { fake, logged } = await resumed(context, 2)
      installWorkspaceContext(fake.agent, { cwd, home, env })
      await fake.start('resume')
      expect(logged()).toEqual([])
    })

    it('injects them again when the last injection was summarized away', async () => {
      const { home, cwd, env } = await layout()
      const context = (await buildWorkspaceContext({ cwd, home, env }))!.message
      const { fake, logged } = await resumed(context, 1)
      installWorkspaceContext(fake.agent, { cwd, home, env })
      await fake.start('resume')
      expect(logged().map((event) => event.data)).toEqual([
        expect.objectContaining({ content: context.content, source: WORKSPACE_CONTEXT_SOURCE }),
      ])
    })
  })
})
