/**
 * What a caller sends: the request text, optional JSON metadata and an
 * optional request id (seed 000 §3). TypeScript callers pass a
 * {@link PipelineRequest} or its plain-object form ({@link Input}); JSON
 * from the wire goes through {@link decode}, the one place that turns
 * unknown input into a request — unknown fields, non-JSON metadata,
 * metadata nested deeper than {@link maxMetadataDepth} levels, a
 * `requestId` that breaks the `RequestId` rule, oversized input and values
 * whose getters or Proxy traps throw are refused there with a typed
 * `InvalidRequest`, never a defect.
 *
 * @since 0.1.0
 */
import { Effect, Either, Schema } from "effect"
import { thrownText } from "./internal/jsonSnapshot.js"
import {
  describeKind,
  fromParseError,
  metadataCopy,
  metadataSnapshot,
  oneLine,
  readField,
  requestTextTooLarge,
  stringStandIn,
  tooLarge,
  unreadable
} from "./internal/requestInput.js"
import { encodedSize, JsonObject, maxDepth } from "./Json.js"
import { InvalidRequest } from "./PipelineError.js"
import { RequestId, requestIdProblem } from "./RequestId.js"

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
 * @category models
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
 * @category models
 */
export type Input = PipelineRequest | typeof PipelineRequest.Encoded

/**
 * Size limits on what a caller may send, in UTF-8 bytes: the request text,
 * and the metadata's JSON text.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly maxRequestBytes: number
  readonly maxMetadataBytes: number
}

/**
 * One mebibyte: the default for every size limit.
 *
 * @since 0.1.0
 * @category constants
 */
export const mebibyte = 1_048_576

/**
 * The default limits: 1 MiB of request text, 1 MiB of metadata.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultLimits: Limits = { maxRequestBytes: mebibyte, maxMetadataBytes: mebibyte }

/**
 * The most levels of arrays and objects request metadata may nest (the
 * metadata object itself is level 1); deeper → `InvalidRequest`
 * `too_deep`. The same bound as every value entering the pipeline
 * (`Json.maxDepth`).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxMetadataDepth = maxDepth

const fields = Object.keys(PipelineRequest.fields)

const parse = Schema.decodeUnknownEither(PipelineRequest, { onExcessProperty: "error", errors: "all" })

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
    if (typeof key === "string" && fields.includes(key)) continue
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
    const copy = metadataCopy(metadata.right.value, limits.maxMetadataBytes)
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
  if (Either.isLeft(decoded)) return Either.left(fromParseError(standIn, decoded.left, fields))
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
        new InvalidRequest({ reason: "malformed", path: "requestId", detail: oneLine(problem) })
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
  const copied = metadataSnapshot(metadata, limits.maxMetadataBytes)
  if (Either.isLeft(copied)) return Either.left(copied.left)
  const rebuilt = new PipelineRequest(
    requestId === undefined
      ? { request, metadata: copied.right as JsonObject }
      : { request, metadata: copied.right as JsonObject, requestId },
    { disableValidation: true }
  )
  return checkRequestText(rebuilt, limits)
}

/** The request text against its limit. */
const checkRequestText = (request: PipelineRequest, limits: Limits): Either.Either<PipelineRequest, InvalidRequest> => {
  const refused = requestTextTooLarge(request.request, limits.maxRequestBytes)
  return refused === undefined ? Either.right(request) : Either.left(refused)
}

/**
 * Checks a decoded request against the size limits. The request text is
 * measured only when it could exceed its limit (3 bytes per UTF-16 unit at
 * most); empty metadata is not walked.
 *
 * @example
 * ```ts
 * import { PipelineRequest } from "effect-agent-pipeline"
 *
 * const request = new PipelineRequest.PipelineRequest({ request: "x".repeat(5000) })
 * PipelineRequest.checkLimits(request, { maxRequestBytes: 4096, maxMetadataBytes: 4096 }) // Left(InvalidRequest too_large)
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const checkLimits = (
  request: PipelineRequest,
  limits: Limits
): Either.Either<PipelineRequest, InvalidRequest> =>
  Either.flatMap(checkRequestText(request, limits), (checked) => {
    if (Object.keys(checked.metadata).length > 0) {
      const size = encodedSize(checked.metadata)
      if (size > limits.maxMetadataBytes) {
        return Either.left(tooLarge("metadata", size, limits.maxMetadataBytes, "maxMetadataBytes"))
      }
    }
    return Either.right(checked)
  })

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
 * - `too_deep`: metadata nesting deeper than {@link maxMetadataDepth}
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
 * @category constructors
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
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { PipelineRequest } from "effect-agent-pipeline"
 *
 * const decoded = PipelineRequest.decodeEither({ request: "" })
 * if (Either.isLeft(decoded)) console.log(decoded.left.message) // invalid request at request: must be a non-empty string
 * ```
 *
 * @since 0.1.0
 * @category constructors
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
    return Either.isLeft(parsed)
      ? Either.left(fromParseError(input, parsed.left, fields))
      : checkLimits(parsed.right, limits)
  } catch (thrown) {
    // A Proxy whose traps throw where no single field is to blame
    // (its prototype, its keys).
    return Either.left(unreadable("", `reading it threw: ${thrownText(thrown)}`))
  }
}
