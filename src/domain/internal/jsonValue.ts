/**
 * JSON values as data: their type, structural equality, deep copy and the
 * size of their compact JSON text. The `Json` namespace names them
 * (`Json.Json`, `Json.equals`, `Json.clone`, `Json.encodedSize`).
 */
import { byteLength } from "./utf8Chunks.js"

/** A JSON value. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

/** A JSON object. */
export type JsonRecord = { readonly [key: string]: JsonValue }

/** Structural equality of two JSON values (object key order is ignored). */
export const equals = (a: JsonValue | undefined, b: JsonValue | undefined): boolean => {
  if (a === b) return true
  if (a === undefined || b === undefined || a === null || b === null) return false
  if (typeof a !== "object" || typeof b !== "object") return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!equals(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ao = a as JsonRecord
  const bo = b as JsonRecord
  const ak = Object.keys(ao)
  if (ak.length !== Object.keys(bo).length) return false
  for (const k of ak) {
    if (!Object.prototype.hasOwnProperty.call(bo, k) || !equals(ao[k], bo[k])) return false
  }
  return true
}

/** A deep copy of a JSON value. */
export const clone = (value: JsonValue): JsonValue => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(clone)
  const out: Record<string, JsonValue> = {}
  for (const key of Object.keys(value)) {
    const copy = clone((value as JsonRecord)[key]!)
    // An own "__proto__" key stays a key: assigning it would set the prototype.
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true })
    } else out[key] = copy
  }
  return out
}

/** The UTF-8 size of a JSON value's compact JSON text, escape characters not counted. */
export const encodedSize = (value: JsonValue): number => {
  if (value === null) return 4
  switch (typeof value) {
    case "string":
      return byteLength(value) + 2
    case "boolean":
      return value ? 4 : 5
    case "number":
      return String(value).length
    default: {
      if (Array.isArray(value)) {
        let size = 2 + Math.max(0, value.length - 1)
        for (const item of value) size += encodedSize(item)
        return size
      }
      const keys = Object.keys(value)
      let size = 2 + Math.max(0, keys.length - 1)
      for (const key of keys) size += byteLength(key) + 3 + encodedSize((value as JsonRecord)[key]!)
      return size
    }
  }
}
