/**
 * Hook tests in temp directories: a workspace and a home, settings files written there, real
 * bash hook scripts (jq-free: `node -e` reads JSON), and an agent with the bridge installed.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  type BridgeNotice,
  createHookBridge,
  discoverHooks,
  type HookBridge,
} from '../../src/bridges/index.js'
import {
  type Agent,
  type AgentOptions,
  createAgent,
  type Session,
  type SessionEvent,
} from '../../src/index.js'
import { type ScriptEntry, scriptedProvider } from '../../src/testing.js'
import { builtinTools } from '../../src/tools/builtin/index.js'
import { agentHarness, type Harness } from '../support/agent-harness.js'

export type Sandbox = {
  readonly cwd: string
  readonly home: string
  /** Where scripts and their traces live. */
  readonly dir: string
  /** Writes an executable bash script and returns its path. */
  script(name: string, body: string): string
  /** Writes a JSON file (settings) under the sandbox root. */
  json(path: string, value: unknown): string
  /** The JSON payloads a recording script saved, in order. */
  payloads(name: string): Record<string, unknown>[]
}

export function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'rudder-hooks-'))
  const cwd = join(root, 'project')
  const home = join(root, 'home')
  const dir = join(root, 'scripts')
  for (const path of [cwd, home, dir]) mkdirSync(path, { recursive: true })
  return {
    cwd,
    home,
    dir,
    script(name, body) {
      const path = join(dir, name)
      writeFileSync(path, `#!/bin/bash\n${body}\n`)
      chmodSync(path, 0o755)
      return path
    },
    json(path, value) {
      const full = join(root, path)
      mkdirSync(dirname(full), { recursive: true })
      writeFileSync(full, JSON.stringify(value, null, 2))
      return full
    },
    payloads(name) {
      const file = join(dir, `${name}.payloads`)
      if (!existsSync(file)) return []
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    },
  }
}

/** Bash that saves its stdin (one JSON line) to `<name>.payloads` and leaves it in `$input`. */
export const record = (name: string) =>
  `input=$(cat)\nprintf '%s\\n' "$input" >> "$(dirname "$0")/${name}.payloads"`

/** Bash: `$(field path.to.value)` prints a field of `$input` (no jq). */
export const FIELD = `field() { printf '%s' "$input" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v?.[k];process.stdout.write(v===undefined?"":typeof v==="string"?v:JSON.stringify(v))})' "$1"; }`

/** A `hooks` object: one group per entry. */
export function hooks(
  entries: Record<string, { matcher?: string; command: string; timeout?: number }[]>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(entries).map(([event, list]) => [
      event,
      list.map(({ matcher, command, timeout }) => ({
        ...(matcher === undefined ? {} : { matcher }),
        hooks: [{ type: 'command', command, ...(timeout === undefined ? {} : { timeout }) }],
      })),
    ]),
  )
}

/** A hook bridge over the hooks found in `box` (project hooks trusted), and its notices. */
function hookBridgeOf(box: Sandbox): { bridge: HookBridge; notices: BridgeNotice[] } {
  const found = discoverHooks({ cwd: box.cwd, home: box.home, env: {}, isProjectTrusted: true })
  const notices: BridgeNotice[] = []
  const bridge = createHookBridge({
    specs: found.specs,
    cwd: box.cwd,
    env: { PATH: process.env.PATH },
    stateDir: join(box.dir, 'state'),
    notify: (notice) => notices.push(notice),
  })
  return { bridge, notices }
}

/**
 * The agent of `bridged` over a session a test opened from a store, which the harness's
 * after-test checks (they read the resident log) do not take; the test disposes it.
 */
export function bridgedOver(
  box: Sandbox,
  script: readonly ScriptEntry[],
  session: Session,
): { agent: Agent; provider: ReturnType<typeof scriptedProvider>; notices: BridgeNotice[] } {
  const { bridge, notices } = hookBridgeOf(box)
  const provider = scriptedProvider(script)
  const agent = createAgent({
    session,
    provider,
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
    tools: builtinTools({ workspace: box.cwd }),
    cwd: box.cwd,
    approve: bridge.wrapApprove(() => true),
  })
  bridge.install(agent)
  return { agent, provider, notices }
}

export type Bridged = Harness & {
  readonly notices: BridgeNotice[]
  readonly box: Sandbox
  readonly bridge: HookBridge
}

/**
 * An agent over the built-in tools in `box.cwd`, with the hooks found there installed.
 * Project hooks are trusted here (trust is the host's decision, tested with it).
 */
export function bridged(
  box: Sandbox,
  script: readonly ScriptEntry[],
  options: Partial<AgentOptions> = {},
): Bridged {
  const { bridge, notices } = hookBridgeOf(box)
  const approve = options.approve ?? (() => true)
  const harness = agentHarness(script, {
    tools: builtinTools({ workspace: box.cwd }),
    cwd: box.cwd,
    ...options,
    approve: bridge.wrapApprove(approve),
  })
  bridge.install(harness.agent)
  return Object.assign(harness, { notices, box, bridge })
}

/** The `hook/run` records of a log. */
export function runRecords(events: readonly SessionEvent[]): Record<string, unknown>[] {
  return events
    .filter((event) => event.type === 'hook/run')
    .map((event) => event.data as Record<string, unknown>)
}

/** Whether a process is gone (or a zombie waiting for a reaper that may never come). */
export function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return true
  }
}

/** Waits for a condition by polling (for outcomes of other processes), failing after `ms`. */
export async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
