import { z } from 'zod'
import { createAgent, createSession, defineTool } from '../src/index.js'
import { scriptedProvider } from '../src/testing.js'

const echo = defineTool({
  name: 'echo',
  description: 'Returns ok.',
  parameters: z.object({}),
  execute: () => 'ok',
})
async function agentTurn(steps: number) {
  const script = [
    ...Array.from({ length: steps - 1 }, (_, i) => ({
      toolCalls: [{ id: `c${i}`, name: 'echo', args: {} }],
    })),
    { text: 'done' },
  ]
  const agent = createAgent({
    session: createSession(),
    provider: scriptedProvider(script),
    tools: [echo],
    maxSteps: steps + 1,
  })
  agent.send('go')
  await agent.idle()
  await agent.dispose()
}
await agentTurn(500)
const s = process.cpuUsage()
await agentTurn(20000)
const u = process.cpuUsage(s)
console.log('µs/step', (u.user + u.system) / 20000)
