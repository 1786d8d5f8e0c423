/**
 * Human-in-the-loop approval (DESIGN §4 step 5). After AfterPlanning accepts
 * a phase's plan, an `ApprovalPolicy` may suspend the request with a
 * checkpoint. `Pipeline.resume(checkpointId, decision)` executes the
 * approved plan *without* running AfterPlanning again (it is approved state,
 * not a newly produced plan), or — rejected — ends `Rejected`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import type { PipelineContext } from "../domain/PipelineContext.js"
import type { RoutingPlan } from "../domain/RoutingPlan.js"

export { Checkpoint } from "../domain/Checkpoint.js"

/**
 * The policy's verdict on a plan.
 *
 * @since 0.1.0
 */
export type ApprovalVerdict =
  | { readonly _tag: "Approve" }
  | { readonly _tag: "Suspend"; readonly reason: string }

/**
 * Approves everything (the default).
 *
 * @since 0.1.0
 */
export const approve: ApprovalVerdict = { _tag: "Approve" }

/**
 * Suspends for a human decision.
 *
 * @since 0.1.0
 */
export const suspend = (reason: string): ApprovalVerdict => ({ _tag: "Suspend", reason })

/**
 * The approval policy service.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Approval } from "effect-agent-pipeline"
 *
 * // Ask a human before any trade executes.
 * const TradesNeedApproval = Layer.succeed(Approval.ApprovalPolicy, {
 *   evaluate: (_ctx, plan) =>
 *     Effect.succeed(
 *       plan.steps.some((s) => s.capability === "execute_trade")
 *         ? Approval.suspend("trades need a human")
 *         : Approval.approve
 *     )
 * })
 * ```
 *
 * @since 0.1.0
 */
export class ApprovalPolicy extends Context.Tag("effect-agent-pipeline/ApprovalPolicy")<
  ApprovalPolicy,
  {
    readonly evaluate: (context: PipelineContext, plan: RoutingPlan, phase: number) => Effect.Effect<ApprovalVerdict>
  }
>() {}

/**
 * The approve-everything policy as a Layer.
 *
 * @since 0.1.0
 */
export const layerApproveAll: Layer.Layer<ApprovalPolicy> = Layer.succeed(ApprovalPolicy, {
  evaluate: () => Effect.succeed(approve)
})

/**
 * A human's decision on a checkpoint: `approve` runs the saved plan;
 * `reject` ends the resume `Rejected` (a decided outcome, not an error).
 *
 * @since 0.1.0
 */
export type ApprovalDecision = "approve" | "reject"
