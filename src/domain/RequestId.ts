/**
 * The request id (DESIGN §2 "ids"): names a request's execution record and
 * appears in logs, spans, store keys and URLs, so it is checked wherever
 * one is made. The `PipelineContext` namespace re-exports everything here.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { byteLength } from "./internal/utf8Chunks.js"

/**
 * The longest request id, in UTF-8 bytes.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxRequestIdBytes = 200

// The common shape (generated ids, slugs, UUIDs): checked without Unicode tables.
const plainId = /^[A-Za-z0-9._:-]+$/
// Control (Cc), format (Cf: zero-width and bidirectional controls),
// surrogate (Cs: a lone half of a pair), private-use (Co) and unassigned
// (Cn) code points, every kind of whitespace and line or paragraph
// separator, and the path separators.
const forbidden = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}\s/\\]/u

const codePointOf = (text: string): string => {
  const code = text.codePointAt(0) ?? 0
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`
}

/**
 * What is wrong with a request id (see {@link RequestId} for the rule), or
 * `undefined` when it is a valid one.
 *
 * @example
 * ```ts
 * import { PipelineContext } from "effect-agent-pipeline"
 *
 * PipelineContext.requestIdProblem("order-42") // undefined
 * PipelineContext.requestIdProblem("../../etc/passwd") // "must not contain \"/\" or \"\\\" (found \"/\")"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const requestIdProblem = (id: string): string | undefined => {
  if (id.length === 0) return "must be a non-empty string"
  // A UTF-16 unit is at most 3 UTF-8 bytes; 4 for a pair = 2 units.
  if (id.length * 3 > maxRequestIdBytes) {
    const bytes = byteLength(id)
    if (bytes > maxRequestIdBytes) return `must be at most ${maxRequestIdBytes} bytes of UTF-8 (is ${bytes})`
  }
  if (id === "." || id === "..") return `must not be "." or ".."`
  if (plainId.test(id)) return undefined
  const found = forbidden.exec(id)
  if (found === null) return undefined
  const char = found[0]
  return char === "/" || char === "\\"
    ? `must not contain "/" or "\\" (found "${char}")`
    : `must be printable: no control, format, whitespace or unassigned characters (found ${
      codePointOf(char)
    } at index ${found.index})`
}

/**
 * Branded request id: names the request's execution record, and appears
 * in logs, spans, store keys and URLs, so it is checked wherever one is
 * made (decoding a request, `RequestId.make`, this Schema).
 *
 * The rule: 1 to {@link maxRequestIdBytes} (200) bytes of UTF-8 text of
 * printable characters — letters, marks, digits, punctuation and symbols
 * of any script (`order-42`, `tenant:a.b_c`, `заказ-7`, `注文-7`) — with
 * no control characters (NUL, newlines, ESC…), no format characters
 * (zero-width and bidirectional controls), no lone surrogates, private-use
 * or unassigned code points, no whitespace, no `/` or `\`, and neither
 * `.` nor `..`. So an id can never traverse a path, split a log line or
 * hide what it says.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { PipelineContext } from "effect-agent-pipeline"
 *
 * const id = PipelineContext.RequestId.make("order-42")
 * Schema.is(PipelineContext.RequestId)("a\u0000b") // false
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RequestId = Schema.String.pipe(
  Schema.filter((id) => requestIdProblem(id) ?? true, {
    identifier: "RequestId",
    description:
      `1 to ${maxRequestIdBytes} bytes of printable UTF-8: no control or format characters, no whitespace, no "/" or "\\", not "." or ".."`
  }),
  Schema.brand("RequestId")
)
/**
 * A decoded {@link RequestId}.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestId = typeof RequestId.Type
