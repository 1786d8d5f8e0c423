/**
 * The model's raw interactions (seed 000 §3 "LLM debug", §9): every call
 * the pipeline made to a language model — each attempt of it, retries,
 * re-asks and fallbacks included — recorded apart from the application's
 * final response. Model success and application success are different
 * outcomes: a request can fail in an AfterSynthesis hook while its
 * synthesis call succeeded, and the record shows both.
 *
 * What a call keeps is a pipeline option (`modelCalls`): `"full"` keeps the
 * prompt and the raw output; `"metadata"` keeps everything but them, for
 * deployments whose prompts are sensitive; `"off"` records no calls.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Token counts as the provider reported them (absent when it did not).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelUsage = Schema.Struct({
  inputTokens: Schema.optional(Schema.Int),
  outputTokens: Schema.optional(Schema.Int),
  totalTokens: Schema.optional(Schema.Int)
}).annotations({ identifier: "ModelUsage" })
/**
 * A decoded {@link ModelUsage}.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelUsage = typeof ModelUsage.Type

/**
 * What one model call answered: the text of its text parts, and what the
 * provider said about the call.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelResponse {
  readonly text: string
  readonly usage?: ModelUsage | undefined
  /** The model id the provider reported. */
  readonly modelId?: string | undefined
}

/**
 * How one model call ended:
 *
 * - `succeeded`: the model answered (its output may still be a bad plan);
 * - `failed`: the provider failed (HTTP error, broken response, cut stream);
 * - `timed_out`: no answer within the model timeout (for a stream: no
 *   next part within it);
 * - `interrupted`: the request stopped waiting (its consumer went away).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelCallOutcome = Schema.Literal("succeeded", "failed", "timed_out", "interrupted")
/**
 * One of the {@link ModelCallOutcome} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelCallOutcome = typeof ModelCallOutcome.Type

/**
 * One model call.
 *
 * @example
 * ```ts
 * import { ExecutionRecord } from "effect-agent-pipeline"
 *
 * const tokensOf = (record: ExecutionRecord.ExecutionRecord) =>
 *   (record.modelCalls ?? []).reduce((sum, call) => sum + (call.usage?.outputTokens ?? 0), 0)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelCall = Schema.Struct({
  purpose: Schema.Literal("planning", "synthesis"),
  /** The planning phase (planning calls). */
  phase: Schema.optional(Schema.Int),
  /** 0 for the first ask; n for the n-th re-ask after output that was not a plan. */
  reask: Schema.Int,
  /** 1 for the first attempt of this ask; retries and the fallback model count on. */
  attempt: Schema.Int,
  /** `primary`, or `fallback` when the fallback model answered. */
  model: Schema.Literal("primary", "fallback"),
  /** The model id the provider reported, when it did. */
  modelId: Schema.optional(Schema.String),
  streamed: Schema.Boolean,
  startedAt: Schema.Finite,
  durationMs: Schema.Finite,
  outcome: ModelCallOutcome,
  /** The prompt as sent (after before_inference transforms); `"full"` recording only. */
  prompt: Schema.optional(Schema.String),
  /** The raw output (a stream: the text received); `"full"` recording only. */
  output: Schema.optional(Schema.String),
  usage: Schema.optional(ModelUsage),
  /** Why it did not succeed. */
  error: Schema.optional(Schema.String)
}).annotations({ identifier: "ModelCall" })
/**
 * A decoded {@link ModelCall}.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelCall = typeof ModelCall.Type

/**
 * What a pipeline records of its model calls.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelCallRecording = Schema.Literal("full", "metadata", "off")
/**
 * One of the {@link ModelCallRecording} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelCallRecording = typeof ModelCallRecording.Type
