/**
 * `defineTool`: a tool from a zod schema. The schema gives both the JSON Schema the model sees
 * and the validation of the arguments the model sends back.
 */
import type { z } from 'zod'
import { type JsonObject, RudderError, toFrozenJson } from '../core/index.js'
import { checkArguments } from './argument-check.js'
import { zodNow } from './lazy-zod.js'
import type { ParsedArguments, Tool, ToolContext, ToolOutput } from './tool.js'

export type ToolDefinition<Schema extends z.ZodType> = {
  readonly name: string
  readonly description: string
  readonly parameters: Schema
  execute(args: z.output<Schema>, context: ToolContext): ToolOutput | Promise<ToolOutput>
  readonly concurrency?: 'parallel' | 'exclusive'
  /**
   * The JSON Schema of `parameters`, written out, so defining the tool does no zod work: the
   * built-in tools are defined each time a session opens (bench B10). It must be what zod
   * derives from `parameters` (draft 7, input side, without `$schema`); the built-in tools'
   * test checks theirs. Leave it out to have it derived.
   */
  readonly jsonSchema?: JsonObject
}

/**
 * A tool whose zod schema is built on first need (the built-in tools): its JSON Schema is
 * written out, and arguments that schema plainly accepts are taken without zod, so a run loads
 * zod only to word what is wrong with bad arguments (bench B10, docs/decisions/0147).
 */
export type LazyToolDefinition<Schema extends z.ZodType> = Omit<
  ToolDefinition<Schema>,
  'parameters' | 'jsonSchema'
> & {
  readonly parameters: () => Schema
  readonly jsonSchema: JsonObject
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** Defines a tool. Throws `INVALID_INPUT` at once for a bad name or a schema with no JSON Schema form. */
export function defineTool<Schema extends z.ZodType>(
  definition: ToolDefinition<Schema>,
): Tool<z.output<Schema>> {
  checkName(definition.name)
  if (definition.jsonSchema !== undefined)
    return toolOf(
      definition,
      writtenSchema(definition.name, definition.jsonSchema),
      zodParse(definition.name, definition.parameters),
    )
  let parameters: JsonObject
  try {
    // The schema's own method, so defining a tool does not load zod here; zod's function for
    // a schema made by a zod 4 older than that method.
    const options = { target: 'draft-7', io: 'input' } as const
    const schema = (
      typeof definition.parameters.toJSONSchema === 'function'
        ? definition.parameters.toJSONSchema(options)
        : zodNow().toJSONSchema(definition.parameters, options)
    ) as Record<string, unknown>
    delete schema.$schema
    parameters = toFrozenJson(schema, `tool ${definition.name}`, 'parameters') as JsonObject
  } catch (error) {
    throw new RudderError(
      'INVALID_INPUT',
      `tool ${definition.name}: its parameters schema cannot be expressed as JSON Schema (${(error as Error).message}); use plain zod objects, strings, numbers, arrays, enums and unions`,
      { cause: error },
    )
  }
  return toolOf(definition, parameters, zodParse(definition.name, definition.parameters))
}

/**
 * Defines a tool whose zod schema is built only when arguments fail the written JSON Schema
 * (to word the failure) or use what that check leaves to zod. `jsonSchema` must be what zod
 * derives from `parameters()`, as for `defineTool`.
 */
export function defineLazyTool<Schema extends z.ZodType>(
  definition: LazyToolDefinition<Schema>,
): Tool<z.output<Schema>> {
  checkName(definition.name)
  const parameters = writtenSchema(definition.name, definition.jsonSchema)
  let slow: ((args: unknown) => ParsedArguments<z.output<Schema>>) | undefined
  return toolOf(definition, parameters, (args) => {
    const checked = checkArguments(parameters, args)
    if (checked !== undefined) return { ok: true, args: checked as z.output<Schema> }
    slow ??= zodParse(definition.name, definition.parameters())
    return slow(args)
  })
}

function checkName(name: string): void {
  if (!NAME.test(name)) {
    throw new RudderError(
      'INVALID_INPUT',
      `tool name ${JSON.stringify(name)} must be 1–64 letters, digits, "_" or "-" (providers reject other names)`,
    )
  }
}

function writtenSchema(name: string, jsonSchema: JsonObject): JsonObject {
  return toFrozenJson(jsonSchema, `tool ${name}`, 'jsonSchema') as JsonObject
}

function toolOf<Schema extends z.ZodType>(
  definition: Omit<ToolDefinition<Schema>, 'parameters' | 'jsonSchema'>,
  parameters: JsonObject,
  parse: (args: unknown) => ParsedArguments<z.output<Schema>>,
): Tool<z.output<Schema>> {
  return {
    name: definition.name,
    description: definition.description,
    parameters,
    concurrency: definition.concurrency ?? 'parallel',
    parse,
    execute: definition.execute,
  }
}

function zodParse<Schema extends z.ZodType>(
  name: string,
  schema: Schema,
): (args: unknown) => ParsedArguments<z.output<Schema>> {
  return (args) => {
    const parsed = schema.safeParse(args)
    if (parsed.success) return { ok: true, args: parsed.data }
    return { ok: false, message: describeIssues(name, parsed.error) }
  }
}

/** Tells the model which fields were wrong and what was expected, one line each. */
function describeIssues(tool: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const path = issue.path.length === 0 ? '(the arguments)' : issue.path.map(String).join('.')
    return `- ${path}: ${issue.message}`
  })
  return `Invalid arguments for tool ${tool}:\n${lines.join('\n')}\nFix these fields and call ${tool} again.`
}
