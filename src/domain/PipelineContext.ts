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

/**
 * Branded request id.
 *
 * @since 0.1.0
 */
export const RequestId = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must be a non-empty string" }),
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
