/**
 * A HITL checkpoint: a request suspended before a phase's plan executes,
 * with everything needed to resume it (DESIGN §4 step 5).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PhaseRecord } from "./ExecutionRecord.js"
import { JsonObject } from "./Json.js"
import { RoutingPlan } from "./RoutingPlan.js"

/**
 * A suspended request: everything needed to resume it.
 *
 * @since 0.1.0
 */
export class Checkpoint extends Schema.Class<Checkpoint>("effect-agent-pipeline/Checkpoint")({
  checkpointId: Schema.String,
  requestId: Schema.String,
  request: Schema.String,
  metadata: JsonObject,
  /** The request-start enrichment snapshot. */
  enrichments: JsonObject,
  phase: Schema.Int,
  /** The approved-pending plan (already through AfterPlanning). */
  plan: RoutingPlan,
  /** Phases completed before the suspension. */
  priorPhases: Schema.Array(PhaseRecord),
  reason: Schema.String,
  createdAt: Schema.Finite
}) {}
