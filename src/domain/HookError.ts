/**
 * The errors a hook stops a request with: the required after-planning hook
 * rejecting the plan (C9), a hook breaking the short-circuit contract (C5),
 * a guard denying an operation (seed 003), a fail-closed hook failing (seed
 * 001). The `PipelineError` namespace re-exports everything here.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { id, TypeId } from "./ErrorId.js"

/**
 * The required after-planning hook rejected the phase's plan (C9). The phase
 * stopped before persistence, HITL and any tool call.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequiredAfterPlanningError extends Schema.TaggedError<RequiredAfterPlanningError>(
  id("RequiredAfterPlanningError")
)("RequiredAfterPlanningError", {
  hookName: Schema.String,
  phase: Schema.Int,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `request stopped by required after-planning hook "${this.hookName}" in phase ${this.phase}: ${this.detail}`
  }
}

/**
 * A hook broke the short-circuit contract (unknown kind, missing payload, or
 * both a legacy short-circuit and a decision). Fails the request (C5).
 * `not_durable`: in a durable request, a BeforePlanning hook added tools
 * (`extra_tools`), which no other process resuming the request could call.
 *
 * @since 0.1.0
 * @category errors
 */
export class HookContractError extends Schema.TaggedError<HookContractError>(id("HookContractError"))(
  "HookContractError",
  {
    hookName: Schema.String,
    stage: Schema.String,
    reason: Schema.Literal("unknown_kind", "missing_payload", "ambiguous_result", "not_durable"),
    detail: Schema.String
  }
) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `hook "${this.hookName}" broke the ${this.stage} contract (${this.reason}): ${this.detail}`
  }
}

/**
 * Why a guard denied an operation: it refused (`Hook.deny`), it failed, its
 * deadline passed, — failing closed — it could not run because a hook it
 * depends on did not complete, or it misused `proceed` (called it again
 * after the operation succeeded, while it ran, or after the guard had
 * ended: `proceed` runs the operation at most once, inside the guard).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DenialReason = Schema.Literal("refused", "hook_failed", "timed_out", "dependency_failed", "proceed_misuse")
/**
 * One of the {@link DenialReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type DenialReason = typeof DenialReason.Type

/**
 * A guard denied an operation (seed 003: outcome `denied`). `cause` is the
 * guard's own failure — the value it refused with, its error, or nothing on
 * a timeout.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * const noTrades = Hook.make({
 *   name: "no-trades",
 *   guard: {
 *     toolCall: (call, proceed) =>
 *       call.payload.capability === "execute_trade" ? Hook.deny("trades are not allowed") : proceed
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class HookDenied extends Schema.TaggedError<HookDenied>(id("HookDenied"))("HookDenied", {
  hookName: Schema.String,
  operation: Schema.String,
  reason: DenialReason,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `${this.operation} denied by hook "${this.hookName}" (${this.reason}): ${this.detail}`
  }
}

/**
 * Why a fail-closed hook stopped the request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookFailureReason = Schema.Literal(
  "hook_failed",
  "timed_out",
  "wrong_shape",
  "invalid_result",
  "undeclared_contribution",
  "dependency_failed"
)
/**
 * One of the {@link HookFailureReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type HookFailureReason = typeof HookFailureReason.Type

/**
 * A fail-closed hook failed, overran its deadline, returned the wrong
 * shape, made a contribution it did not declare, or could not run because a
 * hook it depends on did not complete, so the request stopped at that point
 * (seed 001 failure policy). The required after-planning hook
 * has its own error, {@link RequiredAfterPlanningError}. `cause` is the
 * hook's own failure.
 *
 * @since 0.1.0
 * @category errors
 */
export class HookFailed extends Schema.TaggedError<HookFailed>(id("HookFailed"))("HookFailed", {
  hookName: Schema.String,
  point: Schema.String,
  reason: HookFailureReason,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `fail-closed hook "${this.hookName}" stopped the request at ${this.point} (${this.reason}): ${this.detail}`
  }
}
