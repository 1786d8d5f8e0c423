/**
 * Every typed error the pipeline can return. Each has a fully qualified tag,
 * `reason` literals where one class covers several causes, a `message`, and
 * the library's `TypeId`. The construction errors live in `ConfigError.ts`
 * and the errors a hook stops a request with in `HookError.ts`; both are
 * re-exported here, so `PipelineError` names every error.
 *
 * @since 0.1.0
 */
import { Predicate, Schema } from "effect"
import type { AgentConfigError } from "./ConfigError.js"
import { id, TypeId } from "./ErrorId.js"
import { HookContractError, HookDenied, HookFailed, RequiredAfterPlanningError } from "./HookError.js"

export * from "./ConfigError.js"
export {
  /**
   * Marks every error this library defines (what {@link isPipelineError}
   * and {@link isAgentConfigError} check).
   *
   * @since 0.1.0
   * @category type ids
   */
  TypeId
} from "./ErrorId.js"
export * from "./HookError.js"

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
 * @category schemas
 */
export const InvalidRequestReason = Schema.Literal(
  "malformed",
  "unexpected_field",
  "too_large",
  "too_deep",
  "request_id_in_use"
)
/**
 * One of the {@link InvalidRequestReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
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
 * @category errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>(id("InvalidRequest"))("InvalidRequest", {
  reason: InvalidRequestReason,
  path: Schema.String,
  detail: Schema.String,
  limit: Schema.optionalWith(Schema.Int, { exact: true }),
  issues: Schema.optionalWith(Schema.String, { exact: true })
}) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return this.path === "" ? `invalid request: ${this.detail}` : `invalid request at ${this.path}: ${this.detail}`
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
 * @category errors
 */
export class PlanningError extends Schema.TaggedError<PlanningError>(id("PlanningError"))("PlanningError", {
  reason: Schema.Literal("model_failed", "timed_out", "invalid_plan", "output_too_large"),
  phase: Schema.Int,
  detail: Schema.String,
  output: Schema.optionalWith(Schema.String, { exact: true }),
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
 * @category errors
 */
export class SynthesisError extends Schema.TaggedError<SynthesisError>(id("SynthesisError"))("SynthesisError", {
  reason: Schema.optionalWith(Schema.Literal("model_failed", "timed_out", "output_too_large"), {
    default: () => "model_failed" as const
  }),
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
 * @category schemas
 */
export const CheckpointErrorReason = Schema.Literal(
  "not_found",
  "already_claimed",
  "not_saved",
  "tampered",
  "plan_mismatch",
  "invalid_decision"
)
/**
 * One of the {@link CheckpointErrorReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
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
 * @category errors
 */
export class CheckpointError extends Schema.TaggedError<CheckpointError>(id("CheckpointError"))("CheckpointError", {
  reason: CheckpointErrorReason,
  checkpointId: Schema.String,
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
    return `checkpoint ${this.checkpointId} ${this.reason}: ${this.detail}`
  }
}

/**
 * Every error a request can fail with.
 *
 * @since 0.1.0
 * @category errors
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
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { PipelineError } from "effect-agent-pipeline"
 *
 * const toJson = Schema.encodeSync(PipelineError.PipelineError)
 * const fromJson = Schema.decodeUnknownSync(PipelineError.PipelineError)
 * ```
 *
 * @since 0.1.0
 * @category schemas
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

const requestErrors: ReadonlySet<string> = new Set([
  "InvalidRequest",
  "RequiredAfterPlanningError",
  "HookContractError",
  "HookDenied",
  "HookFailed",
  "PlanningError",
  "SynthesisError",
  "CheckpointError"
])

const configErrors: ReadonlySet<string> = new Set([
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
 * import { PipelineError } from "effect-agent-pipeline"
 *
 * const describe = (u: unknown) => (PipelineError.isPipelineError(u) ? `${u._tag}: ${u.message}` : String(u))
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isPipelineError = (u: unknown): u is PipelineError => tagged(u, requestErrors)

/**
 * Whether a value is one of the errors assembling an agent can fail with.
 *
 * @example
 * ```ts
 * import { PipelineError } from "effect-agent-pipeline"
 *
 * const describe = (u: unknown) =>
 *   PipelineError.isAgentConfigError(u) ? `the agent cannot be built: ${u.message}` : String(u)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isAgentConfigError = (u: unknown): u is AgentConfigError => tagged(u, configErrors)
