/**
 * Every typed error the pipeline can return. Each has a fully qualified tag,
 * `reason` literals where one class covers several causes, a `message`, and
 * the library's `TypeId`. The construction errors live in `ConfigError.ts`
 * and are re-exported here, so `PipelineError` names every error.
 *
 * @since 0.1.0
 */
import { Predicate, Schema } from "effect"
import type { AgentConfigError } from "./ConfigError.js"
import { id, TypeId } from "./ErrorId.js"

export * from "./ConfigError.js"
export { TypeId } from "./ErrorId.js"

/**
 * Why a request was refused before anything ran.
 *
 * - `malformed`: not a valid `PipelineRequest` (wrong type, missing field, non-JSON metadata)
 * - `unexpected_field`: a field a request does not have (e.g. `requestID`)
 * - `too_large`: the request text or its metadata is over the configured limit
 * - `too_deep`: the metadata nests deeper than the documented limit
 * - `request_id_in_use`: the `requestId` already names a stored record
 *
 * @since 0.1.0
 */
export const InvalidRequestReason = Schema.Literal(
  "malformed",
  "unexpected_field",
  "too_large",
  "too_deep",
  "request_id_in_use"
)
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
 * Planning failed. Nothing of the failing phase was executed.
 *
 * - `model_failed`: the model call failed (after its retries and the
 *   fallback model, when one is configured);
 * - `timed_out`: the model did not answer within the model timeout;
 * - `invalid_plan`: its output is not a valid plan (after the re-asks),
 *   nested too deeply to decode included;
 * - `output_too_large`: its output is over the model output limit
 *   (`maxModelOutputBytes`, UTF-8 bytes); not retried, not re-asked.
 *
 * `output` is the model's raw output when it answered with something that
 * is not a plan (the record's `modelCalls` keep it too, unless recording
 * of model calls is reduced; an output over the limit is kept there cut at
 * the limit, never here). `cause` is the model's failure as the pipeline
 * keeps it: a provider error with the request's method, URL, status and a
 * body excerpt — never its headers or the API key.
 *
 * @since 0.1.0
 */
export class PlanningError extends Schema.TaggedError<PlanningError>(id("PlanningError"))("PlanningError", {
  reason: Schema.Literal("model_failed", "timed_out", "invalid_plan", "output_too_large"),
  phase: Schema.Int,
  detail: Schema.String,
  output: Schema.optionalWith(Schema.String, { exact: true }),
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `planning failed in phase ${this.phase} (${this.reason}): ${this.detail}`
  }
}

/**
 * The synthesis model call failed (`model_failed`, after its retries and the
 * fallback model), did not answer in time (`timed_out`; for a stream: no
 * next part within the model timeout), or answered more than the model
 * output limit (`output_too_large`, `maxModelOutputBytes` UTF-8 bytes: a
 * buffered answer fails whole; a stream stops at the limit, the tokens
 * already sent staying sent). The record's `modelCalls` keep the output
 * cut at the limit. `cause` is kept as for {@link PlanningError}: no
 * request headers, no API key.
 *
 * @since 0.1.0
 */
export class SynthesisError extends Schema.TaggedError<SynthesisError>(id("SynthesisError"))("SynthesisError", {
  reason: Schema.optionalWith(Schema.Literal("model_failed", "timed_out", "output_too_large"), {
    default: () => "model_failed" as const
  }),
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
 * Why a HITL checkpoint could not be resumed or saved.
 *
 * - `not_found`: no such checkpoint (unknown, or already resumed), or the
 *   checkpoint store could not be read
 * - `already_claimed`: another resume holds it right now (its lease has not
 *   run out); try again once that resume ended
 * - `not_saved`: suspending failed because the checkpoint store failed
 * - `tampered`: the stored checkpoint is not the one this agent signed (its
 *   MAC does not verify, or it does not decode); nothing ran
 * - `plan_mismatch`: the plan digest the approver echoed is not the stored
 *   plan's; nothing ran
 * - `invalid_decision`: the decision is not exactly `"approve"` or `"reject"`
 *
 * A human's rejection is not an error: `resume(id, "reject")` succeeds with
 * `Rejected`.
 *
 * @example
 * ```ts
 * import { PipelineError } from "effect-agent-pipeline"
 *
 * const retryLater = (reason: PipelineError.CheckpointErrorReason) => reason === "already_claimed"
 * ```
 *
 * @since 0.1.0
 */
export const CheckpointErrorReason = Schema.Literal(
  "not_found",
  "already_claimed",
  "not_saved",
  "tampered",
  "plan_mismatch",
  "invalid_decision"
)
/** @since 0.1.0 */
export type CheckpointErrorReason = typeof CheckpointErrorReason.Type

/**
 * A HITL checkpoint cannot be resumed (unknown, already resumed, or being
 * resumed by someone else), or could not be saved.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Pipeline } from "effect-agent-pipeline"
 *
 * const approve = (checkpointId: string) =>
 *   Effect.flatMap(Pipeline.Pipeline, (pipeline) => pipeline.resume(checkpointId, "approve")).pipe(
 *     Effect.catchTag("CheckpointError", (e) =>
 *       Effect.succeed(e.reason === "already_claimed" ? "someone is resuming it right now" : e.message)
 *     )
 *   )
 * ```
 *
 * @since 0.1.0
 */
export class CheckpointError extends Schema.TaggedError<CheckpointError>(id("CheckpointError"))("CheckpointError", {
  reason: CheckpointErrorReason,
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
 * deadline passed, — failing closed — it could not run because a hook it
 * depends on did not complete, or it misused `proceed` (called it again
 * after the operation succeeded, while it ran, or after the guard had
 * ended: `proceed` runs the operation at most once, inside the guard).
 *
 * @since 0.1.0
 */
export const DenialReason = Schema.Literal("refused", "hook_failed", "timed_out", "dependency_failed", "proceed_misuse")
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
  "invalid_result",
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
