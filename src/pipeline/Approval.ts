/**
 * Human-in-the-loop approval (DESIGN §4 step 5, §7 "an approval binds to
 * what was approved"). After AfterPlanning accepts a phase's plan, an
 * `ApprovalPolicy` may suspend the request with a checkpoint, sealed with
 * the agent's `CheckpointKey` (its plan's `planDigest` and a `mac` over
 * everything it holds). `Pipeline.resume(checkpointId, decision, options)`
 * verifies the seal — and the `planDigest` the approver echoes — before
 * anything is claimed or runs; approved, it runs the required after-planning
 * hook again on the stored plan (ordinary AfterPlanning hooks do not run
 * again: C8) and then executes that plan, or — rejected — ends `Rejected`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import type { PipelineContext } from "../domain/PipelineContext.js"
import type { RoutingPlan } from "../domain/RoutingPlan.js"

/**
 * The sealed checkpoint of a suspended request and its encodings (`domain/Checkpoint.ts`).
 *
 * @since 0.1.0
 * @category schemas
 */
export { Checkpoint, HexDigest, planText, Sealed, sealedText, type Unsealed } from "../domain/Checkpoint.js"

/**
 * The policy's verdict on a plan.
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalVerdict =
  | { readonly _tag: "Approve" }
  | { readonly _tag: "Suspend"; readonly reason: string }

/**
 * Approves everything (the default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const approve: ApprovalVerdict = { _tag: "Approve" }

/**
 * Suspends for a human decision.
 *
 * @since 0.1.0
 * @category constructors
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
 * @category services
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
 * @category layers
 */
export const layerApproveAll: Layer.Layer<ApprovalPolicy> = Layer.succeed(ApprovalPolicy, {
  evaluate: () => Effect.succeed(approve)
})

/**
 * A human's decision on a checkpoint: `approve` runs the saved plan;
 * `reject` ends the resume `Rejected` (a decided outcome, not an error).
 * Exactly these two strings: anything else given to `resume` at run time
 * (`"APPROVE"`, `true`) is `CheckpointError` `invalid_decision`.
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalDecision = "approve" | "reject"

/**
 * Whether a value is exactly an {@link ApprovalDecision} (what `resume`
 * checks untyped input with: case matters, nothing is coerced).
 *
 * @example
 * ```ts
 * import { Approval } from "effect-agent-pipeline"
 *
 * Approval.isApprovalDecision("approve") // true
 * Approval.isApprovalDecision("APPROVE") // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isApprovalDecision = (u: unknown): u is ApprovalDecision => u === "approve" || u === "reject"

/**
 * Options of `resume`: `planDigest` is the digest of the plan the approver
 * was shown (`checkpoint.planDigest`, echoed back by a UI or a server). When
 * given, it must be the stored checkpoint's, or the resume fails with
 * `CheckpointError` `plan_mismatch` and nothing runs.
 *
 * @example
 * ```ts
 * import type { Approval } from "effect-agent-pipeline"
 *
 * const options = (checkpoint: Approval.Checkpoint): Approval.ResumeOptions => ({ planDigest: checkpoint.planDigest })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ResumeOptions {
  readonly planDigest?: string | undefined
}
