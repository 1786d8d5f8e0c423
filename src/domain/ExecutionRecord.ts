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
import { DecisionReason, HookInvocation } from "./HookInvocation.js"
import { Stage } from "./HookPoint.js"
import { Json, JsonObject } from "./Json.js"
import { ModelCall } from "./ModelCall.js"
import { RoutingPlan } from "./RoutingPlan.js"

export * from "./HookInvocation.js"

/**
 * The current record schema version: what the pipeline writes, and the
 * newest a store decodes (a newer record is a `future_version` decode error).
 *
 * @since 0.1.0
 * @category constants
 */
export const currentSchemaVersion = 1

/**
 * The four hook stages (seed 000): `HookPoint.Stage`, by the name records use.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookStage = Stage

/**
 * One of the four stages.
 *
 * @since 0.1.0
 * @category models
 */
export type HookStage = Stage

/**
 * One executed plan step.
 *
 * @since 0.1.0
 * @category schemas
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
/**
 * A decoded {@link StepResult}.
 *
 * @since 0.1.0
 * @category models
 */
export type StepResult = typeof StepResult.Type

/**
 * An accepted phase: the plan that passed AfterPlanning and its results.
 *
 * @since 0.1.0
 * @category schemas
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
/**
 * A decoded {@link PhaseRecord}.
 *
 * @since 0.1.0
 * @category models
 */
export type PhaseRecord = typeof PhaseRecord.Type

/**
 * How the request ended.
 *
 * @since 0.1.0
 * @category schemas
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
/**
 * One of the {@link LifecycleStatus} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type LifecycleStatus = typeof LifecycleStatus.Type

/**
 * Request lifecycle evidence. Absent on legacy records.
 *
 * @since 0.1.0
 * @category schemas
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
/**
 * A decoded {@link Lifecycle}.
 *
 * @since 0.1.0
 * @category models
 */
export type Lifecycle = typeof Lifecycle.Type

/**
 * The request mode that produced a record.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordMode = Schema.Literal("pipeline", "stream", "resume", "workflow", "durable")
/**
 * One of the {@link RecordMode} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type RecordMode = typeof RecordMode.Type

/**
 * The accepted short-circuit, when one ended the request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ShortCircuitRecord = Schema.Struct({
  hookName: Schema.String,
  kind: Schema.Literal("authoritative", "cache"),
  reason: DecisionReason,
  source: Schema.optional(Schema.String)
}).annotations({ identifier: "ShortCircuitRecord" })
/**
 * A decoded {@link ShortCircuitRecord}.
 *
 * @since 0.1.0
 * @category models
 */
export type ShortCircuitRecord = typeof ShortCircuitRecord.Type

/**
 * The execution record: the Schema every store decodes and encodes, and —
 * as a type — the evidence of one request.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ExecutionRecord, ExecutionStore } from "effect-agent-pipeline"
 *
 * // The hooks that ran for a request, and what each decided.
 * const decisionsOf = (requestId: string) =>
 *   Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get(requestId)).pipe(
 *     Effect.map((found) =>
 *       found._tag === "None"
 *         ? []
 *         : found.value.hookInvocations.map((run: ExecutionRecord.HookInvocation) =>
 *           `${run.stage} ${run.name}: ${run.decision?.action ?? "not recorded"}`
 *         )
 *     )
 *   )
 * ```
 *
 * @since 0.1.0
 * @category schemas
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
/**
 * A decoded {@link ExecutionRecord}.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecutionRecord = typeof ExecutionRecord.Type
/**
 * The encoded (wire) form of a record: what stores persist as JSON.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecutionRecordEncoded = typeof ExecutionRecord.Encoded

/**
 * What the record says about the request's completion. A record without
 * lifecycle evidence (legacy) is `unknown`, whatever its steps say (C16).
 *
 * @example
 * ```ts
 * import { ExecutionRecord } from "effect-agent-pipeline"
 *
 * const finished = (record: ExecutionRecord.ExecutionRecord) =>
 *   ExecutionRecord.requestCompletion(record) !== "running" // "succeeded" | "failed" | … | "unknown"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const requestCompletion = (record: ExecutionRecord): LifecycleStatus | "unknown" =>
  record.lifecycle === undefined ? "unknown" : record.lifecycle.status

/**
 * Whether a record counts as an error record for retention purposes: its
 * request failed, was interrupted or was abandoned.
 *
 * @since 0.1.0
 * @category guards
 */
export const isErrorRecord = (record: ExecutionRecord): boolean =>
  record.lifecycle !== undefined &&
  (record.lifecycle.status === "failed" || record.lifecycle.status === "interrupted" ||
    record.lifecycle.status === "abandoned")

/**
 * Decodes a record from its encoded form (a store's JSON, parsed).
 *
 * @example
 * ```ts
 * import { ExecutionRecord } from "effect-agent-pipeline"
 *
 * const fromFile = (text: string) => ExecutionRecord.decodeUnknown(JSON.parse(text))
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const decodeUnknown = Schema.decodeUnknown(ExecutionRecord)

/**
 * Encodes a record to its wire form (what `JSON.stringify` then writes).
 *
 * @since 0.1.0
 * @category schemas
 */
export const encode = Schema.encode(ExecutionRecord)
