/**
 * The pieces `PipelineRequest.decode` reads untyped input with: each field
 * read exactly once (a getter or Proxy trap that throws is a typed
 * refusal at that field), copies bounded before a Schema sees them, and
 * every refusal worded as one `InvalidRequest` line (the Schema's full
 * error kept in `issues`).
 */
import { Either, ParseResult } from "effect"
import { formatPath, type Json, maxDepth, snapshot } from "../Json.js"
import { InvalidRequest } from "../PipelineError.js"
import { thrownText, walk } from "./jsonSnapshot.js"
import { byteLength } from "./utf8Chunks.js"

/** The longest `detail` of a refusal. */
const detailChars = 300
/** The longest `issues` (the Schema's own error) of a refusal. */
const issuesChars = 8_000
// A request id, or a request text sent as an object, is refused anyway:
// its copy (made only so the Schema can say what it is) stays small.
const wrongTypeBytes = 4_096

/** Which limit a request broke (`PipelineOptions.<name>`). */
export type LimitName = "maxRequestBytes" | "maxMetadataBytes"

/** `text` on one line, at most `max` characters. */
export const oneLine = (text: string, max: number = detailChars): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

/** What kind of value `u` is, in words (`an array`, `a number`). */
export const describeKind = (u: unknown): string =>
  u === null
    ? "null"
    : Array.isArray(u)
    ? "an array"
    : u === undefined
    ? "undefined"
    : typeof u === "object"
    ? "an object"
    : `a ${typeof u}`

/** A refusal of a field (or the whole input, `path: ""`) that could not be read. */
export const unreadable = (path: string, reason: string) =>
  new InvalidRequest({ reason: "malformed", path, detail: oneLine(`could not be read: ${reason}`) })

/** One field of the input as it was read: absent, or its value. */
export type Field = { readonly present: false } | { readonly present: true; readonly value: unknown }

const absent: Field = { present: false }

/**
 * Reads a field exactly once; a getter or Proxy trap that throws is a
 * typed refusal at that field.
 */
export const readField = (
  input: object,
  keys: ReadonlyArray<PropertyKey>,
  name: string
): Either.Either<Field, InvalidRequest> => {
  if (!keys.includes(name)) return Either.right(absent)
  try {
    return Either.right({ present: true, value: (input as Readonly<Record<string, unknown>>)[name] })
  } catch (thrown) {
    return Either.left(unreadable(name, `reading it threw: ${thrownText(thrown)}`))
  }
}

/**
 * A string field sent as something else: an object is copied (bounded) so
 * the Schema can say what it got; one that cannot be copied is described.
 */
export const stringStandIn = (name: string, value: unknown): Either.Either<unknown, InvalidRequest> => {
  if (typeof value !== "object" || value === null) return Either.right(value)
  const walked = walk(value, {
    maxDepth,
    maxBytes: wrongTypeBytes,
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
export interface MetadataCopy {
  readonly value: unknown
  readonly json: boolean
}

/** Copies the metadata, measured against `maxBytes` as it is copied. */
export const metadataCopy = (value: unknown, maxBytes: number): Either.Either<MetadataCopy, InvalidRequest> => {
  if (typeof value !== "object" || value === null) return Either.right({ value, json: false })
  const walked = walk(value, {
    maxDepth,
    maxBytes,
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
          detail: `nests deeper than ${maxDepth} levels, the limit for metadata`
        })
      )
    case "too_large":
      return Either.left(tooLargeOver("metadata", maxBytes, "maxMetadataBytes"))
    default:
      return Either.left(unreadable(formatPath("metadata", path), reason))
  }
}

/** A refusal of input the Schema rejected; `fields` are the fields a request has. */
export const fromParseError = (
  input: unknown,
  error: ParseResult.ParseError,
  fields: ReadonlyArray<string>
): InvalidRequest => {
  const issues = oneLine(ParseResult.TreeFormatter.formatErrorSync(error), issuesChars)
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
    return new InvalidRequest({ reason: "malformed", path: "", detail: oneLine(error.message), issues })
  }
  if (first._tag === "Unexpected") {
    const names = all.filter((i) => i._tag === "Unexpected" && i.path.length === 1).map((i) => `"${String(i.path[0])}"`)
    return new InvalidRequest({
      reason: "unexpected_field",
      path: formatPath("", first.path),
      detail: oneLine(
        `unknown field${names.length > 1 ? "s" : ""} ${names.join(", ")} (a request has ${
          fields.map((f) => `"${f}"`).join(", ")
        })`
      ),
      issues
    })
  }
  return new InvalidRequest({
    reason: "malformed",
    path: formatPath("", first.path),
    detail: oneLine(first._tag === "Missing" ? "is required" : first.message),
    issues
  })
}

/** A refusal of text or metadata measured at `size` bytes, over `limit`. */
export const tooLarge = (path: string, size: number, limit: number, option: LimitName) =>
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
export const tooLargeOver = (path: string, limit: number, option: LimitName) =>
  new InvalidRequest({
    reason: "too_large",
    path,
    detail: `is over the limit of ${limit} bytes (PipelineOptions.${option})`,
    limit
  })

/**
 * The request text against its limit: measured only when it could exceed
 * it (3 bytes per UTF-16 unit at most); the refusal, or `undefined`.
 */
export const requestTextTooLarge = (text: string, maxBytes: number): InvalidRequest | undefined => {
  if (text.length * 3 <= maxBytes) return undefined
  const size = byteLength(text)
  return size > maxBytes ? tooLarge("request", size, maxBytes, "maxRequestBytes") : undefined
}

/** A checked copy of metadata that is an object (of a constructed request), or its refusal. */
export const metadataSnapshot = (metadata: object, maxBytes: number): Either.Either<Json, InvalidRequest> => {
  const copied = snapshot(metadata, { maxBytes })
  if (Either.isRight(copied)) return Either.right(copied.right.value)
  const { kind, path, reason } = copied.left
  return Either.left(
    kind === "too_large"
      ? tooLargeOver("metadata", maxBytes, "maxMetadataBytes")
      : new InvalidRequest({
        reason: kind === "too_deep" ? "too_deep" : "malformed",
        path: formatPath("metadata", path),
        detail: oneLine(kind === "too_deep" ? `nests deeper than ${maxDepth} levels, the limit for metadata` : reason)
      })
  )
}
