/**
 * What a request returns: a completed response, or a suspension waiting for
 * a human decision; and, on the streaming path, the events that carry them.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PhaseRecord, ShortCircuitRecord } from "../domain/ExecutionRecord.js"
import { Checkpoint } from "../domain/Checkpoint.js"
import { JsonObject } from "../domain/Json.js"

/**
 * A completed answer. `confidence` is 1.0 for an accepted short-circuit and
 * otherwise the share of plan steps that succeeded (0.5 when no step ran).
 * `rawDraft` is the model's synthesis before AfterSynthesis hooks.
 *
 * @since 0.1.0
 */
export class AgentResponse extends Schema.Class<AgentResponse>("effect-agent-pipeline/AgentResponse")({
  requestId: Schema.String,
  response: Schema.String,
  confidence: Schema.Finite,
  metadata: JsonObject,
  shortCircuit: Schema.optional(ShortCircuitRecord),
  rawDraft: Schema.optional(Schema.String),
  phases: Schema.Array(PhaseRecord)
}) {}

/**
 * The request completed.
 *
 * @since 0.1.0
 */
export class Completed extends Schema.TaggedClass<Completed>("effect-agent-pipeline/Completed")("Completed", {
  response: AgentResponse
}) {}

/**
 * The request is suspended at a HITL checkpoint.
 *
 * @since 0.1.0
 */
export class Suspended extends Schema.TaggedClass<Suspended>("effect-agent-pipeline/Suspended")("Suspended", {
  requestId: Schema.String,
  checkpoint: Checkpoint
}) {}

/**
 * The result of a buffered request.
 *
 * @since 0.1.0
 */
export type PipelineResult = Completed | Suspended

/**
 * A synthesis token (already delivered to the client; AfterSynthesis cannot
 * withdraw it).
 *
 * @since 0.1.0
 */
export class Token extends Schema.TaggedClass<Token>("effect-agent-pipeline/Token")("Token", {
  text: Schema.String
}) {}

/**
 * Streaming events: tokens, then exactly one `Completed` (carrying the final,
 * post-hook response) or `Suspended`.
 *
 * @since 0.1.0
 */
export type StreamEvent = Token | Completed | Suspended

/**
 * Schema of {@link StreamEvent} (SSE encoding).
 *
 * @since 0.1.0
 */
export const StreamEvent = Schema.Union(Token, Completed, Suspended)
