/**
 * The typed progress events of a request (issue 23, seed 004 "Progress
 * Tracking"): a phase started, a tool call started or ended, a hook run
 * started or ended. Each carries a human-readable `message` beside its
 * machine fields. `Progress` re-exports these Schemas; they live here so
 * the diff that builds the events (`progressDiff.ts`) and the public
 * module do not import each other.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HookDecision, HookRunStatus } from "../../domain/ExecutionRecord.js"
import { HookPoint } from "../../domain/HookPoint.js"

const message = Schema.String.annotations({ description: "A human-readable status message" })

/**
 * A phase's plan passed AfterPlanning and the phase began.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PhaseStarted = Schema.TaggedStruct("PhaseStarted", {
  phase: Schema.Int,
  message
}).annotations({ identifier: "Progress.PhaseStarted" })

/**
 * A plan step's tool call is in flight.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolStarted = Schema.TaggedStruct("ToolStarted", {
  phase: Schema.Int,
  stepId: Schema.String,
  namespace: Schema.String,
  agent: Schema.String,
  capability: Schema.String,
  message
}).annotations({ identifier: "Progress.ToolStarted" })

/**
 * A plan step ended with `status`, `duration` milliseconds after it started.
 * Always after its {@link ToolStarted}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolEnded = Schema.TaggedStruct("ToolEnded", {
  phase: Schema.Int,
  stepId: Schema.String,
  namespace: Schema.String,
  agent: Schema.String,
  capability: Schema.String,
  status: Schema.Literal("succeeded", "failed", "skipped", "denied"),
  duration: Schema.Finite,
  message
}).annotations({ identifier: "Progress.ToolEnded" })

const hookRun = {
  /** The run's index in the record's `hookInvocations`. */
  invocation: Schema.Int,
  hookName: Schema.String,
  /** The hook point: a stage, `around_<operation>`, `guard_<operation>`, a transform. */
  stage: HookPoint,
  phase: Schema.optional(Schema.Int),
  stepId: Schema.optional(Schema.String)
}

/**
 * A hook run started (`started`), or went on detached from the request
 * (`backgrounded`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookStarted = Schema.TaggedStruct("HookStarted", {
  ...hookRun,
  status: Schema.Literal("started", "backgrounded"),
  message
}).annotations({ identifier: "Progress.HookStarted" })

/**
 * A hook run ended: its status (or, for a run recorded without one, its
 * outcome), what its boundary decided, how long it took. Always after its
 * {@link HookStarted}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookEnded = Schema.TaggedStruct("HookEnded", {
  ...hookRun,
  status: Schema.Union(HookRunStatus, Schema.Literal("succeeded")),
  duration: Schema.Finite,
  decision: Schema.optional(HookDecision),
  message
}).annotations({ identifier: "Progress.HookEnded" })

/**
 * One progress event.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProgressEvent = Schema.Union(PhaseStarted, ToolStarted, ToolEnded, HookStarted, HookEnded).annotations({
  identifier: "Progress.ProgressEvent"
})

/**
 * A decoded {@link ProgressEvent}.
 *
 * @since 0.1.0
 * @category models
 */
export type ProgressEvent = typeof ProgressEvent.Type
