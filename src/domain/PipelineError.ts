/**
 * Every typed error the pipeline can return. Each has a fully qualified tag,
 * `reason` literals where one class covers several causes, and a `message`.
 *
 * @since 0.1.0
 */
import { Predicate, Schema } from "effect"

const id = (name: string) => `effect-agent-pipeline/${name}`

/**
 * Marks every error this module defines.
 *
 * @since 0.1.0
 */
export const TypeId = "~effect-agent-pipeline/PipelineError"

/**
 * @since 0.1.0
 */
export type TypeId = typeof TypeId

/**
 * A hook list entry is not a hook (null, undefined, no name, a handler that is
 * not a function). Names the zero-based index of the entry (C2).
 *
 * @since 0.1.0
 */
export class InvalidOrchestratorConfig extends Schema.TaggedError<InvalidOrchestratorConfig>(
  id("InvalidOrchestratorConfig")
)("InvalidOrchestratorConfig", {
  index: Schema.Int,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `invalid orchestrator config: hook entry ${this.index}: ${this.detail}`
  }
}

/**
 * Reasons a required after-planning marker is rejected at construction (C3).
 *
 * @since 0.1.0
 */
export const RequiredHookReason = Schema.Literal("stage_drift", "multiple_required", "required_not_terminal")
/** @since 0.1.0 */
export type RequiredHookReason = typeof RequiredHookReason.Type

/**
 * The required after-planning marker is misused (C3).
 *
 * @since 0.1.0
 */
export class InvalidRequiredAfterPlanningHook extends Schema.TaggedError<InvalidRequiredAfterPlanningHook>(
  id("InvalidRequiredAfterPlanningHook")
)("InvalidRequiredAfterPlanningHook", {
  reason: RequiredHookReason,
  hookName: Schema.String,
  index: Schema.Int
}) {
  /** @since 0.1.0 */
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
/** @since 0.1.0 */
export type SubscriptionReason = typeof SubscriptionReason.Type

/**
 * A hook's subscription cannot be honoured; the hooks Layer fails with it.
 *
 * @since 0.1.0
 */
export class InvalidHookSubscription extends Schema.TaggedError<InvalidHookSubscription>(
  id("InvalidHookSubscription")
)("InvalidHookSubscription", {
  reason: SubscriptionReason,
  hookName: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `hook "${this.hookName}" cannot be subscribed (${this.reason}): ${this.detail}`
  }
}

/**
 * Construction failures of the hook registration Layer.
 *
 * @since 0.1.0
 */
export type HookConfigError = InvalidOrchestratorConfig | InvalidRequiredAfterPlanningHook | InvalidHookSubscription

/**
 * A pipeline option has a value the pipeline cannot run with (a zero
 * concurrency, a fractional phase count) or is not an option at all. The
 * pipeline Layer fails with it at construction.
 *
 * @since 0.1.0
 */
export class InvalidPipelineOptions extends Schema.TaggedError<InvalidPipelineOptions>(
  id("InvalidPipelineOptions")
)("InvalidPipelineOptions", {
  option: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
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
 */
export type AgentConfigError = HookConfigError | InvalidPipelineOptions

/**
 * Why a request was refused before anything ran.
 *
 * - `malformed`: not a valid `PipelineRequest` (wrong type, missing field, non-JSON metadata)
 * - `unexpected_field`: a field a request does not have (e.g. `requestID`)
 * - `too_large`: the request text or its metadata is over the configured limit
 * - `request_id_in_use`: the `requestId` already names a stored record
 *
 * @since 0.1.0
 */
export const InvalidRequestReason = Schema.Literal("malformed", "unexpected_field", "too_large", "request_id_in_use")
/** @since 0.1.0 */
export type InvalidRequestReason = typeof InvalidRequestReason.Type

/**
 * The request was refused before anything ran: nothing was planned,
 * executed or recorded. `path` is the first failing field (`""` for the
 * request as a whole, `metadata.user.tags[2]` for a nested value), `detail`
 * one line about it; `issues` keeps the full schema error when a schema
 * rejected the input, `limit` the byte limit a `too_large` request exceeded.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PipelineRequest } from "effect-agent-pipeline"
 *
 * const refused = PipelineRequest.decode({ request: "hi", requestID: "r-1" }).pipe(Effect.flip)
 * // InvalidRequest { reason: "unexpected_field", path: "requestID",
 * //   message: 'invalid request at requestID: unknown field "requestID" (a request has "request", "metadata", "requestId")' }
 * ```
 *
 * @since 0.1.0
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>(id("InvalidRequest"))("InvalidRequest", {
  reason: InvalidRequestReason,
  path: Schema.String,
  detail: Schema.String,
  limit: Schema.optionalWith(Schema.Int, { exact: true }),
  issues: Schema.optionalWith(Schema.String, { exact: true })
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return this.path === "" ? `invalid request: ${this.detail}` : `invalid request at ${this.path}: ${this.detail}`
  }
}

/**
 * The required after-planning hook rejected the phase's plan (C9). The phase
 * stopped before persistence, HITL and any tool call.
 *
 * @since 0.1.0
 */
export class RequiredAfterPlanningError extends Schema.TaggedError<RequiredAfterPlanningError>(
  id("RequiredAfterPlanningError")
)("RequiredAfterPlanningError", {
  hookName: Schema.String,
  phase: Schema.Int,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `request stopped by required after-planning hook "${this.hookName}" in phase ${this.phase}: ${this.detail}`
  }
}

/**
 * A hook broke the short-circuit contract (unknown kind, missing payload, or
 * both a legacy short-circuit and a decision). Fails the request (C5).
 *
 * @since 0.1.0
 */
export class HookContractError extends Schema.TaggedError<HookContractError>(id("HookContractError"))(
  "HookContractError",
  {
    hookName: Schema.String,
    stage: Schema.String,
    reason: Schema.Literal("unknown_kind", "missing_payload", "ambiguous_result"),
    detail: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `hook "${this.hookName}" broke the ${this.stage} contract (${this.reason}): ${this.detail}`
  }
}

/**
 * Planning failed: the model call failed or its output is not a valid plan.
 * Nothing of the failing phase was executed.
 *
 * @since 0.1.0
 */
export class PlanningError extends Schema.TaggedError<PlanningError>(id("PlanningError"))("PlanningError", {
  reason: Schema.Literal("model_failed", "invalid_plan"),
  phase: Schema.Int,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `planning failed in phase ${this.phase} (${this.reason}): ${this.detail}`
  }
}

/**
 * The synthesis model call failed.
 *
 * @since 0.1.0
 */
export class SynthesisError extends Schema.TaggedError<SynthesisError>(id("SynthesisError"))("SynthesisError", {
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `synthesis failed: ${this.detail}`
  }
}

/**
 * A HITL checkpoint was rejected, cannot be resumed, or could not be saved.
 *
 * @since 0.1.0
 */
export class CheckpointError extends Schema.TaggedError<CheckpointError>(id("CheckpointError"))("CheckpointError", {
  reason: Schema.Literal("rejected", "not_found", "not_saved"),
  checkpointId: Schema.String,
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `checkpoint ${this.checkpointId} ${this.reason}: ${this.detail}`
  }
}

/**
 * Why a guard denied an operation: it refused (`Hook.deny`), it failed, its
 * deadline passed, or — failing closed — it could not run because a hook it
 * depends on did not complete.
 *
 * @since 0.1.0
 */
export const DenialReason = Schema.Literal("refused", "hook_failed", "timed_out", "dependency_failed")
/** @since 0.1.0 */
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
 */
export class HookDenied extends Schema.TaggedError<HookDenied>(id("HookDenied"))("HookDenied", {
  hookName: Schema.String,
  operation: Schema.String,
  reason: DenialReason,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `${this.operation} denied by hook "${this.hookName}" (${this.reason}): ${this.detail}`
  }
}

/**
 * Why a fail-closed hook stopped the request.
 *
 * @since 0.1.0
 */
export const HookFailureReason = Schema.Literal(
  "hook_failed",
  "timed_out",
  "wrong_shape",
  "undeclared_contribution",
  "dependency_failed"
)
/** @since 0.1.0 */
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
 */
export class HookFailed extends Schema.TaggedError<HookFailed>(id("HookFailed"))("HookFailed", {
  hookName: Schema.String,
  point: Schema.String,
  reason: HookFailureReason,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `fail-closed hook "${this.hookName}" stopped the request at ${this.point} (${this.reason}): ${this.detail}`
  }
}

/**
 * Every error a request can fail with.
 *
 * @since 0.1.0
 */
export type PipelineError =
  | InvalidRequest
  | RequiredAfterPlanningError
  | HookContractError
  | HookDenied
  | HookFailed
  | PlanningError
  | SynthesisError
  | CheckpointError

/**
 * Schema of {@link PipelineError} (for records and HTTP).
 *
 * @since 0.1.0
 */
export const PipelineError = Schema.Union(
  InvalidRequest,
  RequiredAfterPlanningError,
  HookContractError,
  HookDenied,
  HookFailed,
  PlanningError,
  SynthesisError,
  CheckpointError
)

const REQUEST_ERRORS: ReadonlySet<string> = new Set([
  "InvalidRequest",
  "RequiredAfterPlanningError",
  "HookContractError",
  "HookDenied",
  "HookFailed",
  "PlanningError",
  "SynthesisError",
  "CheckpointError"
])

const CONFIG_ERRORS: ReadonlySet<string> = new Set([
  "InvalidOrchestratorConfig",
  "InvalidRequiredAfterPlanningHook",
  "InvalidHookSubscription",
  "InvalidPipelineOptions"
])

const tagged = (u: unknown, tags: ReadonlySet<string>): boolean =>
  Predicate.hasProperty(u, TypeId) && Predicate.hasProperty(u, "_tag") && typeof u._tag === "string" && tags.has(u._tag)

/**
 * Whether a value is one of the errors a request can fail with.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PipelineError } from "effect-agent-pipeline"
 *
 * const describe = (u: unknown) => (PipelineError.isPipelineError(u) ? `${u._tag}: ${u.message}` : String(u))
 * ```
 *
 * @since 0.1.0
 */
export const isPipelineError = (u: unknown): u is PipelineError => tagged(u, REQUEST_ERRORS)

/**
 * Whether a value is one of the errors assembling an agent can fail with.
 *
 * @since 0.1.0
 */
export const isAgentConfigError = (u: unknown): u is AgentConfigError => tagged(u, CONFIG_ERRORS)
