/**
 * The model calls behind one inference: each attempt bounded by the model
 * timeout, transient failures retried (`ModelPolicy`), the fallback model
 * tried through Effect's `ExecutionPlan` once the primary gave up, and every
 * attempt recorded as a `ModelCall` of the request's record.
 *
 * A stream is retried, or handed to the fallback, only while it has not
 * emitted anything: text already delivered cannot be taken back.
 *
 * Two edges are kept here, whatever the model (issue 17):
 * - a model's failure is translated once, as it leaves the model's client:
 *   a safe `AiError` (no request headers, no foreign cause; see
 *   safeAiError.ts), so no typed error, record, log or span of the
 *   pipeline holds what a provider's request carried;
 * - a model's text output is bounded by `maxOutputBytes`: a buffered answer
 *   over it fails with `ModelOutputTooLarge`, its record keeping the output
 *   cut at the limit; a stream emits up to the limit (the delta that
 *   crosses it is cut) and then fails the same way.
 */
import { type AiError, IdGenerator, type LanguageModel, type Response } from "@effect/ai"
import {
  Cause,
  Chunk,
  type Clock,
  Context,
  Duration,
  Effect,
  ExecutionPlan,
  Exit,
  type Fiber,
  Layer,
  Option,
  ParseResult,
  Stream
} from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import type { ModelCall, ModelCallOutcome, ModelUsage } from "../../domain/ModelCall.js"
import { withDeadline } from "../../runtime/internal/deadline.js"
import { flatText } from "../../runtime/internal/flatText.js"
import { keepLatest } from "../../runtime/internal/liveShapes.js"
import { clockOf, elapsedMillis } from "../../runtime/internal/timing.js"
import { withFirst } from "../../runtime/internal/withFirst.js"
import { unsafeRecordTokenUsage } from "../../runtime/PipelineMetrics.js"
import type { RequestRecorder } from "../../runtime/RequestRecorder.js"
import {
  defaults,
  type ModelFailure,
  ModelOutputTooLarge,
  type ModelPolicy,
  ModelTimeout,
  retryDelay,
  withRetries
} from "../ModelPolicy.js"
import { type DirectModel, type ModelResponse, PlanRequest, responseOfText, usageOf } from "../ModelProvider.js"
import { exceeds, utf8Length, utf8Prefix } from "./outputBounds.js"
import { aiErrorText, safeAiError } from "./safeAiError.js"
import { unprovidedOf } from "./unprovided.js"

type Format = "text" | "plan"

/** One model's calls, resolved once. */
export interface ModelClient {
  readonly label: ModelCall["model"]
  /** A buffered call; it runs with `services` added to the caller's context. */
  readonly generate: (
    prompt: string,
    format: Format
  ) => Effect.Effect<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>
  readonly services: Context.Context<IdGenerator.IdGenerator>
  readonly stream: (prompt: string) => Stream.Stream<Response.StreamPart<{}>, AiError.AiError>
}

/** The raw text of `generateObject`'s output that was not JSON. */
const unparsedOutput = (error: AiError.AiError): string | undefined => {
  if (error._tag !== "MalformedOutput" || error.module !== "LanguageModel") return undefined
  const cause = error.cause
  return ParseResult.isParseError(cause) && typeof cause.issue.actual === "string" ? cause.issue.actual : undefined
}

/** A model's calls: the provider's narrow interface when it offers one, else `LanguageModel`. */
export const clientOf = (
  label: ModelCall["model"],
  model: LanguageModel.Service,
  direct: DirectModel.Service | undefined
): ModelClient => {
  // A ModelProvider model's calls take their IdGenerator from the context of
  // the fiber they run on (see internal/unprovided.ts); any other model
  // provides its own (the default IdGenerator given here is then unused).
  const unprovided = direct === undefined ? undefined : unprovidedOf(direct)
  const calls = unprovided ?? direct
  const generate: ModelClient["generate"] = calls !== undefined
    ? (prompt, format) => (format === "plan" ? calls.generatePlan(prompt) : calls.generateText(prompt))
    : (prompt, format) =>
      format === "text"
        ? Effect.map(model.generateText({ prompt }), responseOfText)
        : model.generateObject({ prompt, schema: PlanRequest, objectName: "routing_plan" }).pipe(
          Effect.map(responseOfText),
          Effect.catchIf(
            (error) => unparsedOutput(error) !== undefined,
            (error) => Effect.succeed<ModelResponse>({ text: unparsedOutput(error) ?? "" })
          )
        )
  return {
    label,
    services: unprovided?.services ?? DEFAULT_SERVICES,
    // The one translation of a model's failures (see the module comment).
    generate: (prompt, format) => Effect.mapError(generate(prompt, format), safeAiErrorOf),
    stream: (prompt) => Stream.mapError(model.streamText({ prompt }), safeAiErrorOf)
  }
}

const safeAiErrorOf = (error: AiError.AiError): AiError.AiError => safeAiError(error)

const DEFAULT_SERVICES = Context.make(IdGenerator.IdGenerator, IdGenerator.defaultIdGenerator)

/** Which model call this is, and where it is recorded. */
export interface CallInfo {
  readonly purpose: ModelCall["purpose"]
  readonly phase?: number | undefined
  readonly reask: number
  readonly recorder: RequestRecorder
}

class ActiveModel extends Context.Tag("effect-agent-pipeline/ActiveModel")<ActiveModel, ModelClient>() {}

const outcomeOf = (cause: Cause.Cause<ModelFailure>): ModelCallOutcome => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return failure.value._tag === "ModelTimeout" ? "timed_out" : "failed"
  return Cause.isInterruptedOnly(cause) ? "interrupted" : "failed"
}

const errorText = (cause: Cause.Cause<ModelFailure>): string => {
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

/**
 * The output of a buffered answer over the limit, cut at it, for the
 * attempt's record (the error itself stays small: it ends up in typed
 * errors and their logs).
 */
const cutOutputs = new WeakMap<ModelOutputTooLarge, string>()

/** A failure's record: the error text, and a cut output when the output was too large. */
const failedWith = (cause: Cause.Cause<ModelFailure>): Ended => {
  const failure = Cause.failureOption(cause)
  const output = Option.isSome(failure) && failure.value._tag === "ModelOutputTooLarge"
    ? cutOutputs.get(failure.value)
    : undefined
  return { outcome: outcomeOf(cause), error: errorText(cause), ...(output === undefined ? {} : { output }) }
}

/** A streamed attempt as it goes. */
interface StreamState {
  readonly emitted: { value: boolean }
  readonly received: Array<string>
  bytes: number
  usage: ModelUsage | undefined
  modelId: string | undefined
  /** Set once the output passed the limit. */
  over: ModelOutputTooLarge | undefined
}

/** What one attempt ended with, for its record. */
interface Ended {
  readonly outcome: ModelCallOutcome
  readonly output?: string | undefined
  readonly usage?: ModelUsage | undefined
  readonly modelId?: string | undefined
  readonly error?: string | undefined
}

/** `record` with one more model call. */
const withModelCall = (call: ModelCall, record: ExecutionRecord): ExecutionRecord => ({
  ...record,
  modelCalls: [...(record.modelCalls ?? []), call]
})

/**
 * The calls of one pipeline: `generate` and `stream` with the policy's
 * timeouts, retries, fallback and recording.
 */
export const makeCaller = (policy: ModelPolicy, primary: ModelClient, fallback: ModelClient | undefined) => {
  const timeoutMillis = Duration.toMillis(policy.timeout)
  const timedOut = () => new ModelTimeout({ timeoutMillis })
  // A policy object from before `maxOutputBytes` existed (plain JavaScript) gets the default.
  const maxOutputBytes = Number.isSafeInteger(policy.maxOutputBytes) && policy.maxOutputBytes > 0
    ? policy.maxOutputBytes
    : defaults.maxOutputBytes

  /** A buffered answer within the limit, or `ModelOutputTooLarge` (its output cut for the record). */
  const withinLimit = (response: ModelResponse): Effect.Effect<ModelResponse, ModelOutputTooLarge> => {
    if (!exceeds(response.text, maxOutputBytes)) return Effect.succeed(response)
    const error = new ModelOutputTooLarge({
      maxBytes: maxOutputBytes,
      receivedBytes: utf8Length(response.text),
      streamed: false
    })
    cutOutputs.set(error, utf8Prefix(response.text, maxOutputBytes))
    return Effect.fail(error)
  }

  const recorded = (info: CallInfo) => policy.recordCalls !== "off" && info.recorder.enabled

  /** Token metrics and the call's record, once it ended. */
  const ended = (
    info: CallInfo,
    client: ModelClient,
    n: number,
    prompt: string,
    streamed: boolean,
    startedAt: number,
    durationMs: number,
    end: Ended
  ): Effect.Effect<void> => {
    if (end.usage !== undefined) {
      unsafeRecordTokenUsage({
        model: end.modelId ?? client.label,
        purpose: info.purpose,
        inputTokens: end.usage.inputTokens,
        outputTokens: end.usage.outputTokens
      })
    }
    if (!recorded(info)) return Effect.void
    const full = policy.recordCalls === "full"
    const call: ModelCall = {
      purpose: info.purpose,
      ...(info.phase === undefined ? {} : { phase: info.phase }),
      reask: info.reask,
      attempt: n,
      model: client.label,
      ...(end.modelId === undefined ? {} : { modelId: end.modelId }),
      streamed,
      startedAt,
      durationMs,
      outcome: end.outcome,
      ...(full ? { prompt: flatText(prompt) } : {}),
      ...(full && end.output !== undefined ? { output: end.output } : {}),
      ...(end.usage === undefined ? {} : { usage: end.usage }),
      ...(end.error === undefined ? {} : { error: end.error })
    }
    return info.recorder.modifyNow(withFirst(withModelCall, call))
  }

  /** One attempt, bounded by the model timeout, recorded when it ended. */
  const generateOnce = (info: CallInfo, client: ModelClient, prompt: string, format: Format, n: number) =>
    withDeadline(
      Effect.flatMap(client.generate(prompt, format), withinLimit),
      policy.timeout,
      timedOut,
      withFirst(startAttempt, { info, client, prompt, n }),
      client.services
    )

  /** Times an attempt from now; returns how to record it when it ended. */
  const startAttempt = (
    a: { readonly info: CallInfo; readonly client: ModelClient; readonly prompt: string; readonly n: number },
    caller: Fiber.RuntimeFiber<unknown, unknown>
  ) => withFirst(endAttempt, new GenerateAttempt(a.info, a.client, a.prompt, a.n, clockOf(caller)))
  const endAttempt = (attempt: GenerateAttempt, exit: Exit.Exit<ModelResponse, ModelFailure>) => attempt.end(exit)

  /**
   * A buffered attempt being timed. A class (its `end` one function for the
   * process's life), not a closure made per call: those lose their
   * optimized code at every full GC that finds none alive.
   */
  class GenerateAttempt {
    readonly startedAt: number
    readonly mark: number
    constructor(
      readonly info: CallInfo,
      readonly client: ModelClient,
      readonly prompt: string,
      readonly n: number,
      readonly clock: Clock.Clock
    ) {
      this.startedAt = clock.unsafeCurrentTimeMillis()
      this.mark = elapsedMillis(clock)
      keepLatest("modelAttempt", this)
    }
    end(exit: Exit.Exit<ModelResponse, ModelFailure>): Effect.Effect<void> {
      const durationMs = elapsedMillis(this.clock) - this.mark
      return ended(this.info, this.client, this.n, this.prompt, false, this.startedAt, durationMs, endedOf(exit))
    }
  }

  const endedOf = (exit: Exit.Exit<ModelResponse, ModelFailure>): Ended =>
    Exit.isSuccess(exit)
      ? { outcome: "succeeded", output: exit.value.text, usage: exit.value.usage, modelId: exit.value.modelId }
      : failedWith(exit.cause)

  const plan = fallback === undefined ? undefined : ExecutionPlan.make(
    // (Layers, not Contexts: `ExecutionPlan` types a Context step's error as `unknown`.)
    { provide: Layer.succeed(ActiveModel, primary) },
    // The fallback answers once the primary gave up (its retries spent),
    // whatever the failure: a bad plan is not a failure here (it is re-asked).
    { provide: Layer.succeed(ActiveModel, fallback), while: (_: ModelFailure) => Effect.succeed(true) }
  )

  /** One ask: the primary's attempts, then the fallback's. */
  const generate = (info: CallInfo, prompt: string, format: Format): Effect.Effect<ModelResponse, ModelFailure> => {
    if (plan === undefined) return withRetries(policy, withFirst(attemptOf, { info, client: primary, prompt, format }))
    const attempts = (client: ModelClient) =>
      withRetries(policy, withFirst(attemptOf, { info, client, prompt, format }))
    return Effect.withExecutionPlan(Effect.flatMap(ActiveModel, attempts), plan)
  }
  const attemptOf = (
    ask: { readonly info: CallInfo; readonly client: ModelClient; readonly prompt: string; readonly format: Format },
    n: number
  ) => generateOnce(ask.info, ask.client, ask.prompt, ask.format, n)

  /**
   * One streamed attempt: text deltas, each pull awaited for at most the
   * model timeout, cut at `maxOutputBytes`; recorded (with the text
   * received) when it ends.
   */
  const streamOnce = (info: CallInfo, client: ModelClient, prompt: string, n: number, emitted: { value: boolean }) =>
    Stream.unwrap(Effect.withFiberRuntime<Stream.Stream<string, ModelFailure>>((fiber) => {
      const clock = clockOf(fiber)
      const startedAt = clock.unsafeCurrentTimeMillis()
      const mark = elapsedMillis(clock)
      const state: StreamState = {
        emitted,
        received: [],
        bytes: 0,
        usage: undefined,
        modelId: undefined,
        over: undefined
      }
      const deltas = Stream.fromPull(
        Effect.map(Stream.toPull(client.stream(prompt)), (pull) => {
          const bounded = Effect.map(
            withDeadline(pull, policy.timeout, () => Option.some<ModelFailure>(timedOut())),
            (parts) => deltasOf(parts, state)
          )
          // Once over the limit, the next pull ends the stream with the failure.
          return Effect.suspend(() =>
            state.over === undefined ? bounded : Effect.fail(Option.some<ModelFailure>(state.over))
          )
        })
      )
      return Effect.succeed(Stream.ensuringWith(deltas, (exit) => {
        const output = state.received.join("")
        const { modelId, usage } = state
        const end: Ended = Exit.isSuccess(exit)
          ? { outcome: "succeeded", output, usage, modelId }
          : { outcome: outcomeOf(exit.cause), output, usage, modelId, error: errorText(exit.cause) }
        return ended(info, client, n, prompt, true, startedAt, elapsedMillis(clock) - mark, end)
      }))
    }))

  /** A pulled chunk of parts as its text deltas, within the limit (the delta crossing it cut). */
  const deltasOf = (parts: Chunk.Chunk<Response.StreamPart<{}>>, state: StreamState): Chunk.Chunk<string> => {
    const out: Array<string> = []
    for (const part of parts) {
      if (part.type === "text-delta") {
        const size = utf8Length(part.delta)
        state.emitted.value = true
        if (state.bytes + size <= maxOutputBytes) {
          state.bytes += size
          state.received.push(part.delta)
          out.push(part.delta)
          continue
        }
        const cut = utf8Prefix(part.delta, maxOutputBytes - state.bytes)
        if (cut.length > 0) {
          state.received.push(cut)
          out.push(cut)
        }
        state.over = new ModelOutputTooLarge({
          maxBytes: maxOutputBytes,
          receivedBytes: state.bytes + size,
          streamed: true
        })
        state.bytes = maxOutputBytes
        break
      }
      if (part.type === "finish") state.usage = usageOf(part.usage)
      else if (part.type === "response-metadata") state.modelId = Option.getOrUndefined(part.modelId)
    }
    return Chunk.unsafeFromArray(out)
  }

  /** Retries a stream that failed before it emitted anything. */
  const streamAttempts = (
    info: CallInfo,
    client: ModelClient,
    prompt: string,
    n = 1
  ): Stream.Stream<string, ModelFailure> => {
    const emitted = { value: false }
    return Stream.catchAll(streamOnce(info, client, prompt, n, emitted), (failure) => {
      if (emitted.value) return Stream.fail(failure)
      return Stream.unwrap(
        Effect.flatMap(
          Effect.clockWith((clock) => clock.currentTimeMillis),
          (now) =>
            Option.match(retryDelay(policy, failure, n, now), {
              onNone: () => Effect.succeed(Stream.fail(failure)),
              onSome: (delay) => Effect.as(Effect.sleep(delay), streamAttempts(info, client, prompt, n + 1))
            })
        )
      )
    })
  }

  const stream = (info: CallInfo, prompt: string): Stream.Stream<string, ModelFailure> =>
    plan === undefined
      ? streamAttempts(info, primary, prompt)
      : Stream.withExecutionPlan(
        Stream.unwrap(Effect.map(ActiveModel, (client) => streamAttempts(info, client, prompt))),
        plan,
        { preventFallbackOnPartialStream: true }
      )

  return { generate, stream }
}
