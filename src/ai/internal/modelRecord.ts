/**
 * Model attempts as the request records them: each attempt ends as one
 * `ModelCall` of the record of the request the fiber works for (recording
 * on and `ModelPolicy.recordCalls` not `off`), and its token usage is
 * counted either way (`gen_ai.client.token.usage`: the model asked for as
 * `gen_ai.request.model`, the one that answered as `gen_ai.response.model`).
 * A buffered answer over `maxOutputBytes` keeps its output, cut at the
 * limit, in the record only (the error itself stays small: it ends up in
 * typed errors and their logs).
 *
 * An Around observer of `inference` may also watch the attempts of the run
 * it observes ({@link watchAttempts}: the built-in audit hook does): each
 * attempt, as it ends, is handed to the watches of its run — without its
 * prompt or output. With no watch open, that costs one comparison.
 */
import { Cause, Effect, type Fiber, Option } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import type { ModelCall, ModelCallOutcome, ModelUsage } from "../../domain/ModelCall.js"
import { flatText } from "../../runtime/internal/flatText.js"
import type { RequestRecorder } from "../../runtime/internal/requestRecorder.js"
import { currentRequest } from "../../runtime/Operations.js"
import { unsafeRecordTokenUsage } from "../../runtime/PipelineMetrics.js"
import type { ModelFailure, ModelOutputTooLarge, ModelPolicy } from "../ModelPolicy.js"
import type { ModelClient, ModelIdentity } from "./modelClient.js"
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
  /** The id of the request the attempt is made for (its watches are looked up by it). */
  readonly requestId: string | undefined
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
  /** What kind of failure it was (see {@link errorTypeOf}). */
  readonly errorType?: string | undefined
}

/**
 * The request `fiber` works for, if any: its id and its recorder.
 *
 * @since 0.1.0
 * @category utils
 */
export const requestOf = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>
): { readonly requestId: string | undefined; readonly recorder: RequestRecorder | undefined } => {
  const request = fiber.getFiberRef(currentRequest)
  return { requestId: request?.requestId, recorder: request?.recorder }
}

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
 * The kind of an attempt's failure, safe to log and to tag metrics with:
 * `timeout` (the model timeout), the HTTP status of an error response
 * (`429`, `503`), else the failure's tag (`HttpRequestError`,
 * `MalformedOutput`, `ModelOutputTooLarge`, …); `_OTHER` for a defect,
 * `interrupted` for an interruption — the values of `error.type` on the
 * GenAI spans (genAiSpans.ts), where an interruption has none.
 *
 * @since 0.1.0
 * @category utils
 */
export const errorTypeOf = (cause: Cause.Cause<ModelFailure>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return Cause.isInterruptedOnly(cause) ? "interrupted" : "_OTHER"
  const error = failure.value
  if (error._tag === "ModelTimeout") return "timeout"
  if (error._tag === "HttpResponseError" && error.reason === "StatusCode") return String(error.response.status)
  return error._tag
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
  return {
    outcome: outcomeOf(cause),
    error: errorText(cause),
    errorType: errorTypeOf(cause),
    ...(output === undefined ? {} : { output })
  }
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
  if (watching > 0) seen(attempt, durationMs, end)
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

// =============================================================================
// Watching the attempts of an inference run
// =============================================================================

/**
 * One ended attempt as a watch sees it: its record less the prompt and the
 * output texts, with the model's identity.
 *
 * @since 0.1.0
 * @category models
 */
export interface SeenAttempt {
  readonly purpose: ModelCall["purpose"]
  readonly phase: number | undefined
  readonly reask: number
  /** The attempt's number on its model (retries count on; the fallback's first is 1). */
  readonly attempt: number
  readonly model: ModelCall["model"]
  /** Which model it is, when its Layer said (provider, model asked for). */
  readonly identity: ModelIdentity.Service | undefined
  /** The model id the provider reported. */
  readonly modelId: string | undefined
  readonly streamed: boolean
  readonly startedAt: number
  readonly durationMs: number
  readonly outcome: ModelCallOutcome
  readonly usage: ModelUsage | undefined
  readonly errorType: string | undefined
}

/**
 * A watch on the attempts of one inference run (what its Around observer
 * sees of the run: `call.callId`, the purpose, phase and mode).
 *
 * @since 0.1.0
 * @category models
 */
export interface AttemptWatch {
  /** The run's `callId`: the watches of one run (several observers) all see its attempts. */
  readonly run: string
  readonly purpose: ModelCall["purpose"]
  readonly phase: number | undefined
  readonly streamed: boolean
  /** Called synchronously as each attempt of the run ends. */
  readonly seen: (attempt: SeenAttempt) => void
}

/** The open watches, by request id. */
const watches = new Map<string, Array<AttemptWatch>>()
/** How many watches are open: with none, an attempt does no lookup at all. */
let watching = 0

/**
 * Watches the attempts of an inference run of request `requestId` (the
 * run's `coordinates.requestId`) from now on, until the returned function
 * is called — synchronously, so an observer's begin can open it without
 * a fiber of its own. Attempts are told apart by their request, purpose,
 * phase and mode: should two runs alike in all of these be open at once
 * in one request (only a user's code calling the `Inference` service
 * concurrently makes them), an attempt goes to the run opened last. An
 * attempt made outside a request is watched by no one.
 *
 * @since 0.1.0
 * @category utils
 */
export const watchAttempts = (requestId: string, watch: AttemptWatch): () => void => {
  let open = watches.get(requestId)
  if (open === undefined) watches.set(requestId, open = [])
  open.push(watch)
  watching++
  let closed = false
  return () => {
    if (closed) return
    closed = true
    watching--
    const i = open.indexOf(watch)
    if (i >= 0) open.splice(i, 1)
    if (open.length === 0 && watches.get(requestId) === open) watches.delete(requestId)
  }
}

/**
 * How many watches are open (tests: none is left open once its run ended).
 *
 * @since 0.1.0
 * @category utils
 */
export const openWatches = (): number => watching

const matches = (watch: AttemptWatch, info: CallInfo, streamed: boolean): boolean =>
  watch.purpose === info.purpose && watch.phase === info.phase && watch.streamed === streamed

/** Hands an ended attempt to the watches of its run (the matching run opened last). */
const seen = (attempt: Attempt, durationMs: number, end: Ended): void => {
  if (attempt.requestId === undefined) return
  const open = watches.get(attempt.requestId)
  if (open === undefined) return
  const { info, streamed } = attempt
  let run: string | undefined
  for (let i = open.length - 1; i >= 0; i--) {
    if (matches(open[i]!, info, streamed)) {
      run = open[i]!.run
      break
    }
  }
  if (run === undefined) return
  const seenAttempt: SeenAttempt = {
    purpose: info.purpose,
    phase: info.phase,
    reask: info.reask,
    attempt: attempt.n,
    model: attempt.client.label,
    identity: attempt.client.identity,
    modelId: end.modelId,
    streamed,
    startedAt: attempt.startedAt,
    durationMs,
    outcome: end.outcome,
    usage: end.usage,
    errorType: end.errorType
  }
  // A copy: a watch that closes while it is told must not skip the next one.
  for (const watch of open.slice()) {
    if (watch.run === run) watch.seen(seenAttempt)
  }
}
