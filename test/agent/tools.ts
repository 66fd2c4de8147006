/** Tools for agent tests, with bodies the test controls. */
import { z } from 'zod'
import { defineTool, type ToolContext } from '../../src/index.js'

/** Echoes its text argument. */
export const echo = defineTool({
  name: 'echo',
  description: 'Echoes the text back.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
})

/** A tool whose body is the given function (for steer / inject / hold from inside a tool). */
export function toolWith(
  name: string,
  body: (context: ToolContext) => unknown,
  concurrency: 'parallel' | 'exclusive' = 'parallel',
) {
  return defineTool({
    name,
    description: `test tool ${name}`,
    parameters: z.object({}).passthrough(),
    concurrency,
    execute: async (_args, context) => {
      const output = await body(context)
      return typeof output === 'string' ? output : `${name} done`
    },
  })
}

/** A promise the test settles by hand. */
export function gate<T = void>() {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => {
    open = resolve
  })
  return { promise, open }
}
