/**
 * How many bytes a record takes, for the memory store's byte cap: the UTF-8
 * size of its compact JSON text, as `Json.encodedSize` counts it (escape
 * characters are not counted), measured without building the text — a
 * record holding a 5 MB draft is walked, not copied.
 *
 * Unlike `Json.encodedSize`, it accepts what a record's TypeScript type
 * allows and `JSON.stringify` skips: an optional property set to
 * `undefined` is left out (in an array it counts as `null`), as are
 * functions and symbols. The walk is iterative: no nesting overflows the
 * stack, so a hostile record costs time in proportion to its size, never a
 * crash.
 */
import { byteLength } from "../../domain/internal/utf8Chunks.js"

/** Whether `JSON.stringify` leaves a property with this value out. */
const omitted = (value: unknown): boolean =>
  value === undefined || typeof value === "function" || typeof value === "symbol"

/** The bytes of one scalar, or -1 for an array or object (walked by the caller). */
const scalarSize = (value: unknown): number => {
  if (value === null) return 4
  switch (typeof value) {
    case "string":
      return byteLength(value) + 2
    case "boolean":
      return value ? 4 : 5
    case "number":
      return Number.isFinite(value) ? String(value).length : 4
    case "bigint":
      // Never in a record (the pipeline refuses it at the boundary); counted as its digits.
      return String(value).length
    case "object":
      return -1
    default:
      // undefined, a function or a symbol in an array position: `null`.
      return 4
  }
}

/** Marks, on the walk's stack, where an array or object's children end. */
const leave: unique symbol = Symbol("leave")

/**
 * The size in bytes of `value`'s compact JSON text (escape characters not
 * counted). An object that contains itself (not JSON; the SQL stores refuse
 * it) counts 4 bytes where it recurs, so the walk always ends.
 */
export const recordSize = (value: unknown): number => {
  let size = 0
  const pending: Array<unknown> = [value]
  // The arrays and objects being walked: a value met again inside itself is a cycle.
  const ancestors = new Set<object>()
  const path: Array<object> = []
  while (pending.length > 0) {
    const next = pending.pop()
    if (next === leave) {
      ancestors.delete(path.pop()!)
      continue
    }
    const scalar = scalarSize(next)
    if (scalar >= 0) {
      size += scalar
      continue
    }
    const node = next as Record<string, unknown>
    if (ancestors.has(node)) {
      size += 4
      continue
    }
    ancestors.add(node)
    path.push(node)
    pending.push(leave)
    if (Array.isArray(node)) {
      // Brackets, and a comma between items.
      size += 2 + Math.max(0, node.length - 1)
      for (let i = 0; i < node.length; i++) pending.push(node[i])
      continue
    }
    // Braces, and per included property its quoted key, a colon and a comma between.
    let included = 0
    for (const key of Object.keys(node)) {
      const field = node[key]
      if (omitted(field)) continue
      included++
      size += byteLength(key) + 3
      pending.push(field)
    }
    size += 2 + Math.max(0, included - 1)
  }
  return size
}
