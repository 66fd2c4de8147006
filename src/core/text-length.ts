/**
 * The length of a block's `text` when the text itself is made only on first use (a stored
 * payload read back as bytes, src/stores/lazy-text.ts, decision 0176). Counting the transcript's
 * characters needs the length, not the text: with this the projection of a resumed log never
 * makes a payload's string.
 */
export const TEXT_LENGTH: unique symbol = Symbol('rudder.textLength')

/** `block.text.length`, without making the text when the block knows its length. */
export function textLength(block: { readonly text: string }): number {
  return (block as { readonly [TEXT_LENGTH]?: number })[TEXT_LENGTH] ?? block.text.length
}
