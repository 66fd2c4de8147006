/**
 * Tool-call arguments as they arrive on the wire: a JSON text assembled from fragments.
 */
import { deepFreeze, type JsonValue } from '../core/index.js'

/**
 * Parses the assembled argument text of a tool call into a JSON object. Empty text means no
 * arguments (`{}`): several servers send nothing for a tool without parameters.
 *
 * Text that is not a JSON object (malformed, cut off, or a bare value) is returned unchanged as
 * a string, so a string always means "what the model wrote, unparsed". The agent's validation
 * then answers the model with an error result for that call ("expected object, received
 * string") and the model can try again; failing the whole response would throw away the rest
 * of the message. Adapters send such a string back to the provider as written.
 */
export function parseToolArguments(text: string): JsonValue {
  if (text.trim() === '') return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // Not JSON: handed on verbatim (see above), so nothing the model wrote is lost.
    return text
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return text
  return deepFreeze(parsed as JsonValue)
}
