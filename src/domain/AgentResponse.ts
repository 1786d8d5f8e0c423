/**
 * What a request returns: a completed response, a suspension waiting for a
 * human decision, or — on resume — the human's rejection; and, on the
 * streaming path, the events that carry them.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Checkpoint } from "./Checkpoint.js"
import { PhaseRecord, ShortCircuitRecord } from "./ExecutionRecord.js"
import { JsonObject } from "./Json.js"

/**
 * A completed answer. `confidence` is 1.0 for an accepted short-circuit and
 * otherwise the share of plan steps that succeeded (0.5 when no step ran).
 * `rawDraft` is the model's synthesis before AfterSynthesis hooks.
 *
 * @since 0.1.0
 * @category models
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
 * @category models
 */
export class Completed extends Schema.TaggedClass<Completed>("effect-agent-pipeline/Completed")("Completed", {
  response: AgentResponse
}) {}

/**
 * The request is suspended at a HITL checkpoint. The checkpoint carries what
 * to show the approver — the `plan`, its `reason`, and `planDigest` (the
 * SHA-256 of the plan's canonical JSON), which the approver's decision
 * echoes back: `resume(checkpointId, decision, { planDigest })`.
 *
 * @example
 * ```ts
 * import { AgentResponse } from "effect-agent-pipeline"
 *
 * const forApprover = (suspended: AgentResponse.Suspended) => ({
 *   checkpointId: suspended.checkpoint.checkpointId,
 *   steps: suspended.checkpoint.plan.steps.map((s) => `${s.capability} ${JSON.stringify(s.parameters)}`),
 *   planDigest: suspended.checkpoint.planDigest
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Suspended extends Schema.TaggedClass<Suspended>("effect-agent-pipeline/Suspended")("Suspended", {
  requestId: Schema.String,
  checkpoint: Checkpoint
}) {}

/**
 * A human rejected the plan a HITL checkpoint held (`resume(id, "reject")`):
 * a decided outcome, not a failure. Nothing of the rejected phase ran; the
 * checkpoint is gone (a decided checkpoint is not resumable again) and the
 * request's record ends `rejected`. `reason` is why the plan was put to a
 * human (the checkpoint's reason), `phase` the phase it would have run in.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Pipeline } from "effect-agent-pipeline"
 *
 * const decide = (checkpointId: string, approved: boolean) =>
 *   Effect.gen(function*() {
 *     const pipeline = yield* Pipeline.Pipeline
 *     const result = yield* pipeline.resume(checkpointId, approved ? "approve" : "reject")
 *     switch (result._tag) {
 *       case "Completed":
 *         return result.response.response
 *       case "Suspended":
 *         return `waiting again at ${result.checkpoint.checkpointId}`
 *       case "Rejected":
 *         return `not done: the plan of phase ${result.phase} was rejected (${result.reason})`
 *     }
 *   })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Rejected extends Schema.TaggedClass<Rejected>("effect-agent-pipeline/Rejected")("Rejected", {
  requestId: Schema.String,
  checkpointId: Schema.String,
  phase: Schema.Int,
  reason: Schema.String
}) {}

/**
 * The result of a buffered request: `process` ends `Completed` or
 * `Suspended`; `resume` may also end `Rejected`.
 *
 * @since 0.1.0
 * @category models
 */
export type PipelineResult = Completed | Suspended | Rejected

/**
 * Schema of {@link PipelineResult} (for HTTP).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { AgentResponse } from "effect-agent-pipeline"
 *
 * const toJson = Schema.encodeSync(AgentResponse.PipelineResult)
 * const fromJson = Schema.decodeUnknownSync(AgentResponse.PipelineResult)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PipelineResult = Schema.Union(Completed, Suspended, Rejected)

/**
 * A synthesis token (already delivered to the client; AfterSynthesis cannot
 * withdraw it).
 *
 * @since 0.1.0
 * @category models
 */
export class Token extends Schema.TaggedClass<Token>("effect-agent-pipeline/Token")("Token", {
  text: Schema.String
}) {}

/**
 * Streaming events: tokens, then exactly one `Completed` (carrying the final,
 * post-hook response) or `Suspended`.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamEvent = Token | Completed | Suspended

/**
 * Schema of {@link StreamEvent} (SSE encoding).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamEvent = Schema.Union(Token, Completed, Suspended)
