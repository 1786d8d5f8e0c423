/**
 * JSON values: the only data that crosses a record, a prompt or a plan.
 *
 * @since 0.1.0
 */
import { ParseResult, Schema, type SchemaAST as AST } from "effect"
import { byteLength } from "./Utf8Chunks.js"

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
 * Where a value stops being JSON: the path to the first offending value and
 * why it is not JSON.
 *
 * @since 0.1.0
 */
export interface NotJson {
  readonly path: ReadonlyArray<string | number>
  readonly reason: string
}

const MAX_DEPTH = 512

/**
 * The first place where a value is not plain JSON data (a function, a
 * symbol, `undefined`, a non-finite number, a class instance, a cycle,
 * nesting deeper than 512 levels), or `undefined` when it is JSON.
 *
 * @example
 * ```ts
 * import { Json } from "effect-agent-pipeline"
 *
 * Json.findNotJson({ a: [1, Number.NaN] }) // { path: ["a", 1], reason: "NaN is not a finite number" }
 * ```
 *
 * @since 0.1.0
 */
export const findNotJson = (u: unknown): NotJson | undefined => {
  const found = notJsonAt(u, 0, new Set())
  return found === undefined ? undefined : { path: found.path.reverse(), reason: found.reason }
}

/**
 * Whether a value is plain JSON data (no functions, symbols, undefined,
 * non-finite numbers, class instances or cycles).
 *
 * @since 0.1.0
 */
export const isJson = (u: unknown): u is Json => notJsonAt(u, 0, new Set()) === undefined

// The path is built in reverse while unwinding: a valid value allocates nothing.
interface Found {
  readonly path: Array<string | number>
  readonly reason: string
}

const notJsonAt = (u: unknown, depth: number, seen: Set<object>): Found | undefined => {
  switch (typeof u) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(u) ? undefined : { path: [], reason: `${u} is not a finite number` }
    case "object": {
      if (u === null) return undefined
      if (depth > MAX_DEPTH) return { path: [], reason: `nesting deeper than ${MAX_DEPTH} levels` }
      if (seen.has(u)) return { path: [], reason: "a cycle (the value contains itself)" }
      seen.add(u)
      let found: Found | undefined
      if (Array.isArray(u)) {
        for (let i = 0; i < u.length && found === undefined; i++) {
          found = notJsonAt(u[i], depth + 1, seen)
          if (found !== undefined) found.path.push(i)
        }
      } else {
        const proto: unknown = Object.getPrototypeOf(u)
        if (proto !== Object.prototype && proto !== null) {
          found = { path: [], reason: `${instanceName(u)} is not a plain JSON object` }
        } else {
          for (const key of Object.keys(u)) {
            found = notJsonAt((u as Record<string, unknown>)[key], depth + 1, seen)
            if (found !== undefined) {
              found.path.push(key)
              break
            }
          }
        }
      }
      seen.delete(u)
      return found
    }
    case "undefined":
      return { path: [], reason: "undefined is not a JSON value" }
    default:
      return { path: [], reason: `a ${typeof u} is not a JSON value` }
  }
}

const instanceName = (u: object): string => {
  const name: unknown = u.constructor?.name
  return typeof name === "string" && name !== "" ? `a ${name} instance` : "a class instance"
}

/**
 * A schema over a JSON predicate whose failure points at the first
 * offending value (`metadata.deep.list[1]: Infinity is not a finite number`)
 * instead of rejecting the whole value.
 */
const declareJson = <A extends Json>(
  isA: (u: unknown) => u is A,
  notA: (u: unknown) => string | undefined,
  annotations: Schema.Annotations.Schema<A>
): Schema.Schema<A> => {
  const parse = () => (u: unknown, _options: unknown, ast: AST.Declaration) => {
    if (isA(u)) return ParseResult.succeed(u)
    const shape = notA(u)
    if (shape !== undefined) return ParseResult.fail(new ParseResult.Type(ast, u, shape))
    const found = findNotJson(u)
    const issue = new ParseResult.Type(ast, u, found?.reason ?? "not a JSON value")
    if (found === undefined) return ParseResult.fail(issue)
    const [head, ...tail] = found.path
    return ParseResult.fail(head === undefined ? issue : new ParseResult.Pointer([head, ...tail], u, issue))
  }
  return Schema.declare([], { decode: parse, encode: parse }, annotations)
}

/**
 * Schema of a JSON value. Decoding checks the shape once (it is recursive, so
 * several-MB values cost one walk); encoding is the identity.
 *
 * @since 0.1.0
 */
export const Json: Schema.Schema<Json> = declareJson(isJson, () => undefined, {
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
})

/**
 * Whether a value is a JSON object (what the `JsonObject` Schema accepts).
 *
 * @since 0.1.0
 */
export const isJsonObject = (u: unknown): u is JsonObject =>
  typeof u === "object" && u !== null && !Array.isArray(u) && isJson(u)

/**
 * Schema of a JSON object.
 *
 * @since 0.1.0
 */
export const JsonObject: Schema.Schema<JsonObject> = declareJson(
  isJsonObject,
  (u) =>
    typeof u !== "object" || u === null || Array.isArray(u)
      ? `expected a JSON object, got ${u === null ? "null" : Array.isArray(u) ? "an array" : `a ${typeof u}`}`
      : undefined,
  {
    identifier: "JsonObject",
    description: "a JSON object",
    // Decoding is the identity (no rebuilt object), so an own "__proto__" key
    // stays a plain key instead of becoming the prototype.
    jsonSchema: { type: "object" }
  }
)

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
  for (const key of Object.keys(value)) {
    const copy = cloneAny((value as JsonObject)[key]!)
    // An own "__proto__" key stays a key: assigning it would set the prototype.
    if (key === "__proto__") Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true })
    else out[key] = copy
  }
  return out
}

/**
 * The size of a JSON value's compact JSON text in UTF-8 bytes, not counting
 * the backslashes of escaped characters — what request and enrichment size
 * limits measure. Computed by a walk; no text is built.
 *
 * @example
 * ```ts
 * import { Json } from "effect-agent-pipeline"
 *
 * Json.encodedSize({ a: [1, "é"] }) // 14, the length of {"a":[1,"é"]} in UTF-8
 * ```
 *
 * @since 0.1.0
 */
export const encodedSize = (value: Json): number => {
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
      for (const key of keys) size += byteLength(key) + 3 + encodedSize((value as JsonObject)[key]!)
      return size
    }
  }
}
