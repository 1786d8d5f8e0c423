/**
 * Canonical JSON text: one text per JSON value, so a digest or a MAC over
 * the text binds the value itself, not the way it happened to be written.
 * Object keys are sorted (by UTF-16 code units), there is no whitespace,
 * strings and numbers are written as `JSON.stringify` writes them — the
 * rules of RFC 8785 (JCS) for the values a checkpoint holds. Members whose
 * value is `undefined` are left out, as `JSON.stringify` leaves them out: a
 * value and its JSON round trip have the same canonical text.
 */

/**
 * The canonical JSON text of `value`. Anything that is not JSON data (a
 * function, a symbol, a bigint, a non-finite number, a class instance, a
 * cycle, `undefined` outside an object member) throws a `TypeError`: the
 * text is only ever taken of schema-encoded models, where such a value is a
 * defect.
 *
 * @example
 * ```ts
 * stringify({ b: [1, "x"], a: { d: null, c: true } })
 * // '{"a":{"c":true,"d":null},"b":[1,"x"]}'
 * ```
 */
export const stringify = (value: unknown): string => write(value, new Set())

const isPlain = (u: object): u is { readonly [key: string]: unknown } => {
  const proto: unknown = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

// Recursive: the values written here are decoded models, whose JSON fields
// the `Json` schema bounds in depth.
const write = (value: unknown, open: Set<object>): string => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value)
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON: ${value} is not a finite number`)
      return JSON.stringify(value)
    case "object": {
      if (value === null) return "null"
      if (open.has(value)) throw new TypeError("canonical JSON: a cycle (the value contains itself)")
      open.add(value)
      let text: string
      if (Array.isArray(value)) {
        text = "["
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i]
          if (item === undefined) throw new TypeError(`canonical JSON: undefined at index ${i}`)
          text += (i === 0 ? "" : ",") + write(item, open)
        }
        text += "]"
      } else {
        if (!isPlain(value)) throw new TypeError("canonical JSON: a class instance is not a plain JSON object")
        const record = value
        const keys = Object.keys(record).sort(compareKeys)
        text = "{"
        let first = true
        for (const key of keys) {
          const member = record[key]
          if (member === undefined) continue
          text += (first ? "" : ",") + JSON.stringify(key) + ":" + write(member, open)
          first = false
        }
        text += "}"
      }
      open.delete(value)
      return text
    }
    default:
      throw new TypeError(`canonical JSON: a ${typeof value} is not a JSON value`)
  }
}
