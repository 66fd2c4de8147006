/**
 * An agent over a stored session in a child process, for crash tests: run as
 * `node --import tsx agent-child.ts <store-url> <scenario>`. It reports `{ event: 'ready', id,
 * events }` on stdout at the moment the parent should SIGKILL it, then waits forever.
 *
 * Scenarios:
 * - `streaming`: the model streams text and then holds (never finishes).
 * - `tool`: the model calls `write_file` (exclusive, side-effecting; its body never returns)
 *   and `list`; the kill lands inside `write_file`.
 * - `idle-inject`: one completed turn, then an idle `inject`, made durable.
 */
import { z } from 'zod'
import { createAgent, defineTool } from '../../../src/index.js'
import { openStore } from '../../../src/stores/index.js'
import { scriptedProvider } from '../../../src/testing.js'

const [url, scenario] = process.argv.slice(2)
const store = await openStore(url)
const session = await store.create({ title: `e2e ${scenario}` })
const never = new Promise<never>(() => {})
let hasReported = false
function ready(): void {
  if (hasReported) return
  hasReported = true
  process.stdout.write(
    `${JSON.stringify({ event: 'ready', id: session.header.id, events: session.residentEvents })}\n`,
  )
}

switch (scenario) {
  case 'streaming': {
    const agent = createAgent({
      session,
      provider: scriptedProvider([{ text: 'I will write the file now', hold: never }]),
    })
    agent.subscribe((notification) => {
      if (notification.type === 'assistant/delta') ready()
    })
    agent.send('write the file')
    break
  }
  case 'tool': {
    const writeFile = defineTool({
      name: 'write_file',
      description: 'Writes a file (a side effect).',
      parameters: z.object({ path: z.string() }),
      concurrency: 'exclusive',
      async execute() {
        ready()
        return never
      },
    })
    const list = defineTool({
      name: 'list',
      description: 'Lists files.',
      parameters: z.object({}),
      execute: () => 'a.txt',
    })
    const agent = createAgent({
      session,
      tools: [writeFile, list],
      provider: scriptedProvider([
        {
          toolCalls: [
            { id: 'c1', name: 'write_file', args: { path: 'a.txt' } },
            { id: 'c2', name: 'list', args: {} },
          ],
        },
      ]),
    })
    agent.send('write a.txt, then list')
    break
  }
  case 'idle-inject': {
    const agent = createAgent({ session, provider: scriptedProvider([{ text: 'hello' }]) })
    await agent.send('hi').result
    await agent.idle()
    await agent.inject({
      content: [{ type: 'text', text: '<system-reminder>the build is green</system-reminder>' }],
      source: { kind: 'plugin', name: 'e2e' },
    }).result
    // An idle inject waits for the flush window; make it durable now so the kill cannot race it.
    await session.flush()
    ready()
    break
  }
  default:
    throw new Error(`agent-child: unknown scenario ${scenario}`)
}

process.stdin.resume()
process.stdin.on('end', () => process.exit(0))
