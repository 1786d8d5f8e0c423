/**
 * A record's stored body — the text every store keeps — and its decoding
 * from any body format a store may hold: format 2 (compact, what this
 * version writes; `recordCompact.ts`) and format 1 (the record Schema's own
 * encoded form, what earlier versions wrote). Both decode through the record
 * Schema, so a body is a record exactly when it was before.
 *
 * A record's body is encoded once: the pipeline measures every snapshot it
 * writes ({@link bodyBytes}), and a store writing it reads the same text.
 */
import { Either, ParseResult, Schema } from "effect"
import { ExecutionRecord } from "../ExecutionRecord.js"
import { currentBodyFormat } from "./recordCompact.js"
import { expand, NotCompact } from "./recordCompactDecode.js"
import { encodeText } from "./recordCompactEncode.js"
import { byteLength } from "./utf8Chunks.js"

const Format1 = Schema.encodedSchema(ExecutionRecord)
const decodeFormat1 = ParseResult.decodeUnknown(ExecutionRecord)

/**
 * The body format of a parsed body: a format 2 body (or newer) says so in
 * `v`; a body without a numeric `v` of 2 or more is format 1 (which never
 * wrote one — and ignored any, as it still does).
 */
const formatOf = (json: unknown): number =>
  json !== null && typeof json === "object" && "v" in json && typeof json.v === "number" && json.v >= 2
    ? json.v
    : 1

/** A body of either format into format 1 (and a record's encoded form into its format 2 body). */
const BodyToFormat1 = Schema.transformOrFail(Schema.Unknown, Format1, {
  // The expansion builds format 1 from loose JSON; Format1 (the target) checks it.
  strict: false,
  decode: (body, _options, ast) => {
    const format = formatOf(body)
    if (format === 1) return ParseResult.succeed(body)
    if (format !== currentBodyFormat) {
      return ParseResult.fail(
        new ParseResult.Type(ast, body, `body format ${format} is newer than this library's ${currentBodyFormat}`)
      )
    }
    try {
      return ParseResult.succeed(expand(body))
    } catch (error) {
      return ParseResult.fail(
        new ParseResult.Type(ast, body, error instanceof NotCompact ? error.detail : String(error))
      )
    }
  },
  encode: (encoded) => ParseResult.map(decodeFormat1(encoded), (record): unknown => JSON.parse(bodyText(record)))
})

/**
 * A stored body of either format, decoded into a record (encoding writes
 * format 2).
 */
export const StoredRecord = Schema.compose(BodyToFormat1, ExecutionRecord).annotations({
  identifier: "StoredExecutionRecord"
})

const decodeStored = Schema.decodeUnknownEither(StoredRecord)

/** Why a stored body is not a record. */
export interface BodyDecodeFailure {
  readonly reason: "future_version" | "corrupt"
  readonly detail: string
}

/**
 * A parsed stored body (either format) back into its record. A body of a
 * newer format than this library writes is `future_version`.
 */
export const decodeBody = (json: unknown): Either.Either<ExecutionRecord, BodyDecodeFailure> => {
  const format = formatOf(json)
  if (format > currentBodyFormat) {
    return Either.left({
      reason: "future_version",
      detail: `body format ${format} is newer than this library's ${currentBodyFormat}`
    })
  }
  return Either.mapLeft(decodeStored(json), (error) => ({
    reason: "corrupt",
    detail: ParseResult.TreeFormatter.formatErrorSync(error)
  }))
}

/** A record's encoded body without its writer stamp, and that text's UTF-8 size. */
export interface Encoded {
  readonly text: string
  readonly bytes: number
}

// Records are immutable once built: each is encoded at most once.
const encodings = new WeakMap<object, Encoded>()

/**
 * The record's format 2 body text without its `writer` (encoded now, or
 * when it was first asked for). Throws a `RangeError` for a record whose
 * text is longer than a JavaScript string can be.
 */
export const encoded = (record: ExecutionRecord): Encoded => {
  let known = encodings.get(record)
  if (known === undefined) {
    const text = encodeText(record)
    known = { text, bytes: byteLength(text) }
    encodings.set(record, known)
  }
  return known
}

/** `stamped` (a copy of `record` with another `writer`) shares `record`'s encoding, if it has one. */
export const shareEncoding = (record: ExecutionRecord, stamped: ExecutionRecord): void => {
  const known = encodings.get(record)
  if (known !== undefined) encodings.set(stamped, known)
}

/** The writer stamp's text: `,"writer":{…}` before the body's closing brace. */
const writerText = (writer: NonNullable<ExecutionRecord["writer"]>): string => `,"writer":${JSON.stringify(writer)}`

/**
 * The record's stored body (format 2, its writer stamp included): the text
 * a store writes.
 */
export const bodyText = (record: ExecutionRecord): string => {
  const { text } = encoded(record)
  return record.writer === undefined ? text : `${text.slice(0, -1)}${writerText(record.writer)}}`
}

/** The UTF-8 size of {@link bodyText}, without building it. */
export const bodyBytes = (record: ExecutionRecord): number =>
  encoded(record).bytes + (record.writer === undefined ? 0 : byteLength(writerText(record.writer)))
