/**
 * What a tool call failed with, as a bounded line of text: a handler's
 * failure or defect (any value, a Proxy included — describing it never
 * throws), or a Schema error whose value is too deep to print.
 */
import type { ParseResult } from "effect"

const maxDetail = 2_000

/**
 * A Schema error's message, bounded. Formatting prints the offending value
 * recursively: a value too deep for that (arguments rewritten by a hook)
 * gets a plain line instead of a defect.
 *
 * @since 0.1.0
 * @category utils
 */
export const bounded = (error: ParseResult.ParseError): string => {
  let text: string
  try {
    text = error.message
  } catch {
    text = "does not match its Schema (the value is too deep to print)"
  }
  return text.length <= maxDetail ? text : `${text.slice(0, maxDetail - 1)}…`
}

/**
 * What a handler failed or died with, in one bounded line; never throws.
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (u: unknown): string => {
  let text: string
  try {
    if (u instanceof Error) text = u.message
    else if (typeof u === "string") text = u
    else text = JSON.stringify(u) ?? String(u)
  } catch {
    try {
      text = String(u)
    } catch {
      text = "a value that cannot be printed"
    }
  }
  return text.length <= maxDetail ? text : `${text.slice(0, maxDetail - 1)}…`
}
