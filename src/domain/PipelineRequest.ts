/**
 * What a caller sends: the request text, optional JSON metadata and an
 * optional request id (seed 000 §3). TypeScript callers pass a
 * {@link PipelineRequest} or its plain-object form ({@link Input}); JSON
 * from the wire goes through {@link decode}, the one place that turns
 * unknown input into a request — unknown fields, non-JSON metadata,
 * metadata nested deeper than {@link MAX_METADATA_DEPTH} levels, a
 * `requestId` that breaks the `RequestId` rule, oversized input and values
 * whose getters or Proxy traps throw are refused there with a typed
 * `InvalidRequest`, never a defect.
 *
 * @since 0.1.0
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { thrownText, walk } from "./internal/jsonSnapshot.js"
import { encodedSize, formatPath, JsonObject, MAX_DEPTH, snapshot } from "./Json.js"
import { RequestId, requestIdProblem } from "./PipelineContext.js"
import { InvalidRequest } from "./PipelineError.js"
import { byteLength } from "./Utf8Chunks.js"

/**
 * A decoded request.
 *
 * @example
 * ```ts
 * import { PipelineRequest } from "effect-agent-pipeline"
 *
 * const request = new PipelineRequest.PipelineRequest({ request: "What is the stock quote for ACME?" })
 * request.metadata // {}
 * ```
 *
 * @since 0.1.0
 */
export class PipelineRequest extends Schema.Class<PipelineRequest>("effect-agent-pipeline/PipelineRequest")({
  request: Schema.String.pipe(Schema.minLength(1, { message: () => "must be a non-empty string" })),
  metadata: Schema.optionalWith(JsonObject, { default: () => ({}) }),
  requestId: Schema.optional(RequestId)
}) {}

/**
 * What `Pipeline.process` and `Pipeline.stream` accept: a decoded request or
 * its plain-object form. A misspelled field is a type error at the call site.
 *
 * @example
 * ```ts
 * import type { PipelineRequest } from "effect-agent-pipeline"
 *
 * const input: PipelineRequest.Input = {
 *   request: "What's the weather forecast in Lisbon?",
 *   requestId: "req-1",
 *   metadata: { user_id: "u-42" }
 * }
 * ```
 *
 * @since 0.1.0
 */
export type Input = PipelineRequest | typeof PipelineRequest.Encoded

/**
 * Size limits on what a caller may send, in UTF-8 bytes: the request text,
 * and the metadata's JSON text.
 *
 * @since 0.1.0
 */
export interface Limits {
  readonly maxRequestBytes: number
  readonly maxMetadataBytes: number
}

/**
 * One mebibyte: the default for every size limit.
 *
 * @since 0.1.0
 */
export const MEBIBYTE = 1_048_576

/**
 * The default limits: 1 MiB of request text, 1 MiB of metadata.
 *
 * @since 0.1.0
 */
export const defaultLimits: Limits = { maxRequestBytes: MEBIBYTE, maxMetadataBytes: MEBIBYTE }

/**
 * The most levels of arrays and objects request metadata may nest (the
 * metadata object itself is level 1); deeper → `InvalidRequest`
 * `too_deep`. The same bound as every value entering the pipeline
 * (`Json.MAX_DEPTH`).
 *
 * @since 0.1.0
 */
export const MAX_METADATA_DEPTH = MAX_DEPTH

const FIELDS = Object.keys(PipelineRequest.fields)
const DETAIL_CHARS = 300
const ISSUES_CHARS = 8_000
// A request id, or a request text sent as an object, is refused anyway:
// its copy (made only so the Schema can say what it is) stays small.
const WRONG_TYPE_BYTES = 4_096

const parse = Schema.decodeUnknownEither(PipelineRequest, { onExcessProperty: "error", errors: "all" })

/** One field of the input as it was read: absent, or its value. */
type Field = { readonly present: false } | { readonly present: true; readonly value: unknown }

const ABSENT: Field = { present: false }

/**
 * Reads a field exactly once; a getter or Proxy trap that throws is a
 * typed refusal at that field.
 */
const readField = (
  input: object,
  keys: ReadonlyArray<PropertyKey>,
  name: string
): Either.Either<Field, InvalidRequest> => {
  if (!keys.includes(name)) return Either.right(ABSENT)
  try {
    return Either.right({ present: true, value: (input as Readonly<Record<string, unknown>>)[name] })
  } catch (thrown) {
    return Either.left(unreadable(name, `reading it threw: ${thrownText(thrown)}`))
  }
}

const unreadable = (path: string, reason: string) =>
  new InvalidRequest({ reason: "malformed", path, detail: oneLine(`could not be read: ${reason}`, DETAIL_CHARS) })

/**
 * A string field sent as something else: an object is copied (bounded) so
 * the Schema can say what it got; one that cannot be copied is described.
 */
const stringStandIn = (name: string, value: unknown): Either.Either<unknown, InvalidRequest> => {
  if (typeof value !== "object" || value === null) return Either.right(value)
  const walked = walk(value, {
    maxDepth: MAX_DEPTH,
    maxBytes: WRONG_TYPE_BYTES,
    undefinedProperties: "keep",
    lenient: true
  })
  if (walked._tag === "Copied") return Either.right(walked.value)
  return Either.left(
    walked.refusal.kind === "unreadable"
      ? unreadable(formatPath(name, walked.refusal.path), walked.refusal.reason)
      : new InvalidRequest({
        reason: "malformed",
        path: name,
        detail: `Expected string, actual ${describeKind(value)}`
      })
  )
}

/** The metadata, copied; `json` tells whether the copy is strict JSON. */
interface MetadataCopy {
  readonly value: unknown
  readonly json: boolean
}

const metadataCopy = (value: unknown, limits: Limits): Either.Either<MetadataCopy, InvalidRequest> => {
  if (typeof value !== "object" || value === null) return Either.right({ value, json: false })
  const walked = walk(value, {
    maxDepth: MAX_DEPTH,
    maxBytes: limits.maxMetadataBytes,
    undefinedProperties: "keep",
    lenient: true
  })
  if (walked._tag === "Copied") {
    return Either.right({ value: walked.value, json: walked.json && !Array.isArray(walked.value) })
  }
  const { kind, path, reason } = walked.refusal
  switch (kind) {
    case "too_deep":
      return Either.left(
        new InvalidRequest({
          reason: "too_deep",
          path: formatPath("metadata", path),
          detail: `nests deeper than ${MAX_DEPTH} levels, the limit for metadata`
        })
      )
    case "too_large":
      return Either.left(tooLargeOver("metadata", limits.maxMetadataBytes, "maxMetadataBytes"))
    default:
      return Either.left(unreadable(formatPath("metadata", path), reason))
  }
}

/**
 * Reads a request that is not a constructed instance. Every field is read
 * once and copied (a getter or Proxy cannot show the check one value and
 * the pipeline another); the Schema only ever sees the copies — so a
 * bad-but-ordinary request gets the Schema's own error, and one nested
 * thousands deep never reaches a recursive formatter. A well-formed request
 * is built from the copies directly.
 */
const fromPlain = (input: object, limits: Limits): Either.Either<PipelineRequest, InvalidRequest> => {
  const keys = Reflect.ownKeys(input)
  const standIn: Record<PropertyKey, unknown> = {}
  let unknownField = false
  for (const key of keys) {
    if (typeof key === "string" && FIELDS.includes(key)) continue
    unknownField = true
    // The Schema names it; its value does not matter (and is not read).
    Object.defineProperty(standIn, key, { value: null, enumerable: true, writable: true, configurable: true })
  }
  const request = readField(input, keys, "request")
  if (Either.isLeft(request)) return Either.left(request.left)
  const metadata = readField(input, keys, "metadata")
  if (Either.isLeft(metadata)) return Either.left(metadata.left)
  const requestId = readField(input, keys, "requestId")
  if (Either.isLeft(requestId)) return Either.left(requestId.left)

  let metadataIsJson = !metadata.right.present
  if (request.right.present) {
    const copy = stringStandIn("request", request.right.value)
    if (Either.isLeft(copy)) return Either.left(copy.left)
    standIn.request = copy.right
  }
  if (metadata.right.present && metadata.right.value !== undefined) {
    const copy = metadataCopy(metadata.right.value, limits)
    if (Either.isLeft(copy)) return Either.left(copy.left)
    standIn.metadata = copy.right.value
    metadataIsJson = copy.right.json
  } else if (metadata.right.present) {
    standIn.metadata = undefined
  }
  if (requestId.right.present) {
    const copy = stringStandIn("requestId", requestId.right.value)
    if (Either.isLeft(copy)) return Either.left(copy.left)
    standIn.requestId = copy.right
  }

  const text = standIn.request
  const id = standIn.requestId
  const direct = !unknownField && metadataIsJson && typeof text === "string" && text.length > 0 &&
    (!requestId.right.present || (typeof id === "string" && requestIdProblem(id) === undefined))
  if (direct) {
    const meta = (standIn.metadata ?? {}) as JsonObject
    const built = new PipelineRequest(
      typeof id === "string"
        ? { request: text, metadata: meta, requestId: RequestId.make(id, { disableValidation: true }) }
        : { request: text, metadata: meta },
      { disableValidation: true }
    )
    // The metadata was measured while it was copied.
    return checkRequestText(built, limits)
  }
  const decoded = parse(standIn)
  if (Either.isLeft(decoded)) return Either.left(fromParseError(standIn, decoded.left))
  // Accepted by the Schema: its metadata is absent, or the copy measured above.
  return checkRequestText(decoded.right, limits)
}

/**
 * A constructed instance: its constructor validated it, unless it was made
 * with validation disabled — so its fields are checked again, and its
 * metadata is copied and measured like any other.
 */
const fromInstance = (input: PipelineRequest, limits: Limits): Either.Either<PipelineRequest, InvalidRequest> => {
  const { metadata, request, requestId } = input
  if (typeof request !== "string" || request.length === 0) {
    return Either.left(
      new InvalidRequest({ reason: "malformed", path: "request", detail: "must be a non-empty string" })
    )
  }
  if (requestId !== undefined) {
    const problem = typeof requestId === "string" ? requestIdProblem(requestId) : "must be a string"
    if (problem !== undefined) {
      return Either.left(
        new InvalidRequest({ reason: "malformed", path: "requestId", detail: oneLine(problem, DETAIL_CHARS) })
      )
    }
  }
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
    return Either.left(
      new InvalidRequest({
        reason: "malformed",
        path: "metadata",
        detail: `expected a JSON object, got ${describeKind(metadata)}`
      })
    )
  }
  if (Object.keys(metadata).length === 0) return checkRequestText(input, limits)
  const copied = snapshot(metadata, { maxBytes: limits.maxMetadataBytes })
  if (Either.isLeft(copied)) {
    const { kind, path, reason } = copied.left
    return Either.left(
      kind === "too_large"
        ? tooLargeOver("metadata", limits.maxMetadataBytes, "maxMetadataBytes")
        : new InvalidRequest({
          reason: kind === "too_deep" ? "too_deep" : "malformed",
          path: formatPath("metadata", path),
          detail: oneLine(
            kind === "too_deep" ? `nests deeper than ${MAX_DEPTH} levels, the limit for metadata` : reason,
            DETAIL_CHARS
          )
        })
    )
  }
  const rebuilt = new PipelineRequest(
    requestId === undefined
      ? { request, metadata: copied.right.value as JsonObject }
      : { request, metadata: copied.right.value as JsonObject, requestId },
    { disableValidation: true }
  )
  return checkRequestText(rebuilt, limits)
}

const oneLine = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

const describeKind = (u: unknown): string =>
  u === null
    ? "null"
    : Array.isArray(u)
    ? "an array"
    : u === undefined
    ? "undefined"
    : typeof u === "object"
    ? "an object"
    : `a ${typeof u}`

const fromParseError = (input: unknown, error: ParseResult.ParseError): InvalidRequest => {
  const issues = oneLine(ParseResult.TreeFormatter.formatErrorSync(error), ISSUES_CHARS)
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return new InvalidRequest({
      reason: "malformed",
      path: "",
      detail: `expected an object with a "request" string, got ${describeKind(input)}`,
      issues
    })
  }
  const all = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = all[0]
  if (first === undefined) {
    return new InvalidRequest({ reason: "malformed", path: "", detail: oneLine(error.message, DETAIL_CHARS), issues })
  }
  if (first._tag === "Unexpected") {
    const names = all.filter((i) => i._tag === "Unexpected" && i.path.length === 1).map((i) => `"${String(i.path[0])}"`)
    return new InvalidRequest({
      reason: "unexpected_field",
      path: formatPath("", first.path),
      detail: oneLine(
        `unknown field${names.length > 1 ? "s" : ""} ${names.join(", ")} (a request has ${
          FIELDS.map((f) => `"${f}"`).join(", ")
        })`,
        DETAIL_CHARS
      ),
      issues
    })
  }
  return new InvalidRequest({
    reason: "malformed",
    path: formatPath("", first.path),
    detail: oneLine(first._tag === "Missing" ? "is required" : first.message, DETAIL_CHARS),
    issues
  })
}

const tooLarge = (path: string, size: number, limit: number, option: keyof Limits) =>
  new InvalidRequest({
    reason: "too_large",
    path,
    detail: `is ${size} bytes, over the limit of ${limit} bytes (PipelineOptions.${option})`,
    limit
  })

/**
 * Metadata that the copy stopped measuring at the limit: its exact size was
 * not computed (the walk stops there, whatever the input holds).
 */
const tooLargeOver = (path: string, limit: number, option: keyof Limits) =>
  new InvalidRequest({
    reason: "too_large",
    path,
    detail: `is over the limit of ${limit} bytes (PipelineOptions.${option})`,
    limit
  })

/** The request text against its limit (measured only when it could exceed it). */
const checkRequestText = (request: PipelineRequest, limits: Limits): Either.Either<PipelineRequest, InvalidRequest> => {
  if (request.request.length * 3 > limits.maxRequestBytes) {
    const size = byteLength(request.request)
    if (size > limits.maxRequestBytes) {
      return Either.left(tooLarge("request", size, limits.maxRequestBytes, "maxRequestBytes"))
    }
  }
  return Either.right(request)
}

/**
 * Checks a decoded request against the size limits. The request text is
 * measured only when it could exceed its limit (3 bytes per UTF-16 unit at
 * most); empty metadata is not walked.
 *
 * @since 0.1.0
 */
export const checkLimits = (
  request: PipelineRequest,
  limits: Limits
): Either.Either<PipelineRequest, InvalidRequest> => {
  if (request.request.length * 3 > limits.maxRequestBytes) {
    const size = byteLength(request.request)
    if (size > limits.maxRequestBytes) {
      return Either.left(tooLarge("request", size, limits.maxRequestBytes, "maxRequestBytes"))
    }
  }
  if (Object.keys(request.metadata).length > 0) {
    const size = encodedSize(request.metadata)
    if (size > limits.maxMetadataBytes) {
      return Either.left(tooLarge("metadata", size, limits.maxMetadataBytes, "maxMetadataBytes"))
    }
  }
  return Either.right(request)
}

/**
 * Decodes a request — JSON from the wire, or anything an untyped caller
 * passes — and checks it against the limits. Fields a request does not
 * have are refused (not dropped), so a misspelled `requestID` never goes
 * unnoticed. What it refuses, always as a typed `InvalidRequest`:
 *
 * - `unexpected_field`: a field a request does not have;
 * - `malformed`: a field of the wrong type, metadata that is not a JSON
 *   object (a function, a `bigint`, a `Date`, `NaN`, `undefined`, a
 *   cycle…), a `requestId` that breaks the `RequestId` rule (printable, at
 *   most 200 bytes, no `/`, `\\`, `.` or `..`), or a field whose getter or
 *   Proxy throws when read;
 * - `too_large`: the request text or the metadata over its byte limit;
 * - `too_deep`: metadata nesting deeper than {@link MAX_METADATA_DEPTH}
 *   (256) levels.
 *
 * Every field is read once and the metadata is copied in one iterative
 * walk, which also measures it: nothing the caller still holds can change
 * the request afterwards, and no nesting overflows the stack.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PipelineRequest } from "effect-agent-pipeline"
 *
 * const body: unknown = JSON.parse('{"request":"What is the stock quote for ACME?","requestId":"r-1"}')
 * const request = PipelineRequest.decode(body) // Effect<PipelineRequest, InvalidRequest>
 *
 * // A different bound than the defaults:
 * const small = PipelineRequest.decode(body, { maxRequestBytes: 4096, maxMetadataBytes: 4096 })
 * ```
 *
 * @since 0.1.0
 */
export const decode = (
  input: unknown,
  limits: Limits = defaultLimits
): Effect.Effect<PipelineRequest, InvalidRequest> => {
  const decoded = decodeEither(input, limits)
  return Either.isLeft(decoded) ? Effect.fail(decoded.left) : Effect.succeed(decoded.right)
}

/**
 * {@link decode}, answered synchronously.
 *
 * @since 0.1.0
 */
export const decodeEither = (
  input: unknown,
  limits: Limits = defaultLimits
): Either.Either<PipelineRequest, InvalidRequest> => {
  try {
    if (input instanceof PipelineRequest) return fromInstance(input, limits)
    if (typeof input === "object" && input !== null && !Array.isArray(input)) return fromPlain(input, limits)
    if (typeof input === "object" || typeof input === "function") {
      // An array or a function: said without asking the Schema to print it.
      const detail = `expected an object with a "request" string, got ${describeKind(input)}`
      return Either.left(new InvalidRequest({ reason: "malformed", path: "", detail, issues: detail }))
    }
    // A primitive: the Schema's own error.
    const parsed = parse(input)
    return Either.isLeft(parsed) ? Either.left(fromParseError(input, parsed.left)) : checkLimits(parsed.right, limits)
  } catch (thrown) {
    // A Proxy whose traps throw where no single field is to blame
    // (its prototype, its keys).
    return Either.left(unreadable("", `reading it threw: ${thrownText(thrown)}`))
  }
}
