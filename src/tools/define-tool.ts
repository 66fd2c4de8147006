/**
 * `defineTool`: a tool from a zod schema. The schema gives both the JSON Schema the model sees
 * and the validation of the arguments the model sends back.
 */
import { z } from 'zod'
import { type JsonObject, RudderError, toFrozenJson } from '../core/index.js'
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

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** Defines a tool. Throws `INVALID_INPUT` at once for a bad name or a schema with no JSON Schema form. */
export function defineTool<Schema extends z.ZodType>(
  definition: ToolDefinition<Schema>,
): Tool<z.output<Schema>> {
  if (!NAME.test(definition.name)) {
    throw new RudderError(
      'INVALID_INPUT',
      `tool name ${JSON.stringify(definition.name)} must be 1–64 letters, digits, "_" or "-" (providers reject other names)`,
    )
  }
  if (definition.jsonSchema !== undefined)
    return toolOf(
      definition,
      toFrozenJson(definition.jsonSchema, `tool ${definition.name}`, 'jsonSchema') as JsonObject,
    )
  let parameters: JsonObject
  try {
    const schema = z.toJSONSchema(definition.parameters, {
      target: 'draft-7',
      io: 'input',
    }) as Record<string, unknown>
    delete schema.$schema
    parameters = toFrozenJson(schema, `tool ${definition.name}`, 'parameters') as JsonObject
  } catch (error) {
    throw new RudderError(
      'INVALID_INPUT',
      `tool ${definition.name}: its parameters schema cannot be expressed as JSON Schema (${(error as Error).message}); use plain zod objects, strings, numbers, arrays, enums and unions`,
      { cause: error },
    )
  }
  return toolOf(definition, parameters)
}

function toolOf<Schema extends z.ZodType>(
  definition: ToolDefinition<Schema>,
  parameters: JsonObject,
): Tool<z.output<Schema>> {
  const schema = definition.parameters
  return {
    name: definition.name,
    description: definition.description,
    parameters,
    concurrency: definition.concurrency ?? 'parallel',
    parse(args: unknown): ParsedArguments<z.output<Schema>> {
      const parsed = schema.safeParse(args)
      if (parsed.success) return { ok: true, args: parsed.data }
      return { ok: false, message: describeIssues(definition.name, parsed.error) }
    },
    execute: definition.execute,
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
