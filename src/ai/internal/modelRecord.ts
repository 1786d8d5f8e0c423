/**
 * Model attempts as the request records them: each attempt ends as one
 * `ModelCall` of the record of the request the fiber works for (recording
 * on and `ModelPolicy.recordCalls` not `off`), and its token usage is
 * counted either way (`gen_ai.client.token.usage`: the model asked for as
 * `gen_ai.request.model`, the one that answered as `gen_ai.response.model`).
 * A buffered answer over `maxOutputBytes` keeps its output, cut at the
 * limit, in the record only (the error itself stays small: it ends up in
 * typed errors and their logs).
 */
import { Cause, Effect, type Fiber, Option } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import type { ModelCall, ModelCallOutcome, ModelUsage } from "../../domain/ModelCall.js"
import { flatText } from "../../runtime/internal/flatText.js"
import type { RequestRecorder } from "../../runtime/internal/requestRecorder.js"
import { currentRequest } from "../../runtime/Operations.js"
import { unsafeRecordTokenUsage } from "../../runtime/PipelineMetrics.js"
import type { ModelFailure, ModelOutputTooLarge, ModelPolicy } from "../ModelPolicy.js"
import type { ModelClient } from "./modelClient.js"
import { aiErrorText } from "./safeAiError.js"

/**
 * Which model call this is.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallInfo {
  readonly purpose: ModelCall["purpose"]
  readonly phase?: number | undefined
  readonly reask: number
}

/**
 * One attempt: which call, on which model, with what prompt, and where it is recorded.
 *
 * @since 0.1.0
 * @category models
 */
export interface Attempt {
  readonly info: CallInfo
  readonly client: ModelClient
  readonly prompt: string
  readonly n: number
  readonly streamed: boolean
  readonly startedAt: number
  readonly recorder: RequestRecorder | undefined
}

/**
 * What one attempt ended with, for its record.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ended {
  readonly outcome: ModelCallOutcome
  readonly output?: string | undefined
  readonly usage?: ModelUsage | undefined
  readonly modelId?: string | undefined
  readonly error?: string | undefined
}

/**
 * The recorder of the request `fiber` works for, if any.
 *
 * @since 0.1.0
 * @category utils
 */
export const recorderOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): RequestRecorder | undefined =>
  fiber.getFiberRef(currentRequest)?.recorder

/**
 * How an attempt that did not succeed ended.
 *
 * @since 0.1.0
 * @category utils
 */
export const outcomeOf = (cause: Cause.Cause<ModelFailure>): ModelCallOutcome => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return failure.value._tag === "ModelTimeout" ? "timed_out" : "failed"
  return Cause.isInterruptedOnly(cause) ? "interrupted" : "failed"
}

/**
 * An attempt's failure as its record's error text.
 *
 * @since 0.1.0
 * @category utils
 */
export const errorText = (cause: Cause.Cause<ModelFailure>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return Cause.pretty(cause).slice(0, 2000)
  const value = failure.value
  switch (value._tag) {
    case "ModelOutputTooLarge":
      return `${value.message}; output recorded up to the limit (truncated)`
    case "ModelTimeout":
      return value.message
    default:
      return aiErrorText(value).slice(0, 2000)
  }
}

/** The output of a buffered answer over the limit, cut at it, for the attempt's record. */
const cutOutputs = new WeakMap<ModelOutputTooLarge, string>()

/**
 * Keeps `output` (cut at the limit) as the record's output of an attempt that failed with `error`.
 *
 * @since 0.1.0
 * @category utils
 */
export const keepCutOutput = (error: ModelOutputTooLarge, output: string): ModelOutputTooLarge => {
  cutOutputs.set(error, output)
  return error
}

/**
 * A failure's record: the error text, and a cut output when the output was too large.
 *
 * @since 0.1.0
 * @category utils
 */
export const failedWith = (cause: Cause.Cause<ModelFailure>): Ended => {
  const failure = Cause.failureOption(cause)
  const output = Option.isSome(failure) && failure.value._tag === "ModelOutputTooLarge"
    ? cutOutputs.get(failure.value)
    : undefined
  return { outcome: outcomeOf(cause), error: errorText(cause), ...(output === undefined ? {} : { output }) }
}

/**
 * Counts an ended attempt's tokens and records it on its request.
 *
 * @since 0.1.0
 * @category utils
 */
export const recordAttempt = (
  policy: ModelPolicy,
  attempt: Attempt,
  durationMs: number,
  end: Ended
): Effect.Effect<void> => {
  const { client, info, recorder } = attempt
  if (end.usage !== undefined) {
    const identity = client.identity
    unsafeRecordTokenUsage({
      model: identity?.model,
      responseModel: end.modelId,
      provider: identity?.provider,
      serverAddress: identity?.serverAddress,
      serverPort: identity?.serverPort,
      purpose: info.purpose,
      inputTokens: end.usage.inputTokens,
      outputTokens: end.usage.outputTokens
    })
  }
  if (policy.recordCalls === "off" || recorder === undefined || !recorder.enabled) return Effect.void
  const full = policy.recordCalls === "full"
  const call: ModelCall = {
    purpose: info.purpose,
    ...(info.phase === undefined ? {} : { phase: info.phase }),
    reask: info.reask,
    attempt: attempt.n,
    model: client.label,
    ...(end.modelId === undefined ? {} : { modelId: end.modelId }),
    streamed: attempt.streamed,
    startedAt: attempt.startedAt,
    durationMs,
    outcome: end.outcome,
    ...(full ? { prompt: flatText(attempt.prompt) } : {}),
    ...(full && end.output !== undefined ? { output: end.output } : {}),
    ...(end.usage === undefined ? {} : { usage: end.usage }),
    ...(end.error === undefined ? {} : { error: end.error })
  }
  return recorder.modifyNow((record: ExecutionRecord) => ({
    ...record,
    modelCalls: [...(record.modelCalls ?? []), call]
  }))
}
