/**
 * The evidence of one hook run (C14, C15, seed 001): which hook ran at
 * which point, how it ended (`status`, `outcome`), what the boundary decided
 * (`decision`: policy, action, reason) and what work the hook started
 * (`effects`). Records carry these in `hookInvocations`; the
 * `ExecutionRecord` namespace re-exports everything here.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HookPoint } from "./HookPoint.js"
import { Json } from "./Json.js"
import { Operation } from "./Operation.js"

/**
 * The boundary's failure policy.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DecisionPolicy = Schema.Literal("fail_open", "fail_closed")
/**
 * One of the {@link DecisionPolicy} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type DecisionPolicy = typeof DecisionPolicy.Type

/**
 * What the pipeline actually did after the boundary.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DecisionAction = Schema.Literal("continue", "short_circuit", "terminate", "deny", "propagate_panic")
/**
 * One of the {@link DecisionAction} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type DecisionAction = typeof DecisionAction.Type

/**
 * Why it did it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DecisionReason = Schema.Literal(
  "hook_error",
  "accepted",
  "authoritative",
  "cache_match",
  "cache_dimension_mismatch",
  "cache_read_disabled",
  "contract_error",
  "timed_out",
  "refused",
  "undeclared_contribution",
  "invalid_result",
  "proceed_misuse",
  "panic"
)
/**
 * One of the {@link DecisionReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type DecisionReason = typeof DecisionReason.Type

/**
 * A boundary's decision, separate from the invocation outcome. A missing
 * decision means "not recorded", never "succeeded" (C14).
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookDecision = Schema.Struct({
  policy: DecisionPolicy,
  action: DecisionAction,
  reason: DecisionReason
}).annotations({ identifier: "HookDecision" })
/**
 * A decoded {@link HookDecision}.
 *
 * @since 0.1.0
 * @category models
 */
export type HookDecision = typeof HookDecision.Type

/**
 * Effect status: the producer's observation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookEffectStatus = Schema.Literal("pending", "succeeded", "failed")
/**
 * One of the {@link HookEffectStatus} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type HookEffectStatus = typeof HookEffectStatus.Type

/**
 * Work a hook attempted and what it observed (C15). Times are epoch
 * milliseconds; `duration` is milliseconds.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookEffect = Schema.Struct({
  effectId: Schema.String.pipe(Schema.minLength(1)),
  schemaVersion: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  name: Schema.String,
  status: HookEffectStatus,
  data: Schema.optional(Json),
  startedAt: Schema.Finite,
  duration: Schema.optional(Schema.Finite),
  summary: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String)
}).annotations({ identifier: "HookEffect" })
/**
 * A decoded {@link HookEffect}.
 *
 * @since 0.1.0
 * @category models
 */
export type HookEffect = typeof HookEffect.Type

/**
 * A hook run's lifecycle (seed 001 persistence): `started` while it runs,
 * `backgrounded` while it runs detached from the request, then one of
 * `completed`, `failed`, `timed_out` (its deadline passed), `denied` (a
 * guard refused the operation) or `skipped` (disabled, or a dependency did
 * not complete).
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookRunStatus = Schema.Literal(
  "started",
  "backgrounded",
  "completed",
  "failed",
  "timed_out",
  "denied",
  "skipped"
)
/**
 * One of the {@link HookRunStatus} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type HookRunStatus = typeof HookRunStatus.Type

/**
 * A subscription's execution policy, as recorded.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecutionPolicyName = Schema.Literal("blocking", "deadline", "fire_and_record", "background")
/**
 * One of the {@link ExecutionPolicyName} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecutionPolicyName = typeof ExecutionPolicyName.Type

/**
 * One recorded hook run (C14, seed 001): which hook, at which point, how it
 * ended and what it decided. `outcome` is the short form of `status`
 * (`succeeded` for completed, `failed` for failed / timed out / denied,
 * `pending` while started or backgrounded, `skipped`); records written
 * before hook-run lifecycles existed have `outcome` only.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookInvocation = Schema.Struct({
  name: Schema.String,
  /** The point: a stage, `around_<operation>`, `guard_<operation>` or a transform. */
  stage: HookPoint,
  outcome: Schema.Literal("succeeded", "failed", "pending", "skipped"),
  status: Schema.optional(HookRunStatus),
  sequence: Schema.Int,
  phase: Schema.optional(Schema.Int),
  /** The operation run the hook ran for (operation points). */
  operation: Schema.optional(Operation),
  callId: Schema.optional(Schema.String),
  stepId: Schema.optional(Schema.String),
  execution: Schema.optional(ExecutionPolicyName),
  /** How many times a guard ran its operation (retries included). */
  attempts: Schema.optional(Schema.Int),
  /** A hash of what the hook contributed (a changed plan, response, prompt, arguments…). */
  contributionHash: Schema.optional(Schema.String),
  skipReason: Schema.optional(Schema.Literal("disabled", "dependency_failed")),
  startedAt: Schema.Finite,
  duration: Schema.Finite,
  error: Schema.optional(Schema.String),
  /**
   * The run ignored its interruption (after its deadline, or when its
   * request ended) for the grace period and was left behind: nothing waited
   * for it any longer.
   */
  abandoned: Schema.optional(Schema.Boolean),
  /**
   * The run's identity across updates, for runs recorded before they end (a
   * detached run is recorded `backgrounded`, then completed by a late update
   * that replaces exactly this entry).
   */
  runId: Schema.optional(Schema.String),
  decision: Schema.optional(HookDecision),
  effects: Schema.optionalWith(Schema.Array(HookEffect), { default: () => [] })
}).annotations({ identifier: "HookInvocation" })
/**
 * A decoded {@link HookInvocation}.
 *
 * @since 0.1.0
 * @category models
 */
export type HookInvocation = typeof HookInvocation.Type
