/**
 * JSON values: the only data that crosses a record, a prompt or a plan.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * A JSON value.
 *
 * @since 0.1.0
 */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/**
 * A JSON object.
 *
 * @since 0.1.0
 */
export type JsonObject = { readonly [key: string]: Json }

/**
 * Schema of a JSON value. Decoding checks the shape once (it is recursive, so
 * several-MB values cost one walk); encoding is the identity.
 *
 * @since 0.1.0
 */
export const Json: Schema.Schema<Json> = Schema.declare(
  (u: unknown): u is Json => isJson(u),
  {
    identifier: "Json",
    description: "a JSON value (null, boolean, finite number, string, array or object)",
    // Any JSON value: lets providers derive a JSON Schema for structured output.
    jsonSchema: {
      anyOf: [
        { type: "null" },
        { type: "boolean" },
        { type: "number" },
        { type: "string" },
        { type: "array" },
        { type: "object" }
      ]
    }
  }
)

/**
 * Schema of a JSON object.
 *
 * @since 0.1.0
 */
export const JsonObject: Schema.Schema<JsonObject> = Schema.declare(
  (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u) && isJson(u),
  {
    identifier: "JsonObject",
    description: "a JSON object",
    // Decoding is the identity (no rebuilt object), so an own "__proto__" key
    // stays a plain key instead of becoming the prototype.
    jsonSchema: { type: "object" }
  }
)

/**
 * Whether a value is plain JSON data (no functions, symbols, undefined,
 * non-finite numbers, class instances or cycles).
 *
 * @since 0.1.0
 */
export const isJson = (u: unknown): u is Json => check(u, 0, new Set())

const MAX_DEPTH = 512

const check = (u: unknown, depth: number, seen: Set<object>): boolean => {
  if (u === null) return true
  switch (typeof u) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(u)
    case "object": {
      if (depth > MAX_DEPTH || seen.has(u)) return false
      seen.add(u)
      let ok = true
      if (Array.isArray(u)) {
        for (const item of u) {
          if (!check(item, depth + 1, seen)) {
            ok = false
            break
          }
        }
      } else {
        const proto = Object.getPrototypeOf(u)
        if (proto !== Object.prototype && proto !== null) {
          ok = false
        } else {
          for (const key of Object.keys(u)) {
            if (!check((u as Record<string, unknown>)[key], depth + 1, seen)) {
              ok = false
              break
            }
          }
        }
      }
      seen.delete(u)
      return ok
    }
    default:
      return false
  }
}

/**
 * Structural equality of two JSON values (object key order is ignored).
 *
 * @since 0.1.0
 */
export const equals = (a: Json | undefined, b: Json | undefined): boolean => {
  if (a === b) return true
  if (a === undefined || b === undefined || a === null || b === null) return false
  if (typeof a !== "object" || typeof b !== "object") return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!equals(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ao = a as JsonObject
  const bo = b as JsonObject
  const ak = Object.keys(ao)
  if (ak.length !== Object.keys(bo).length) return false
  for (const k of ak) {
    if (!Object.prototype.hasOwnProperty.call(bo, k) || !equals(ao[k], bo[k])) return false
  }
  return true
}

/**
 * A deep copy of a JSON value (faster than `structuredClone` for the small
 * values plans carry).
 *
 * @since 0.1.0
 */
export const clone = <A extends Json>(value: A): A => cloneAny(value) as A

const cloneAny = (value: Json): Json => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(cloneAny)
  const out: Record<string, Json> = {}
  for (const key of Object.keys(value)) out[key] = cloneAny((value as JsonObject)[key]!)
  return out
}
