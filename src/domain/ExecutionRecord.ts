/**
 * The execution record: the evidence of one request — which hook ran, what
 * it decided, what work it started (effects), the accepted plan and step
 * results of every phase, and the final response beside the model's raw
 * draft (seed 000 §9, C14–C16).
 *
 * Records are versioned (`schemaVersion`) and carry a monotonic
 * `record_revision`: a store never lets a stale snapshot overwrite a newer
 * one. `lifecycle` is optional so that legacy records still decode; their
 * request completion is `unknown`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HookPoint, Stage } from "./HookPoint.js"
import { Json, JsonObject } from "./Json.js"
import { ModelCall } from "./ModelCall.js"
import { Operation } from "./Operation.js"
import { RoutingPlan } from "./RoutingPlan.js"

/**
 * The current record schema version.
 *
 * @since 0.1.0
 */
export const CURRENT_SCHEMA_VERSION = 1

/**
 * The four hook stages (seed 000).
 *
 * @since 0.1.0
 */
export const HookStage = Stage
/** @since 0.1.0 */
export type HookStage = Stage

/**
 * The boundary's failure policy.
 *
 * @since 0.1.0
 */
export const DecisionPolicy = Schema.Literal("fail_open", "fail_closed")
/** @since 0.1.0 */
export type DecisionPolicy = typeof DecisionPolicy.Type

/**
 * What the pipeline actually did after the boundary.
 *
 * @since 0.1.0
 */
export const DecisionAction = Schema.Literal("continue", "short_circuit", "terminate", "deny", "propagate_panic")
/** @since 0.1.0 */
export type DecisionAction = typeof DecisionAction.Type

/**
 * Why it did it.
 *
 * @since 0.1.0
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
/** @since 0.1.0 */
export type DecisionReason = typeof DecisionReason.Type

/**
 * A boundary's decision, separate from the invocation outcome. A missing
 * decision means "not recorded", never "succeeded" (C14).
 *
 * @since 0.1.0
 */
export const HookDecision = Schema.Struct({
  policy: DecisionPolicy,
  action: DecisionAction,
  reason: DecisionReason
}).annotations({ identifier: "HookDecision" })
/** @since 0.1.0 */
export type HookDecision = typeof HookDecision.Type

/**
 * Effect status: the producer's observation.
 *
 * @since 0.1.0
 */
export const HookEffectStatus = Schema.Literal("pending", "succeeded", "failed")
/** @since 0.1.0 */
export type HookEffectStatus = typeof HookEffectStatus.Type

/**
 * Work a hook attempted and what it observed (C15). Times are epoch
 * milliseconds; `duration` is milliseconds.
 *
 * @since 0.1.0
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
/** @since 0.1.0 */
export type HookEffect = typeof HookEffect.Type

/**
 * A hook run's lifecycle (seed 001 persistence): `started` while it runs,
 * `backgrounded` while it runs detached from the request, then one of
 * `completed`, `failed`, `timed_out` (its deadline passed), `denied` (a
 * guard refused the operation) or `skipped` (disabled, or a dependency did
 * not complete).
 *
 * @since 0.1.0
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
/** @since 0.1.0 */
export type HookRunStatus = typeof HookRunStatus.Type

/**
 * A subscription's execution policy, as recorded.
 *
 * @since 0.1.0
 */
export const ExecutionPolicyName = Schema.Literal("blocking", "deadline", "fire_and_record", "background")
/** @since 0.1.0 */
export type ExecutionPolicyName = typeof ExecutionPolicyName.Type

/**
 * One recorded hook run (C14, seed 001): which hook, at which point, how it
 * ended and what it decided. `outcome` is the short form of `status`
 * (`succeeded` for completed, `failed` for failed / timed out / denied,
 * `pending` while started or backgrounded, `skipped`); records written
 * before hook-run lifecycles existed have `outcome` only.
 *
 * @since 0.1.0
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
/** @since 0.1.0 */
export type HookInvocation = typeof HookInvocation.Type

/**
 * One executed plan step.
 *
 * @since 0.1.0
 */
export const StepResult = Schema.Struct({
  step_id: Schema.String,
  namespace: Schema.String,
  agent: Schema.String,
  capability: Schema.String,
  /** `denied`: a guard refused the tool call. */
  status: Schema.Literal("succeeded", "failed", "skipped", "denied"),
  output: Schema.optional(Json),
  error: Schema.optional(Schema.String),
  startedAt: Schema.Finite,
  duration: Schema.Finite
}).annotations({ identifier: "StepResult" })
/** @since 0.1.0 */
export type StepResult = typeof StepResult.Type

/**
 * An accepted phase: the plan that passed AfterPlanning and its results.
 *
 * @since 0.1.0
 */
export const PhaseRecord = Schema.Struct({
  phase: Schema.Int,
  plan: RoutingPlan,
  /** The step results, in plan order once the phase has executed (in completion order before). */
  steps: Schema.Array(StepResult),
  /**
   * While the phase executes: the ids of the steps in flight. A record
   * written mid-phase (or left by a request that was interrupted or whose
   * process died) shows which step was running; absent once executed.
   */
  running: Schema.optional(Schema.Array(Schema.String))
}).annotations({ identifier: "PhaseRecord" })
/** @since 0.1.0 */
export type PhaseRecord = typeof PhaseRecord.Type

/**
 * How the request ended.
 *
 * @since 0.1.0
 */
export const LifecycleStatus = Schema.Literal(
  "running",
  "succeeded",
  "failed",
  "interrupted",
  "suspended",
  "abandoned",
  "rejected"
)
/** @since 0.1.0 */
export type LifecycleStatus = typeof LifecycleStatus.Type

/**
 * Request lifecycle evidence. Absent on legacy records.
 *
 * @since 0.1.0
 */
export const Lifecycle = Schema.Struct({
  status: LifecycleStatus,
  startedAt: Schema.Finite,
  endedAt: Schema.optional(Schema.Finite),
  errorTag: Schema.optional(Schema.String),
  errorMessage: Schema.optional(Schema.String),
  /** The process that runs the request (while `running`). */
  owner: Schema.optional(Schema.String),
  /**
   * Until when the owner's lease holds (epoch ms). The owner renews it while
   * the request runs; a `running` record whose lease ran out belongs to a
   * process that died, and a sweep marks it `abandoned`.
   */
  leaseExpiresAt: Schema.optional(Schema.Finite)
}).annotations({ identifier: "Lifecycle" })
/** @since 0.1.0 */
export type Lifecycle = typeof Lifecycle.Type

/**
 * The request mode that produced a record.
 *
 * @since 0.1.0
 */
export const RecordMode = Schema.Literal("pipeline", "stream", "resume", "workflow")
/** @since 0.1.0 */
export type RecordMode = typeof RecordMode.Type

/**
 * The accepted short-circuit, when one ended the request.
 *
 * @since 0.1.0
 */
export const ShortCircuitRecord = Schema.Struct({
  hookName: Schema.String,
  kind: Schema.Literal("authoritative", "cache"),
  reason: DecisionReason,
  source: Schema.optional(Schema.String)
}).annotations({ identifier: "ShortCircuitRecord" })
/** @since 0.1.0 */
export type ShortCircuitRecord = typeof ShortCircuitRecord.Type

/**
 * The execution record.
 *
 * @since 0.1.0
 */
export const ExecutionRecord = Schema.Struct({
  // A record written before versioning decodes as version 0 (legacy).
  schemaVersion: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  requestId: Schema.String,
  recordRevision: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 0 }).pipe(
    Schema.fromKey("record_revision")
  ),
  mode: Schema.optionalWith(RecordMode, { default: () => "pipeline" as const }),
  request: Schema.String,
  metadata: Schema.optionalWith(JsonObject, { default: () => ({}) }),
  lifecycle: Schema.optional(Lifecycle),
  phases: Schema.optionalWith(Schema.Array(PhaseRecord), { default: () => [] }),
  hookInvocations: Schema.optionalWith(Schema.Array(HookInvocation), { default: () => [] }),
  shortCircuit: Schema.optional(ShortCircuitRecord),
  checkpointId: Schema.optional(Schema.String),
  rawDraft: Schema.optional(Schema.String),
  /**
   * The model calls the request made (each attempt, retries, re-asks and
   * fallbacks included), apart from the final response; absent when there
   * were none or they are not recorded (the `modelCalls` option).
   */
  modelCalls: Schema.optional(Schema.Array(ModelCall)),
  /**
   * Streaming: the text of the tokens delivered so far. A streamed request
   * that was interrupted (or whose process died) keeps what its consumer
   * already received.
   */
  deliveredText: Schema.optional(Schema.String),
  finalResponse: Schema.optional(Schema.String),
  diagnostics: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /**
   * Which recorder wrote this snapshot, and its write number: a request
   * resumed in another process has a recorder of its own, and a writer
   * never replaces its own newer snapshot with an older one.
   */
  writer: Schema.optional(Schema.Struct({ id: Schema.String, seq: Schema.Int }))
}).annotations({ identifier: "ExecutionRecord" })
/** @since 0.1.0 */
export type ExecutionRecord = typeof ExecutionRecord.Type
/** @since 0.1.0 */
export type ExecutionRecordEncoded = typeof ExecutionRecord.Encoded

/**
 * What the record says about the request's completion. A record without
 * lifecycle evidence (legacy) is `unknown`, whatever its steps say (C16).
 *
 * @example
 * ```ts
 * import { ExecutionRecord } from "effect-agent-pipeline"
 * ExecutionRecord.requestCompletion(record) // "succeeded" | "failed" | ... | "unknown"
 * ```
 *
 * @since 0.1.0
 */
export const requestCompletion = (record: ExecutionRecord): LifecycleStatus | "unknown" =>
  record.lifecycle === undefined ? "unknown" : record.lifecycle.status

/**
 * Whether a record counts as an error record for retention purposes.
 *
 * @since 0.1.0
 */
export const isErrorRecord = (record: ExecutionRecord): boolean =>
  record.lifecycle !== undefined &&
  (record.lifecycle.status === "failed" || record.lifecycle.status === "interrupted" ||
    record.lifecycle.status === "abandoned")

/** @since 0.1.0 */
export const decodeUnknown = Schema.decodeUnknown(ExecutionRecord)
/** @since 0.1.0 */
export const encode = Schema.encode(ExecutionRecord)

/**
 * The encoded (wire) form of a record the pipeline built, without the
 * Schema interpreter: the Schema's encoding only renames `recordRevision`
 * to `record_revision` (every other field encodes as itself). Equal to
 * {@link encode}'s result (property-tested); stores call it on every write.
 *
 * @since 0.1.0
 */
export const encodeDirect = (record: ExecutionRecord): ExecutionRecordEncoded => {
  const { recordRevision, ...rest } = record
  return { ...rest, record_revision: recordRevision }
}
