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
import type { JsonObject } from "./Json.js"
import type { RequestId } from "./RequestId.js"

export * from "./RequestId.js"

/**
 * The enrichment the default prompt builder renders as
 * `<agent_memory>…</agent_memory>` (auto-promoted from request metadata, C6).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, PipelineContext } from "effect-agent-pipeline"
 *
 * const notes = Hook.make({
 *   name: "notes",
 *   beforePlanning: () =>
 *     Effect.succeed({ enrichments: { [PipelineContext.enrichmentRagContext]: "The user trades from Lisbon." } })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const enrichmentRagContext = "rag_context"

/**
 * The enrichment rendered as `<conversation_history>…</conversation_history>`
 * (auto-promoted from request metadata, C6).
 *
 * @since 0.1.0
 * @category constants
 */
export const enrichmentConversationHistory = "conversation_history"

/**
 * The enrichment rendered as `<agent_coordination>…</agent_coordination>`
 * (what the activity hooks contribute).
 *
 * @since 0.1.0
 * @category constants
 */
export const enrichmentActivityCoordination = "activity_coordination"

/**
 * The enrichment inserted verbatim: its writer supplies the whole
 * `<user_profile>` block (see `UserProfile.render`).
 *
 * @since 0.1.0
 * @category constants
 */
export const enrichmentUserProfile = "user_profile"

/**
 * The request metadata key holding raw conversation turns, which the
 * `ConversationHistoryPreparer` turns into the `conversation_history`
 * enrichment.
 *
 * @since 0.1.0
 * @category constants
 */
export const metadataConversationTurns = "conversation_turns"

/**
 * The four enrichment keys the default prompt builder renders.
 *
 * @since 0.1.0
 * @category constants
 */
export const knownEnrichmentKeys = [
  enrichmentRagContext,
  enrichmentConversationHistory,
  enrichmentActivityCoordination,
  enrichmentUserProfile
] as const

/**
 * The snapshot a hook sees. Enrichments are a fresh copy for every
 * invocation: mutating it has no effect; return changes instead.
 *
 * @since 0.1.0
 * @category models
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
 * @example
 * ```ts
 * import type { PipelineContext } from "effect-agent-pipeline"
 *
 * const forget: PipelineContext.EnrichmentChanges = { remove: ["rag_context"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface EnrichmentChanges {
  readonly enrichments?: JsonObject | undefined
  readonly remove?: ReadonlyArray<string> | undefined
}
