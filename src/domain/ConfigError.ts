/**
 * The errors assembling an agent can fail with: a hook list entry that is
 * not a hook (C2), a misused required marker (C3), a subscription that
 * cannot be honoured (seed 001), pipeline options out of range. The agent's
 * Layer fails with them at construction; no request runs.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { id, TypeId } from "./ErrorId.js"

/**
 * A hook list entry is not a hook (null, undefined, no name, a handler that is
 * not a function). Names the zero-based index of the entry (C2).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidOrchestratorConfig extends Schema.TaggedError<InvalidOrchestratorConfig>(
  id("InvalidOrchestratorConfig")
)("InvalidOrchestratorConfig", {
  index: Schema.Int,
  detail: Schema.String
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `invalid orchestrator config: hook entry ${this.index}: ${this.detail}`
  }
}

/**
 * Reasons a required after-planning marker is rejected at construction (C3).
 *
 * @since 0.1.0
 * @category schemas
 */
export const RequiredHookReason = Schema.Literal("stage_drift", "multiple_required", "required_not_terminal")
/**
 * One of the {@link RequiredHookReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type RequiredHookReason = typeof RequiredHookReason.Type

/**
 * The required after-planning marker is misused (C3).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequiredAfterPlanningHook extends Schema.TaggedError<InvalidRequiredAfterPlanningHook>(
  id("InvalidRequiredAfterPlanningHook")
)("InvalidRequiredAfterPlanningHook", {
  reason: RequiredHookReason,
  hookName: Schema.String,
  index: Schema.Int
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    switch (this.reason) {
      case "stage_drift":
        return `required hook "${this.hookName}" (entry ${this.index}) has no afterPlanning handler`
      case "multiple_required":
        return `hook "${this.hookName}" (entry ${this.index}) is a second required after-planning hook`
      case "required_not_terminal":
        return `hook "${this.hookName}" (entry ${this.index}) handles afterPlanning after the required hook`
    }
  }
}

/**
 * Why a hook's subscription is refused at construction (seed 001, seed 003):
 *
 * - `duplicate_id`: two hooks share a name (a name is the subscription's id)
 * - `missing_dependency`: `dependsOn` names no hook, or one that shares no point with it
 * - `disabled_dependency`: `dependsOn` names a disabled hook
 * - `cyclic_dependency`: dependencies form a cycle at some point
 * - `not_guardable`: a guard on an operation guards cannot target
 * - `policy_not_applicable`: an execution or failure policy the hook's points cannot honour
 *   (a detached AfterPlanning hook, a fail-closed observer)
 * - `unknown_capability`: a declared capability that does not exist
 *
 * @since 0.1.0
 * @category schemas
 */
export const SubscriptionReason = Schema.Literal(
  "duplicate_id",
  "missing_dependency",
  "disabled_dependency",
  "cyclic_dependency",
  "not_guardable",
  "policy_not_applicable",
  "unknown_capability"
)
/**
 * One of the {@link SubscriptionReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type SubscriptionReason = typeof SubscriptionReason.Type

/**
 * A hook's subscription cannot be honoured; the hooks Layer fails with it.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidHookSubscription extends Schema.TaggedError<InvalidHookSubscription>(
  id("InvalidHookSubscription")
)("InvalidHookSubscription", {
  reason: SubscriptionReason,
  hookName: Schema.String,
  detail: Schema.String
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `hook "${this.hookName}" cannot be subscribed (${this.reason}): ${this.detail}`
  }
}

/**
 * Construction failures of the hook registration Layer.
 *
 * @since 0.1.0
 * @category errors
 */
export type HookConfigError = InvalidOrchestratorConfig | InvalidRequiredAfterPlanningHook | InvalidHookSubscription

/**
 * A pipeline option has a value the pipeline cannot run with (a zero
 * concurrency, a fractional phase count) or is not an option at all. The
 * pipeline Layer fails with it at construction.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidPipelineOptions extends Schema.TaggedError<InvalidPipelineOptions>(
  id("InvalidPipelineOptions")
)("InvalidPipelineOptions", {
  option: Schema.String,
  detail: Schema.String
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `invalid pipeline options: ${this.option === "" ? "" : `${this.option}: `}${this.detail}`
  }
}

/**
 * Everything that can fail when an agent is assembled: the hook list or the
 * pipeline options.
 *
 * @since 0.1.0
 * @category errors
 */
export type AgentConfigError = HookConfigError | InvalidPipelineOptions
