/**
 * What a caller sends: the request text, optional JSON metadata and an
 * optional request id (seed 000 §3). TypeScript callers pass a
 * {@link PipelineRequest} or its plain-object form ({@link Input}); JSON
 * from the wire goes through {@link decode}, the one place that turns
 * unknown input into a request — unknown fields, non-JSON metadata and
 * oversized input are refused there with a typed `InvalidRequest`.
 *
 * @since 0.1.0
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { encodedSize, isJsonObject, JsonObject } from "./Json.js"
import { RequestId } from "./PipelineContext.js"
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

const FIELDS = Object.keys(PipelineRequest.fields)
const DETAIL_CHARS = 300
const ISSUES_CHARS = 8_000

const parse = Schema.decodeUnknownEither(PipelineRequest, { onExcessProperty: "error", errors: "all" })

/**
 * The request the Schema would decode from a well-formed plain object (only
 * known fields, each of its type), built without the Schema interpreter;
 * `undefined` when only the Schema can say what is wrong.
 */
const direct = (input: unknown): Either.Either<PipelineRequest, ParseResult.ParseError> | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  let known = 0
  const { metadata, request, requestId } = input as { readonly [key: string]: unknown }
  if (typeof request !== "string" || request.length === 0) return undefined
  known++
  if (metadata !== undefined) {
    if (!isJsonObject(metadata)) return undefined
    known++
  } else if ("metadata" in input) return undefined
  if (requestId !== undefined) {
    if (typeof requestId !== "string" || requestId.length === 0) return undefined
    known++
  } else if ("requestId" in input) return undefined
  // Any other key is an unknown field: the Schema names it.
  if (Object.keys(input).length !== known) return undefined
  return Either.right(
    new PipelineRequest(
      requestId === undefined
        ? { request, metadata: metadata ?? {} }
        : { request, metadata: metadata ?? {}, requestId: RequestId.make(requestId) },
      { disableValidation: true }
    )
  )
}

const oneLine = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

/** `metadata.user.tags[2]`; `""` for the root. */
const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) =>
      typeof key === "number"
        ? `${out}[${key}]`
        : out === ""
        ? String(key)
        : `${out}.${String(key)}`,
    ""
  )

const describeKind = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : u === undefined ? "undefined" : `a ${typeof u}`

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
  if (first === undefined) return new InvalidRequest({ reason: "malformed", path: "", detail: oneLine(error.message, DETAIL_CHARS), issues })
  if (first._tag === "Unexpected") {
    const names = all.filter((i) => i._tag === "Unexpected" && i.path.length === 1).map((i) => `"${String(i.path[0])}"`)
    return new InvalidRequest({
      reason: "unexpected_field",
      path: formatPath(first.path),
      detail: oneLine(
        `unknown field${names.length > 1 ? "s" : ""} ${names.join(", ")} (a request has ${FIELDS.map((f) => `"${f}"`).join(", ")})`,
        DETAIL_CHARS
      ),
      issues
    })
  }
  return new InvalidRequest({
    reason: "malformed",
    path: formatPath(first.path),
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
 * Checks a decoded request against the size limits. The request text is
 * measured only when it could exceed its limit (3 bytes per UTF-16 unit at
 * most); empty metadata is not walked.
 *
 * @since 0.1.0
 */
export const checkLimits = (request: PipelineRequest, limits: Limits): Either.Either<PipelineRequest, InvalidRequest> => {
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
 * passes — and checks it against the size limits. Fields a request does not
 * have are refused (not dropped), so a misspelled `requestID` never goes
 * unnoticed.
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
export const decode = (input: unknown, limits: Limits = defaultLimits): Effect.Effect<PipelineRequest, InvalidRequest> => {
  // A constructed instance was validated by its constructor; a well-formed
  // plain request is built directly; anything else goes through the Schema.
  const decoded = input instanceof PipelineRequest ? Either.right(input) : direct(input) ?? parse(input)
  if (Either.isLeft(decoded)) return Effect.fail(fromParseError(input, decoded.left))
  const checked = checkLimits(decoded.right, limits)
  return Either.isLeft(checked) ? Effect.fail(checked.left) : Effect.succeed(checked.right)
}
