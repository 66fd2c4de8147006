/**
 * Reads a scripted-provider script from a JSON file (`--provider scripted:<file.json>`): the
 * way demos and bug reports ship a reproducible model. Validated, with errors naming the field.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import type { z } from 'zod'
import { ConfigError } from '../../core/index.js'
import type { JsonValue } from '../../core/values.js'
import { type ScriptedProvider, type ScriptStep, scriptedProvider } from './scripted-provider.js'

/**
 * The script's zod schemas, built only when a script fails the plain check below, to word what
 * is wrong: loading zod costs more than a whole headless run's start-up budget (bench B10,
 * docs/decisions/0147-no-zod-at-start-up.md). Its CommonJS build, since this is synchronous.
 */
export function buildScriptSchemas() {
  const zod = (createRequire(import.meta.url)('zod') as { z: typeof z }).z
  const jsonValue: z.ZodType<JsonValue> = zod.lazy(() =>
    zod.union([
      zod.null(),
      zod.boolean(),
      zod.number(),
      zod.string(),
      zod.array(jsonValue),
      zod.record(zod.string(), jsonValue),
    ]),
  )
  const stepSchema = zod
    .object({
      text: zod.string().optional(),
      thinking: zod.string().optional(),
      toolCalls: zod
        .array(
          zod.object({ id: zod.string().optional(), name: zod.string(), args: jsonValue }).strict(),
        )
        .optional(),
      stop: zod.enum(STOPS).optional(),
      error: zod
        .object({
          code: zod.string(),
          message: zod.string(),
          retryable: zod.boolean().optional(),
          retryAfterMs: zod.number().optional(),
        })
        .strict()
        .optional(),
      delayMs: zod.number().nonnegative().optional(),
      holdUntilFile: zod.string().min(1).optional(),
    })
    .strict()
  // An array of steps, or an object with the steps and a model name.
  const stepsSchema = zod.array(stepSchema)
  const objectSchema = zod.object({ model: zod.string().optional(), steps: stepsSchema }).strict()
  return { stepsSchema, objectSchema }
}

const STOPS = ['stop', 'tool-calls', 'max-tokens'] as const

type WrittenStep = z.output<ReturnType<typeof buildScriptSchemas>['stepsSchema']>[number]
type WrittenScript = { readonly model?: string | undefined; readonly steps: WrittenStep[] }

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
  const script = plainScript(value) ?? checkedScript(path, value)
  const steps: ScriptStep[] = script.steps.map(({ holdUntilFile, ...step }) =>
    holdUntilFile === undefined
      ? (step as ScriptStep)
      : {
          ...(step as ScriptStep),
          hold: (signal) => fileAppears(resolve(dirname(path), holdUntilFile), signal),
        },
  )
  return scriptedProvider(steps, script.model === undefined ? {} : { model: script.model })
}

/** The script checked by its zod schema, which words the first problem as a `ConfigError`. */
function checkedScript(path: string, value: unknown): WrittenScript {
  const { stepsSchema, objectSchema } = buildScriptSchemas()
  // Parsed by shape, so an error names the bad step's path rather than "no union member matched".
  const parsed = Array.isArray(value) ? stepsSchema.safeParse(value) : objectSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const where = issue.path.length === 0 ? 'the top level' : issue.path.map(String).join('.')
    throw new ConfigError(
      `the script ${path} is invalid at ${where}: ${issue.message}. Steps take text, thinking, toolCalls [{ id?, name, args }], stop, error { code, message, retryable? }, delayMs and holdUntilFile.`,
    )
  }
  return Array.isArray(parsed.data) ? { steps: parsed.data } : parsed.data
}

/**
 * The script as its zod schema would return it, when it plainly fits (JSON from `JSON.parse`
 * with every key known and every value of its type), or undefined to let zod decide and word
 * the problem. test/providers/script-file.test.ts checks the two agree.
 */
export function plainScript(value: unknown): WrittenScript | undefined {
  if (Array.isArray(value)) {
    return value.every(isPlainStep) ? { steps: value as WrittenStep[] } : undefined
  }
  if (!isObject(value) || !onlyKeys(value, ['model', 'steps'])) return undefined
  if (!optional(value.model, isString) || !Array.isArray(value.steps)) return undefined
  if (!value.steps.every(isPlainStep)) return undefined
  return value as WrittenScript
}

const STEP_KEYS = [
  'text',
  'thinking',
  'toolCalls',
  'stop',
  'error',
  'delayMs',
  'holdUntilFile',
] as const

function isPlainStep(step: unknown): boolean {
  return (
    isObject(step) &&
    onlyKeys(step, STEP_KEYS) &&
    optional(step.text, isString) &&
    optional(step.thinking, isString) &&
    optional(
      step.toolCalls,
      (calls) =>
        Array.isArray(calls) &&
        calls.every(
          (call) =>
            isObject(call) &&
            onlyKeys(call, ['id', 'name', 'args']) &&
            optional(call.id, isString) &&
            isString(call.name) &&
            Object.hasOwn(call, 'args') &&
            isJson(call.args),
        ),
    ) &&
    optional(step.stop, (stop) => (STOPS as readonly unknown[]).includes(stop)) &&
    optional(
      step.error,
      (error) =>
        isObject(error) &&
        onlyKeys(error, ['code', 'message', 'retryable', 'retryAfterMs']) &&
        isString(error.code) &&
        isString(error.message) &&
        optional(error.retryable, (retryable) => typeof retryable === 'boolean') &&
        optional(error.retryAfterMs, isFiniteNumber),
    ) &&
    optional(step.delayMs, (delay) => isFiniteNumber(delay) && delay >= 0) &&
    optional(step.holdUntilFile, (file) => isString(file) && file.length > 0)
  )
}

/** Absent is fine; present (even as undefined, which JSON cannot hold) must pass `check`. */
function optional(value: unknown, check: (value: unknown) => boolean): boolean {
  return value === undefined ? true : check(value)
}

function isJson(value: unknown): boolean {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return true
  if (typeof value === 'number') return Number.isFinite(value)
  if (Array.isArray(value)) return value.every(isJson)
  return isObject(value) && Object.values(value).every(isJson)
}

function isObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  return Object.getPrototypeOf(value) === Object.prototype
}

function onlyKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  return Object.keys(value).every((key) => keys.includes(key))
}

function isString(value: unknown): value is string {
  return typeof value === 'string'
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value)
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
