/**
 * The per-request context every stage sees: the request, the caller's
 * metadata and the enrichments that BeforePlanning hooks accumulate
 * (seed 000 §5).
 *
 * Hooks receive an immutable snapshot and return what they change, so the
 * runner can diff each hook's effect on the enrichments.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { JsonObject } from "./Json.js"
import { byteLength } from "./Utf8Chunks.js"

/**
 * The longest request id, in UTF-8 bytes.
 *
 * @since 0.1.0
 */
export const MAX_REQUEST_ID_BYTES = 200

// The common shape (generated ids, slugs, UUIDs): checked without Unicode tables.
const PLAIN_ID = /^[A-Za-z0-9._:-]+$/
// Control (Cc), format (Cf: zero-width and bidirectional controls),
// surrogate (Cs: a lone half of a pair), private-use (Co) and unassigned
// (Cn) code points, every kind of whitespace and line or paragraph
// separator, and the path separators.
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}\s/\\]/u

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
 */
export const requestIdProblem = (id: string): string | undefined => {
  if (id.length === 0) return "must be a non-empty string"
  // A UTF-16 unit is at most 3 UTF-8 bytes; 4 for a pair = 2 units.
  if (id.length * 3 > MAX_REQUEST_ID_BYTES) {
    const bytes = byteLength(id)
    if (bytes > MAX_REQUEST_ID_BYTES) return `must be at most ${MAX_REQUEST_ID_BYTES} bytes of UTF-8 (is ${bytes})`
  }
  if (id === "." || id === "..") return `must not be "." or ".."`
  if (PLAIN_ID.test(id)) return undefined
  const found = FORBIDDEN.exec(id)
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
 * The rule: 1 to {@link MAX_REQUEST_ID_BYTES} (200) bytes of UTF-8 text of
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
 */
export const RequestId = Schema.String.pipe(
  Schema.filter((id) => requestIdProblem(id) ?? true, {
    identifier: "RequestId",
    description:
      `1 to ${MAX_REQUEST_ID_BYTES} bytes of printable UTF-8: no control or format characters, no whitespace, no "/" or "\\", not "." or ".."`
  }),
  Schema.brand("RequestId")
)
/** @since 0.1.0 */
export type RequestId = typeof RequestId.Type

/** Rendered as `<agent_memory>…</agent_memory>` by the default prompt builder. */
export const EnrichmentRAGContext = "rag_context"
/** Rendered as `<conversation_history>…</conversation_history>`. */
export const EnrichmentConversationHistory = "conversation_history"
/** Rendered as `<agent_coordination>…</agent_coordination>`. */
export const EnrichmentActivityCoordination = "activity_coordination"
/** Inserted verbatim: the writer supplies its own `<user_profile>` block. */
export const EnrichmentUserProfile = "user_profile"
/** Request metadata key holding raw conversation turns for the ConversationHistoryPreparer. */
export const MetadataConversationTurns = "conversation_turns"

/**
 * The four enrichment keys the default prompt builder renders.
 *
 * @since 0.1.0
 */
export const KnownEnrichmentKeys = [
  EnrichmentRAGContext,
  EnrichmentConversationHistory,
  EnrichmentActivityCoordination,
  EnrichmentUserProfile
] as const

/**
 * The snapshot a hook sees. Enrichments are a fresh copy for every
 * invocation: mutating it has no effect; return changes instead.
 *
 * @since 0.1.0
 */
export interface PipelineContext {
  readonly requestId: RequestId
  readonly request: string
  readonly metadata: JsonObject
  readonly enrichments: JsonObject
}

/**
 * Enrichment changes returned by a BeforePlanning hook: keys to set and keys
 * to remove.
 *
 * @since 0.1.0
 */
export interface EnrichmentChanges {
  readonly enrichments?: JsonObject | undefined
  readonly remove?: ReadonlyArray<string> | undefined
}
