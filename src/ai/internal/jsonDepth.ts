/**
 * How deeply JSON text nests, found without parsing it and without
 * recursion: one pass over the characters, counting the open brackets that
 * are not inside strings. Recursive code — `JSON.stringify`, a recursive
 * Schema, a formatter printing a value — overflows the stack on input
 * nested a few thousand deep; this is what is checked before such input is
 * handed to it.
 */

/**
 * Whether `text` (JSON or not: only brackets outside strings count) nests
 * deeper than `limit`. Stops at the first bracket past the limit.
 *
 * @since 0.1.0
 * @category utils
 */
export const nestsDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) i++
      else if (c === 0x22 /* " */) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return true
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--
    }
  }
  return false
}
