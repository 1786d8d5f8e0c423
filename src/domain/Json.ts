/**
 * JSON values: the only data that crosses a record, a prompt or a plan.
 *
 * @since 0.1.0
 */
import { Either, ParseResult, Schema, type SchemaAST as AST } from "effect"
import { instanceName, type Refusal as WalkRefusal, thrownText, walk } from "./internal/jsonSnapshot.js"
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

/**
 * The most levels of arrays and objects a JSON value may nest when it
 * enters the pipeline: request metadata, a tool's result, a plan, a hook's
 * enrichments or short-circuit payload. A scalar is at depth 0, `{}` and
 * `[]` at 1, `{"a":[]}` at 2.
 *
 * Evidence wraps these values a few levels deeper (a record holds a step's
 * output, an enrichment effect holds the enrichment), so the structural
 * checks of {@link isJson} and the {@link Json} Schema allow twice as much
 * (512): a value admitted at the entry never trips them later.
 *
 * @since 0.1.0
 */
export const MAX_DEPTH = 256

// What isJson / findNotJson (and the Json Schemas) accept: room for the
// evidence that wraps entry values (see MAX_DEPTH). Their walks recurse, so
// the bound is checked before every level.
const STRUCTURAL_DEPTH = 512

/**
 * The first place where a value is not plain JSON data (a function, a
 * symbol, `undefined`, a non-finite number, a class instance, a cycle, a
 * hole in an array, nesting deeper than 512 levels, a getter or Proxy that
 * throws when read), or `undefined` when it is JSON.
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
  const found = notJsonSafely(u)
  return found === undefined ? undefined : { path: found.path.reverse(), reason: found.reason }
}

/**
 * Whether a value is plain JSON data (no functions, symbols, undefined,
 * non-finite numbers, class instances, holes or cycles).
 *
 * @since 0.1.0
 */
export const isJson = (u: unknown): u is Json => notJsonSafely(u) === undefined

// A getter or a Proxy trap that throws makes the value "not JSON", never a
// defect of the caller (one try for the whole walk: the valid path pays nothing).
const notJsonSafely = (u: unknown): Found | undefined => {
  try {
    return notJsonAt(u, 0, new Set())
  } catch (thrown) {
    // Rare: find where, with the walk that catches every read (the path
    // is built in reverse, as `notJsonAt` builds it).
    const walked = walk(u, {
      maxDepth: STRUCTURAL_DEPTH,
      maxBytes: Number.MAX_SAFE_INTEGER,
      undefinedProperties: "refuse",
      lenient: false
    })
    return walked._tag === "Refused"
      ? { path: [...walked.refusal.path].reverse(), reason: walked.refusal.reason }
      : { path: [], reason: `reading it threw: ${thrownText(thrown)}` }
  }
}

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
      if (depth > STRUCTURAL_DEPTH) return { path: [], reason: `nesting deeper than ${STRUCTURAL_DEPTH} levels` }
      if (seen.has(u)) return { path: [], reason: "a cycle (the value contains itself)" }
      seen.add(u)
      let found: Found | undefined
      if (Array.isArray(u)) {
        for (let i = 0; i < u.length && found === undefined; i++) {
          const item: unknown = u[i]
          found = item === undefined && !(i in u)
            ? { path: [], reason: "a hole (a missing array element) is not a JSON value" }
            : notJsonAt(item, depth + 1, seen)
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
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true })
    } else out[key] = copy
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

/**
 * Why {@link snapshot} refused a value: it is not JSON (`not_json`), nests
 * deeper than allowed (`too_deep`), its JSON text is over the byte limit
 * (`too_large`), or reading it threw — a getter or a Proxy trap
 * (`unreadable`). `path` leads to the offending value; `reason` says what
 * is wrong with it.
 *
 * @since 0.1.0
 */
export interface Refusal extends NotJson {
  readonly kind: "not_json" | "too_deep" | "too_large" | "unreadable"
}

/**
 * A checked copy and the UTF-8 size of its compact JSON text (as
 * {@link encodedSize} measures it).
 *
 * @since 0.1.0
 */
export interface Snapshot {
  readonly value: Json
  readonly bytes: number
}

/**
 * How {@link snapshot} reads a value.
 *
 * @since 0.1.0
 */
export interface SnapshotOptions {
  /** The most UTF-8 bytes of JSON text; reading stops as soon as the value passes it. */
  readonly maxBytes: number
  /** The most levels of arrays and objects (default {@link MAX_DEPTH}, 256). */
  readonly maxDepth?: number | undefined
  /**
   * An object property whose value is `undefined`: `"refuse"` (default:
   * strict JSON) or `"drop"` (what `JSON.stringify` does — for values whose
   * TypeScript type has optional fields). `undefined` anywhere else (an
   * array element, the value itself) is always refused.
   */
  readonly undefinedProperties?: "refuse" | "drop" | undefined
}

/**
 * Reads a value from outside — a request body, a tool result, a hook's
 * contribution — into a fresh copy that is plain JSON, checked in the same
 * walk: no `bigint`, function, symbol, class instance (a `Date` included),
 * non-finite number, `undefined`, hole or cycle; at most `maxDepth` levels;
 * at most `maxBytes` of JSON text. Each property is read exactly once, so a
 * getter or Proxy cannot show the check one value and the pipeline another;
 * one that throws is a refusal, never a defect. The walk is iterative: no
 * nesting overflows the stack.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Json } from "effect-agent-pipeline"
 *
 * Json.snapshot({ a: [1, 2] }, { maxBytes: 1024 }) // Right({ value: { a: [1, 2] }, bytes: 11 })
 * Json.snapshot({ n: 10n }, { maxBytes: 1024 }) // Left({ kind: "not_json", path: ["n"], reason: "a bigint is not a JSON value" })
 * ```
 *
 * @since 0.1.0
 */
export const snapshot = (u: unknown, options: SnapshotOptions): Either.Either<Snapshot, Refusal> => {
  const walked = walk(u, {
    maxBytes: options.maxBytes,
    maxDepth: options.maxDepth ?? MAX_DEPTH,
    undefinedProperties: options.undefinedProperties ?? "refuse",
    lenient: false
  })
  return walked._tag === "Copied"
    // The strict walk admits JSON only.
    ? Either.right({ value: walked.value as Json, bytes: walked.bytes })
    : Either.left(refusal(walked.refusal))
}

const refusal = (r: WalkRefusal): Refusal => ({ kind: r.kind, path: r.path, reason: r.reason })

const PATH_CHARS = 200

/**
 * A path as one readable, bounded string: `root.user.tags[2]`. A path too
 * long to read (a value nested hundreds of levels) keeps its start and its
 * end around an ellipsis.
 *
 * @example
 * ```ts
 * import { Json } from "effect-agent-pipeline"
 *
 * Json.formatPath("metadata", ["user", "tags", 2]) // "metadata.user.tags[2]"
 * ```
 *
 * @since 0.1.0
 */
export const formatPath = (root: string, path: ReadonlyArray<PropertyKey>): string => {
  let out = root
  for (const key of path) {
    out = typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`
    // Stop building once the kept parts are known: a deep path is long.
    if (out.length > PATH_CHARS * 4) break
  }
  if (out.length <= PATH_CHARS) return out
  const full = path.length
  return `${out.slice(0, 120)}…(${full} keys)…${formatTail(path)}`
}

const formatTail = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (let i = path.length - 1; i >= 0 && out.length < 60; i--) {
    const key = path[i]!
    out = typeof key === "number" ? `[${key}]${out}` : `.${String(key)}${out}`
  }
  return out.length > 60 ? out.slice(out.length - 60) : out
}
