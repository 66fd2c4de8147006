/**
 * Reads a scripted-provider script from a JSON file (`--provider scripted:<file.json>`): the
 * way demos and bug reports ship a reproducible model. Validated, with errors naming the field.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { z } from 'zod'
import { ConfigError } from '../../core/index.js'
import { jsonValueSchema } from '../json-value-schema.js'
import { type ScriptedProvider, type ScriptStep, scriptedProvider } from './scripted-provider.js'

const stepSchema = z
  .object({
    text: z.string().optional(),
    thinking: z.string().optional(),
    toolCalls: z
      .array(
        z.object({ id: z.string().optional(), name: z.string(), args: jsonValueSchema }).strict(),
      )
      .optional(),
    stop: z.enum(['stop', 'tool-calls', 'max-tokens']).optional(),
    error: z
      .object({
        code: z.string(),
        message: z.string(),
        retryable: z.boolean().optional(),
        retryAfterMs: z.number().optional(),
      })
      .strict()
      .optional(),
    delayMs: z.number().nonnegative().optional(),
    holdUntilFile: z.string().min(1).optional(),
  })
  .strict()

// An array of steps, or an object with the steps and a model name.
const stepsSchema = z.array(stepSchema)
const objectSchema = z.object({ model: z.string().optional(), steps: stepsSchema }).strict()

/** Loads a script file into a scripted provider. Throws `ConfigError` naming the file and field. */
export function scriptedProviderFromFile(path: string): ScriptedProvider {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError(
      `cannot read the script ${path}: ${(error as Error).message}. Check the path given to --provider scripted:<file.json>.`,
      { cause: error },
    )
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(
      `the script ${path} is not valid JSON (${(error as Error).message}). A script is a JSON array of steps, or { "steps": [...] }.`,
      { cause: error },
    )
  }
  // Parsed by shape, so an error names the bad step's path rather than "no union member matched".
  const parsed = Array.isArray(value) ? stepsSchema.safeParse(value) : objectSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const where = issue.path.length === 0 ? 'the top level' : issue.path.map(String).join('.')
    throw new ConfigError(
      `the script ${path} is invalid at ${where}: ${issue.message}. Steps take text, thinking, toolCalls [{ id?, name, args }], stop, error { code, message, retryable? }, delayMs and holdUntilFile.`,
    )
  }
  const written = Array.isArray(parsed.data) ? parsed.data : parsed.data.steps
  const steps: ScriptStep[] = written.map(({ holdUntilFile, ...step }) =>
    holdUntilFile === undefined
      ? (step as ScriptStep)
      : {
          ...(step as ScriptStep),
          hold: (signal) => fileAppears(resolve(dirname(path), holdUntilFile), signal),
        },
  )
  const model = Array.isArray(parsed.data) ? undefined : parsed.data.model
  return scriptedProvider(steps, model === undefined ? {} : { model })
}

/**
 * Resolves once `file` exists, or when `signal` aborts. `holdUntilFile` lets a demo, a bug
 * report or another process's test pause a scripted step after its text streamed (a step held
 * open while someone steers or cancels) and release it by creating the file.
 */
function fileAppears(file: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolvePromise) => {
    const check = () => {
      if (!signal.aborted && !existsSync(file)) return
      clearInterval(timer)
      signal.removeEventListener('abort', check)
      resolvePromise()
    }
    // Polling keeps the process alive while it waits, unlike an unreferenced watcher.
    const timer = setInterval(check, 20)
    signal.addEventListener('abort', check, { once: true })
    check()
  })
}
