import { readFileSync } from 'node:fs'
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bashTool } from '../../src/tools/index.js'
import { runTool, tempDir, toolContext } from './context.js'

/**
 * Whether a process still runs. `process.kill(pid, 0)` also succeeds for a zombie (dead, not
 * yet reaped, which is what killed orphans stay when PID 1 does not reap), so on Linux the
 * state in /proc decides.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return true // no /proc (macOS): kill(pid, 0) is all we have
  }
}

/**
 * Whether `pid` is gone within `ms`. SIGKILL is delivered when the kernel next schedules the
 * process, which on a loaded machine can be just after the tool has returned; this waits on
 * that outside fact, it orders nothing in the test.
 */
async function isGoneWithin(pid: number, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (isRunning(pid)) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return true
}

/** Resolves with the first number the command prints (a pid it echoed), from live progress. */
function firstPrintedPid(updates: unknown[]): Promise<number> {
  return new Promise((resolve) => {
    let seen = ''
    const push = updates.push.bind(updates)
    updates.push = (...items: unknown[]) => {
      for (const item of items) seen += (item as { output: string }).output
      const match = /(\d+)\n/.exec(seen)
      if (match) resolve(Number(match[1]))
      return push(...items)
    }
  })
}

describe('bash', () => {
  it('runs in the workspace and reports output and exit code', async () => {
    const workspace = await tempDir()
    const result = await runTool(bashTool({ workspace }), { command: 'pwd; echo oops >&2' })
    expect(result.isError).toBe(false)
    expect(result.text).toBe(`${workspace}\noops\n\n\n[exit code 0]`)
    expect(result.meta).toEqual({ omittedChars: 0, exitCode: 0, signal: null })
  })

  it('makes a non-zero exit an error result that still carries the output', async () => {
    const workspace = await tempDir()
    const result = await runTool(bashTool({ workspace }), { command: 'echo failing; exit 3' })
    expect(result).toMatchObject({ isError: true, text: 'failing\n\n\n[exit code 3]' })
  })

  it('says when there was no output, and passes configured environment variables', async () => {
    const workspace = await tempDir()
    const quiet = await runTool(bashTool({ workspace }), { command: 'true' })
    expect(quiet.text).toBe('(no output)\n\n[exit code 0]')
    const env = await runTool(bashTool({ workspace, env: { RUDDER_TEST_VALUE: 'v1' } }), {
      command: 'printf %s "$RUDDER_TEST_VALUE"',
    })
    expect(env.text).toBe('v1\n\n[exit code 0]')
  })

  it('streams output as progress', async () => {
    const workspace = await tempDir()
    const { context, updates } = toolContext(workspace)
    await runTool(bashTool({ workspace }), { command: 'echo one' }, context)
    expect(updates.map((update) => (update as { output: string }).output).join('')).toBe('one\n')
  })

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const workspace = await tempDir()
    const { context, updates } = toolContext(workspace)
    const pid = firstPrintedPid(updates)
    const result = await runTool(
      bashTool({ workspace }),
      { command: 'sleep 1000 & echo $!; wait', timeout: 2 },
      context,
    )
    expect(result.isError).toBe(true)
    expect(result.text).toContain(
      '[timed out after 2s: the command and every process it started were killed. If it needs longer, pass a larger timeout (at most 600s)',
    )
    expect(result.meta).toEqual({ omittedChars: 0, isTimedOut: true })
    expect(await isGoneWithin(await pid)).toBe(true)
  })

  it('kills the whole process group on cancel, grandchildren included', async () => {
    const workspace = await tempDir()
    const { context, controller, updates } = toolContext(workspace)
    const pid = firstPrintedPid(updates)
    const running = runTool(
      bashTool({ workspace }),
      { command: 'sleep 1000 & echo $!; wait' },
      context,
    )
    const grandchild = await pid
    expect(isRunning(grandchild)).toBe(true)
    controller.abort()
    const result = await running
    expect(result.isError).toBe(true)
    expect(result.text).toBe(
      `${grandchild}\n\n\n[canceled: the command and every process it started were stopped]`,
    )
    expect(await isGoneWithin(grandchild)).toBe(true)
  })

  it('finds a process that left the group with setsid, kills it too, and says so', async () => {
    const workspace = await tempDir()
    const { context, updates } = toolContext(workspace)
    const pid = firstPrintedPid(updates)
    const result = await runTool(
      bashTool({ workspace, killGraceMs: 100 }),
      { command: 'setsid sleep 1000 & echo $!; wait', timeout: 0.5 },
      context,
    )
    const escaped = await pid
    expect(result.text).toContain(
      '[timed out after 0.5s: the command and every process it started were killed, including 1 that had left its process group.',
    )
    expect(result.meta).toEqual({ omittedChars: 0, isTimedOut: true, escapedProcesses: 1 })
    expect(await isGoneWithin(escaped)).toBe(true)
  })

  it('does not claim every process was killed when one escaped and cannot be found', async () => {
    const workspace = await tempDir()
    const { context, updates } = toolContext(workspace)
    const pid = firstPrintedPid(updates)
    // `env -i` drops the tag the tool finds its processes by; the sleep keeps the output open.
    const result = await runTool(
      bashTool({ workspace, killGraceMs: 100 }),
      { command: 'env -i setsid sleep 1000 & echo $!; wait', timeout: 0.5 },
      context,
    )
    const escaped = await pid
    try {
      expect(result.text).toContain(
        "[timed out after 0.5s: the command's process group was killed, but a process it started left the group (setsid or a daemon) and held its output open; it could not be found and may still be running.",
      )
      expect(result.text).not.toContain('every process it started were killed')
      expect(result.meta).toEqual({ omittedChars: 0, isTimedOut: true, isOutputHeld: true })
      expect(isRunning(escaped)).toBe(true)
    } finally {
      process.kill(escaped, 'SIGKILL')
    }
  })

  it('kills processes that ignore SIGTERM once the grace period ends', async () => {
    const workspace = await tempDir()
    const { context, controller, updates } = toolContext(workspace)
    const pid = firstPrintedPid(updates)
    // An ignored signal stays ignored across exec, so the sleep ignores SIGTERM as well.
    const running = runTool(
      bashTool({ workspace, killGraceMs: 100 }),
      { command: "trap '' TERM; sleep 1000 & echo $!; wait" },
      context,
    )
    const grandchild = await pid
    controller.abort()
    const result = await running
    expect(result.meta).toEqual({ omittedChars: 0, isCanceled: true })
    expect(await isGoneWithin(grandchild)).toBe(true)
  })

  it('keeps the head and tail of huge output with a note', async () => {
    const workspace = await tempDir()
    const result = await runTool(bashTool({ workspace, maxOutputChars: 1000 }), {
      command: 'seq 1 200000',
    })
    expect(result.isError).toBe(false)
    expect(result.text.startsWith('1\n2\n3\n')).toBe(true)
    expect(result.text.endsWith('199999\n200000\n\n\n[exit code 0]')).toBe(true)
    expect(result.text).toMatch(
      /… \[\d+ characters omitted from the middle of the output; to see all of it, rerun with the output redirected to a file and read or grep that file\] …/,
    )
    expect(result.text.length).toBeLessThan(1400)
    expect((result.meta as { omittedChars: number }).omittedChars).toBeGreaterThan(1_000_000)
  })

  it('does not start when the call is already canceled', async () => {
    const workspace = await tempDir()
    const { context, controller } = toolContext(workspace)
    controller.abort()
    const result = await runTool(bashTool({ workspace }), { command: 'touch started' }, context)
    expect(result).toMatchObject({ isError: true, text: 'bash was canceled before it finished.' })
    await expect(access(join(workspace, 'started'))).rejects.toThrow(/ENOENT/)
  })

  it('reports a shell that cannot start', async () => {
    const workspace = await tempDir()
    const result = await runTool(bashTool({ workspace, shell: join(workspace, 'no-such-shell') }), {
      command: 'true',
    })
    expect(result.isError).toBe(true)
    expect(result.text).toMatch(/^The command could not be started: .*ENOENT/)
  })

  it('refuses a timeout over the maximum by field', async () => {
    const workspace = await tempDir()
    const result = await runTool(bashTool({ workspace, timeoutMs: 5000, maxTimeoutMs: 10_000 }), {
      command: 'true',
      timeout: 60,
    })
    expect(result.isError).toBe(true)
    expect(result.text).toContain('- timeout:')
  })
})
