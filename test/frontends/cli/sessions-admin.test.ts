/**
 * `rudder sessions` housekeeping through the built bin (issue 10 item 9): id prefixes,
 * the listing's header, delete and prune with blobs collected, repair of a healthy session,
 * import of an id that exists.
 */
import { existsSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cleanEnv, runCli, scratchSpace } from './run-cli.js'

const { dir: scratch, script } = scratchSpace('rudder-cli-sessions-')
let files = 0

/** Runs one task in `store` and returns its session id. */
async function newSession(
  env: Record<string, string>,
  store: string,
  cwd: string,
  text = 'ok',
): Promise<string> {
  const result = await runCli(
    [
      '--store',
      store,
      '--output-format',
      'json',
      '--provider',
      script([{ text }]),
      '--cwd',
      cwd,
      'task',
    ],
    { env },
  )
  expect(result.code).toBe(0)
  return (JSON.parse(result.stdout) as { sessionId: string }).sessionId
}

/** Blob files under a store's blob directory. */
function blobFiles(root: string): string[] {
  if (!existsSync(root)) return []
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

describe.each([
  ['jsonl', (dir: string) => `jsonl:${dir}`, (dir: string) => join(dir, 'blobs')],
  [
    'sqlite',
    (dir: string) => `sqlite:${join(dir, 's.db')}`,
    (dir: string) => join(dir, 's.db.blobs'),
  ],
])('rudder sessions on %s', (_name, urlOf, blobRootOf) => {
  it('takes id prefixes, says when one is ambiguous, and lists with a header and directories', async () => {
    const env = cleanEnv()
    const dir = mkdtempSync(join(scratch, 'store-'))
    const store = urlOf(dir)
    const cwd = mkdtempSync(join(scratch, 'ws-'))
    const id = await newSession(env, store, cwd)
    const shown = await runCli(['sessions', 'show', id.slice(0, 6), '--store', store], { env })
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`session ${id}`)
    // Two imported sessions whose ids share a prefix.
    const exported = await runCli(['sessions', 'export', id, '--store', store], { env })
    const [header, ...rest] = exported.stdout.trimEnd().split('\n')
    for (const copy of ['same-prefix-1', 'same-prefix-2']) {
      const file = join(scratch, `${copy}-${++files}.jsonl`)
      writeFileSync(
        file,
        `${[JSON.stringify({ ...JSON.parse(header!), id: copy }), ...rest].join('\n')}\n`,
      )
      expect((await runCli(['sessions', 'import', file, '--store', store], { env })).code).toBe(0)
    }
    const ambiguous = await runCli(['sessions', 'show', 'same-prefix', '--store', store], { env })
    expect(ambiguous.code).toBe(2)
    expect(ambiguous.stderr).toContain('same-prefix-1')
    expect(ambiguous.stderr).toContain('same-prefix-2')
    const none = await runCli(['sessions', 'show', 'zzz', '--store', store], { env })
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('"zzz"')
    const list = await runCli(['sessions', 'list', '--store', store, '--cwd', cwd], { env })
    const [head, ...rows] = list.stdout.trimEnd().split('\n')
    expect(head).toMatch(/^ID +UPDATED \(UTC\) +EVENTS +DIRECTORY +TITLE$/)
    expect(rows).toHaveLength(3)
    for (const row of rows) expect(row).toContain(cwd)
  })

  it('delete removes a session and the blobs only it used; a fork keeps what it shares', async () => {
    const env = cleanEnv()
    const dir = mkdtempSync(join(scratch, 'store-'))
    const store = urlOf(dir)
    const cwd = mkdtempSync(join(scratch, 'ws-'))
    // Over 1 MiB, so the assistant message goes to a blob.
    const big = 'x'.repeat(1_200_000)
    const lone = await newSession(env, store, cwd, `${big}a`)
    const shared = await newSession(env, store, cwd, `${big}b`)
    const fork = await runCli(['sessions', 'fork', shared.slice(0, 8), '--store', store], { env })
    expect(fork.code).toBe(0)
    const blobs = blobFiles(blobRootOf(dir))
    expect(blobs.length).toBe(2)
    // Blobs touched in the last hour are spared (a writer may be reusing one): age them.
    const old = new Date(Date.now() - 2 * 3_600_000)
    for (const file of blobs) utimesSync(file, old, old)
    const deleted = await runCli(
      ['sessions', 'delete', lone.slice(0, 8), shared, '--store', store],
      {
        env,
      },
    )
    expect(deleted).toMatchObject({ code: 0 })
    expect(deleted.stdout).toBe(`deleted ${lone}\ndeleted ${shared}\n`)
    expect(deleted.stderr).toContain('removed 1 large payloads')
    expect(blobFiles(blobRootOf(dir))).toHaveLength(1)
    const again = await runCli(['sessions', 'show', lone, '--store', store], { env })
    expect(again.code).toBe(2)
    const forked = await runCli(
      ['sessions', 'show', fork.stdout.trim(), '--store', store, '--json'],
      {
        env,
      },
    )
    expect(forked.code).toBe(0)
    expect(forked.stdout).toContain(`${big}b`)
  })

  it('prune --older-than deletes only sessions last written before then; --dry-run deletes none', async () => {
    const env = cleanEnv()
    const dir = mkdtempSync(join(scratch, 'store-'))
    const store = urlOf(dir)
    const cwd = mkdtempSync(join(scratch, 'ws-'))
    const fresh = await newSession(env, store, cwd)
    // An old session: an export with its times moved 40 days back, imported as new.
    const exported = await runCli(['sessions', 'export', fresh, '--store', store], { env })
    const shift = 40 * 86_400_000
    const oldText = exported.stdout.replace(
      /"(time|createdAt)":(\d+)/g,
      (_all, key, value) => `"${key}":${Number(value) - shift}`,
    )
    const file = join(scratch, `old-${++files}.jsonl`)
    writeFileSync(file, oldText)
    const imported = await runCli(['sessions', 'import', file, '--store', store], { env })
    expect(imported.code).toBe(2)
    expect(imported.stderr).toContain('--as-new')
    const asNew = await runCli(['sessions', 'import', file, '--as-new', '--store', store], { env })
    expect(asNew.code).toBe(0)
    const oldId = asNew.stdout.trim()
    expect(oldId).not.toBe(fresh)
    const dry = await runCli(
      ['sessions', 'prune', '--older-than', '30d', '--dry-run', '--store', store, '--cwd', cwd],
      { env },
    )
    expect(dry.stdout).toContain(`would delete ${oldId}`)
    const pruned = await runCli(
      ['sessions', 'prune', '--older-than', '30d', '--store', store, '--cwd', cwd],
      { env },
    )
    expect(pruned.code).toBe(0)
    expect(pruned.stdout).toBe(`deleted ${oldId}\n`)
    const list = await runCli(['sessions', 'list', '--store', store, '--cwd', cwd, '--json'], {
      env,
    })
    expect(
      list.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id),
    ).toEqual([fresh])
  })

  it('repair of a healthy session says so and creates nothing', async () => {
    const env = cleanEnv()
    const dir = mkdtempSync(join(scratch, 'store-'))
    const store = urlOf(dir)
    const cwd = mkdtempSync(join(scratch, 'ws-'))
    const id = await newSession(env, store, cwd)
    const repaired = await runCli(['sessions', 'repair', id.slice(0, 10), '--store', store], {
      env,
    })
    expect(repaired).toMatchObject({ code: 0, stdout: '' })
    expect(repaired.stderr).toContain(`${id} has no damage; nothing to repair, nothing created`)
    const list = await runCli(['sessions', 'list', '--all', '--store', store, '--json'], { env })
    expect(list.stdout.trim().split('\n')).toHaveLength(1)
  })
})

describe('rudder sessions delete', () => {
  it('deletes nothing when one of the ids is unknown', async () => {
    const env = cleanEnv()
    const store = `jsonl:${mkdtempSync(join(scratch, 'store-'))}`
    const id = await newSession(env, store, mkdtempSync(join(scratch, 'ws-')))
    const result = await runCli(['sessions', 'delete', id, 'no-such-id', '--store', store], { env })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect((await runCli(['sessions', 'show', id, '--store', store], { env })).code).toBe(0)
  })
})
