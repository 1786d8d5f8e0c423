/**
 * Tool results as JSON values, checked where they enter the pipeline: a
 * handler's encoded result is read once into a plain JSON copy — no
 * `bigint`, cycle, function, symbol, class instance (a `Date` included),
 * non-finite number, hole or `undefined` outside an object property (such
 * a property is dropped, as `JSON.stringify` drops it), at most
 * `Json.maxDepth` levels and at most the byte limit of JSON text. A
 * result that fails the check fails only its step (`invalid_result`); the
 * record never keeps it.
 *
 * A result checked by the registry is remembered (with its size), so the
 * tool caller does not walk it a second time; a result from anywhere else
 * — a registry service written by hand — is checked there.
 */
import { Either } from "effect"
import { formatPath, type Json, snapshot } from "../../domain/Json.js"

/**
 * The default `maxToolResultBytes`: 1 MiB of JSON text.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxResultBytes = 1_048_576

// Copies this module made, with their JSON size: nothing else holds them.
const checked = new WeakMap<object, number>()

const tooLarge = (maxBytes: number): string =>
  `result too large: its JSON text is over the limit of ${maxBytes} bytes (PipelineOptions.maxToolResultBytes); it was not kept`

/**
 * A tool's encoded result as the JSON its step keeps (`undefined`, a tool
 * with no result, is `null`), or what is wrong with it: the `invalid_result`
 * detail, naming the path (`result.items[2]: a bigint is not a JSON value`).
 *
 * @since 0.1.0
 * @category utils
 */
export const checkResult = (value: unknown, maxBytes: number): Either.Either<Json, string> => {
  if (value === undefined) return Either.right(null)
  if (typeof value === "object" && value !== null) {
    const size = checked.get(value)
    // Checked by the registry: only the limit may differ.
    if (size !== undefined) return size <= maxBytes ? Either.right(value as Json) : Either.left(tooLarge(maxBytes))
  }
  const copied = snapshot(value, { maxBytes, undefinedProperties: "drop" })
  if (Either.isLeft(copied)) {
    const { kind, path, reason } = copied.left
    return Either.left(kind === "too_large" ? tooLarge(maxBytes) : `${formatPath("result", path)}: ${reason}`)
  }
  const { bytes, value: json } = copied.right
  if (typeof json === "object" && json !== null) checked.set(json, bytes)
  return Either.right(json)
}
