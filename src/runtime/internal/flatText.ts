/**
 * Text about to be kept (in a record) as one flat string.
 *
 * V8 keeps a string built by concatenation — a prompt assembled from its
 * sections — as a tree of its pieces, one object per piece and per join:
 * about four times its length in memory, and as many objects for the
 * garbage collector to trace for as long as it is kept. Reading a character
 * flattens the string in place (one copy of its characters), after which
 * the pieces are garbage. Measured on a benchmark request's two prompts:
 * about 12 KB kept as built, 3.6 KB flattened.
 */
export const flatText = (text: string): string => {
  text.charCodeAt(0)
  return text
}
