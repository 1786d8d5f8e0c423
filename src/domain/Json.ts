/**
 * JSON values: the only data that crosses a record, a prompt or a plan.
 * The types and Schemas of JSON values, the checks that tell JSON from
 * anything else (with the path to what is not JSON), and `snapshot`, which
 * reads a value from outside the library into a checked, measured copy.
 *
 * @since 0.1.0
 */
import { Either, type Schema } from "effect"
import { declareJson, findNotJson as findNotJsonAt, isJsonValue } from "./internal/jsonCheck.js"
import { formatPath as formatPathOf } from "./internal/jsonPath.js"
import { type Refusal as WalkRefusal, walk } from "./internal/jsonSnapshot.js"
import * as jsonValue from "./internal/jsonValue.js"

/**
 * A JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type Json = jsonValue.JsonValue

/**
 * A JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = jsonValue.JsonRecord

/**
 * Where a value stops being JSON: the path to the first offending value and
 * why it is not JSON.
 *
 * @since 0.1.0
 * @category models
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
 * @example
 * ```ts
 * import { Json } from "effect-agent-pipeline"
 *
 * const nested = (levels: number): Json.Json => (levels === 0 ? 0 : [nested(levels - 1)])
 * Json.snapshot(nested(Json.maxDepth + 1), { maxBytes: 1 << 20 }) // Left({ kind: "too_deep", … })
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const maxDepth = 256

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
 * @category utils
 */
export const findNotJson: (u: unknown) => NotJson | undefined = findNotJsonAt

/**
 * Whether a value is plain JSON data (no functions, symbols, undefined,
 * non-finite numbers, class instances, holes or cycles).
 *
 * @example
 * ```ts
 * import { Json } from "effect-agent-pipeline"
 *
 * Json.isJson({ a: [1, "x", null] }) // true
 * Json.isJson({ at: new Date() }) // false: a class instance
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isJson = (u: unknown): u is Json => isJsonValue(u)

/**
 * Schema of a JSON value. Decoding checks the shape once (it is recursive, so
 * several-MB values cost one walk); encoding is the identity.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Json } from "effect-agent-pipeline"
 *
 * const Event = Schema.Struct({ name: Schema.String, data: Json.Json })
 * Schema.decodeUnknownSync(Event)({ name: "tick", data: { n: 1 } })
 * ```
 *
 * @since 0.1.0
 * @category schemas
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
 * @category guards
 */
export const isJsonObject = (u: unknown): u is JsonObject =>
  typeof u === "object" && u !== null && !Array.isArray(u) && isJson(u)

/**
 * Schema of a JSON object.
 *
 * @since 0.1.0
 * @category schemas
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
 * @example
 * ```ts
 * import { Json } from "effect-agent-pipeline"
 *
 * Json.equals({ a: 1, b: [true] }, { b: [true], a: 1 }) // true
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const equals: (a: Json | undefined, b: Json | undefined) => boolean = jsonValue.equals

/**
 * A deep copy of a JSON value (faster than `structuredClone` for the small
 * values plans carry).
 *
 * @example
 * ```ts
 * import { Json } from "effect-agent-pipeline"
 *
 * const parameters = Json.clone({ city: "Lisbon", days: [1, 2] })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const clone = <A extends Json>(value: A): A => jsonValue.clone(value) as A

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
 * @category utils
 */
export const encodedSize: (value: Json) => number = jsonValue.encodedSize

/**
 * Why {@link snapshot} refused a value: it is not JSON (`not_json`), nests
 * deeper than allowed (`too_deep`), its JSON text is over the byte limit
 * (`too_large`), or reading it threw — a getter or a Proxy trap
 * (`unreadable`). `path` leads to the offending value; `reason` says what
 * is wrong with it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Refusal extends NotJson {
  readonly kind: "not_json" | "too_deep" | "too_large" | "unreadable"
}

/**
 * A checked copy and the UTF-8 size of its compact JSON text (as
 * {@link encodedSize} measures it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly value: Json
  readonly bytes: number
}

/**
 * How {@link snapshot} reads a value.
 *
 * @since 0.1.0
 * @category models
 */
export interface SnapshotOptions {
  /** The most UTF-8 bytes of JSON text; reading stops as soon as the value passes it. */
  readonly maxBytes: number
  /** The most levels of arrays and objects (default {@link maxDepth}, 256). */
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
 * import { Json } from "effect-agent-pipeline"
 *
 * Json.snapshot({ a: [1, 2] }, { maxBytes: 1024 }) // Right({ value: { a: [1, 2] }, bytes: 11 })
 * Json.snapshot({ n: 10n }, { maxBytes: 1024 }) // Left({ kind: "not_json", path: ["n"], reason: "a bigint is not a JSON value" })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const snapshot = (u: unknown, options: SnapshotOptions): Either.Either<Snapshot, Refusal> => {
  const walked = walk(u, {
    maxBytes: options.maxBytes,
    maxDepth: options.maxDepth ?? maxDepth,
    undefinedProperties: options.undefinedProperties ?? "refuse",
    lenient: false
  })
  return walked._tag === "Copied"
    // The strict walk admits JSON only.
    ? Either.right({ value: walked.value as Json, bytes: walked.bytes })
    : Either.left(refusal(walked.refusal))
}

const refusal = (r: WalkRefusal): Refusal => ({ kind: r.kind, path: r.path, reason: r.reason })

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
 * @category utils
 */
export const formatPath: (root: string, path: ReadonlyArray<PropertyKey>) => string = formatPathOf
