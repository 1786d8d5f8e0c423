/**
 * A model's text output measured and cut in UTF-8 bytes (the unit of
 * `ModelPolicy.maxOutputBytes`: what a record, a log line or a response
 * body will cost), without encoding it.
 *
 * The common case costs one comparison: a UTF-16 code unit is at most 3
 * UTF-8 bytes (a surrogate pair, two units, is 4), so a text of at most
 * `max / 3` units is within `max` bytes; and a text of more than `max`
 * units is over it (every unit is at least one byte). Only between the two
 * are the bytes counted — at most `max` units.
 */

/**
 * The UTF-8 length of `text` (a lone surrogate counts as U+FFFD: 3 bytes).
 *
 * @since 0.1.0
 * @category utils
 */
export const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8")

/**
 * Whether `text` is more than `max` UTF-8 bytes.
 *
 * @since 0.1.0
 * @category utils
 */
export const exceeds = (text: string, max: number): boolean => {
  if (text.length * 3 <= max) return false
  if (text.length > max) return true
  return utf8Length(text) > max
}

/**
 * The longest prefix of `text` of at most `max` UTF-8 bytes that does not
 * end inside a surrogate pair.
 *
 * @since 0.1.0
 * @category utils
 */
export const utf8Prefix = (text: string, max: number): string => {
  if (!exceeds(text, max)) return text
  let bytes = 0
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    let units = 1
    let size: number
    if (c < 0x80) size = 1
    else if (c < 0x800) size = 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        size = 4
        units = 2
      } else {
        size = 3
      }
    } else {
      size = 3
    }
    if (bytes + size > max) break
    bytes += size
    i += units
  }
  return text.slice(0, i)
}
