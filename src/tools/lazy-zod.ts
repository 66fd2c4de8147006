/**
 * zod, loaded when a schema is first needed rather than when a module is imported: loading it
 * costs more than the whole start-up budget (bench B10, docs/decisions/0147-no-zod-at-start-up.md),
 * and most runs never build most schemas.
 *
 * It is zod's CommonJS build, loaded with `require`, because the callers are synchronous (a
 * tool's `parse`, config parsing) and Node 20 cannot import an ES module synchronously. Mixing it
 * with the ES build that other modules import is safe in zod 4: its schema registry lives on
 * `globalThis` and its `instanceof` checks compare traits, not classes.
 */
import { createRequire } from 'node:module'
import type { z } from 'zod'

/** zod's `z` namespace, as a type (for a parameter that receives `zodNow()`). */
export type Zod = typeof z

let loaded: Zod | undefined

/** zod's `z`, loaded on the first call. */
export function zodNow(): Zod {
  loaded ??= (createRequire(import.meta.url)('zod') as { z: Zod }).z
  return loaded
}

/**
 * A schema built on first use and then shared: the construction is pure and the schema
 * immutable, so one copy serves every session and host.
 */
export function lazySchema<Schema>(build: (zod: Zod) => Schema): () => Schema {
  let schema: Schema | undefined
  return () => {
    schema ??= build(zodNow())
    return schema
  }
}
