/**
 * What a durable request's workflow and its activities store: the payload,
 * each activity's result and the approval a human sends. Everything here is
 * written to the engine's storage as JSON and decoded again on a replay — in
 * another process, possibly another version — so each is a Schema, checked
 * on the way back in (fail closed).
 */
import { Schema } from "effect"
import { AgentResponse, Completed, Rejected } from "../../domain/AgentResponse.js"
import { PhaseRecord } from "../../domain/ExecutionRecord.js"
import { Json, JsonObject } from "../../domain/Json.js"
import { RoutingPlan } from "../../domain/RoutingPlan.js"

/** The workflow's payload: the decoded request (its id is the execution's idempotency key). */
export const RequestPayload = {
  requestId: Schema.String,
  request: Schema.String,
  metadata: JsonObject
}

/** How a durable request ends: answered, or rejected by a human at an approval. */
export const DurableResult = Schema.Union(Completed, Rejected)
export type DurableResult = typeof DurableResult.Type

/** The `before_planning` region: a short-circuit answer, or the snapshot phases plan from. */
export const BeforePlanningResult = Schema.Union(
  Schema.TaggedStruct("ShortCircuit", { response: AgentResponse }),
  Schema.TaggedStruct("Plan", {
    enrichments: JsonObject,
    /** The prepared enrichments prompts use; absent with the identity preparer. */
    promptEnrichments: Schema.optional(JsonObject)
  })
)

/** The `phase/<n>/plan` region: the plan AfterPlanning settled on, and the HITL policy's reason to suspend. */
export const PlannedPhase = Schema.Struct({
  plan: RoutingPlan,
  suspend: Schema.optional(Schema.String)
})

/** The `phase/<n>` region: the executed phase, or the plan a human must approve first. */
export const PhaseResult = Schema.Union(
  Schema.TaggedStruct("Executed", { record: PhaseRecord, terminal: Schema.Boolean }),
  Schema.TaggedStruct("AwaitingApproval", {
    checkpointId: Schema.String,
    plan: RoutingPlan,
    planDigest: Schema.String
  })
)

/** A `phase/<n>/step/<id>` region: the tool call's result. */
export const ToolCallResult = Schema.Union(
  Schema.Struct({ status: Schema.Literal("succeeded"), output: Json }),
  Schema.Struct({ status: Schema.Literal("failed", "denied"), error: Schema.String })
)

/** What a human's decision at an approval carries: the decision and the digest of the plan they saw. */
export const ApprovalSignal = Schema.Struct({
  decision: Schema.Literal("approve", "reject"),
  planDigest: Schema.String
})
export type ApprovalSignal = typeof ApprovalSignal.Type
