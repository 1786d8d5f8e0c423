/**
 * The model calls behind one inference: each attempt bounded by the model
 * timeout, transient failures retried (`ModelPolicy`), the fallback model
 * tried through Effect's `ExecutionPlan` once the primary gave up, and every
 * attempt recorded as a `ModelCall` on the request the fiber works for
 * (modelRecord.ts).
 *
 * A stream is retried, or handed to the fallback, only while it has not
 * emitted anything: text already delivered cannot be taken back.
 *
 * Each ask of one model — its attempts and retries, buffered or streamed —
 * is one GenAI client span (`chat {model}`, see genAiSpans.ts)
 * when spans are collected, and one `gen_ai.client.operation.duration`
 * sample either way; the fallback model's ask is a span and a sample of its
 * own. Token usage is counted per attempt (modelRecord.ts), and each ended
 * attempt is handed to the watches of its inference run, if any (the audit
 * hook's; modelRecord.ts).
 *
 * Two edges are kept, whatever the model (issue 17):
 * - a model's failure is translated once, as it leaves the model's client
 *   (modelClient.ts): a safe `AiError`, so no typed error, record, log or
 *   span of the pipeline holds what a provider's request carried;
 * - here, a model's text output is bounded by `maxOutputBytes`: a buffered answer
 *   over it fails with `ModelOutputTooLarge`, its record keeping the output
 *   cut at the limit; a stream emits up to the limit (the delta that
 *   crosses it is cut) and then fails the same way.
 */
import { AiError, type Response } from "@effect/ai"
import { Chunk, Context, Duration, Effect, ExecutionPlan, Exit, Layer, Option, Stream } from "effect"
import type { ModelUsage } from "../../domain/ModelCall.js"
import { withDeadline, withDeadlineProviding } from "../../runtime/internal/deadline.js"
import { clockOf, elapsedMillis, millisBetween } from "../../runtime/internal/timing.js"
import {
  defaults,
  type ModelFailure,
  ModelOutputTooLarge,
  type ModelPolicy,
  ModelTimeout,
  retryDelay,
  withRetries
} from "../ModelPolicy.js"
import { type ModelResponse, usageOf } from "../ModelProvider.js"
import { inModelSpan, type ModelSpan, streamInModelSpan } from "./genAiSpans.js"
import type { Format, ModelClient } from "./modelClient.js"
import {
  type CallInfo,
  type Ended,
  errorText,
  errorTypeOf,
  failedWith,
  keepCutOutput,
  outcomeOf,
  recordAttempt,
  requestOf
} from "./modelRecord.js"
import { exceeds, utf8Length, utf8Prefix } from "./outputBounds.js"

class ActiveModel extends Context.Tag("effect-agent-pipeline/ActiveModel")<ActiveModel, ModelClient>() {}

/** A streamed attempt as it goes. */
interface StreamState {
  readonly emitted: { value: boolean }
  readonly received: Array<string>
  bytes: number
  usage: ModelUsage | undefined
  modelId: string | undefined
  /** The ask's span (first chunk). */
  readonly span: ModelSpan
  /** What ends the stream at the next pull: the output passed the limit, or the provider reported an error. */
  over: ModelFailure | undefined
  /** The model's stream reached its end (else a stream closed without failing was abandoned by its consumer). */
  ended: boolean
}

/**
 * The failure an `error` part of a stream stands for. Only the error's
 * `type` (a code such as `overloaded_error`) is kept: its message is the
 * server's text, which the pipeline does not scrub of keys.
 */
const streamErrorOf = (error: unknown): AiError.UnknownError => {
  const inner = typeof error === "object" && error !== null && "error" in error ? error.error : error
  const type = typeof inner === "object" && inner !== null && "type" in inner && typeof inner.type === "string"
    ? inner.type.slice(0, 100)
    : undefined
  return new AiError.UnknownError({
    module: "LanguageModel",
    method: "streamText",
    description: `the provider's stream reported an error${type === undefined ? "" : ` (${type})`}`
  })
}

/** The error text of a streamed attempt its consumer abandoned. */
const abandoned = "the stream's consumer stopped before its end"

const endedOf = (exit: Exit.Exit<ModelResponse, ModelFailure>): Ended =>
  Exit.isSuccess(exit)
    ? { outcome: "succeeded", output: exit.value.text, usage: exit.value.usage, modelId: exit.value.modelId }
    : failedWith(exit.cause)

/**
 * The calls of one pipeline: `generate` and `stream` with the policy's
 * timeouts, retries, fallback and recording.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeCaller = (policy: ModelPolicy, primary: ModelClient, fallback: ModelClient | undefined) => {
  const timeoutMillis = Duration.toMillis(policy.timeout)
  const timedOut = () => new ModelTimeout({ timeoutMillis })
  // A policy object from before `maxOutputBytes` existed (plain JavaScript) gets the default.
  const maxOutputBytes = Number.isSafeInteger(policy.maxOutputBytes) && policy.maxOutputBytes > 0
    ? policy.maxOutputBytes
    : defaults.maxOutputBytes

  /** A buffered answer within the limit, or `ModelOutputTooLarge` (its output cut for the record). */
  const withinLimit = (response: ModelResponse): Effect.Effect<ModelResponse, ModelOutputTooLarge> =>
    exceeds(response.text, maxOutputBytes)
      ? Effect.fail(keepCutOutput(
        new ModelOutputTooLarge({
          maxBytes: maxOutputBytes,
          receivedBytes: utf8Length(response.text),
          streamed: false
        }),
        utf8Prefix(response.text, maxOutputBytes)
      ))
      : Effect.succeed(response)

  /** One attempt, bounded by the model timeout, recorded when it ended. */
  const generateOnce = (
    info: CallInfo,
    client: ModelClient,
    prompt: string,
    format: Format,
    n: number,
    span: ModelSpan
  ) =>
    withDeadlineProviding(
      client.services,
      Effect.flatMap(client.generate(prompt, format), (response) => {
        span.answered(response.usage, response.modelId)
        return withinLimit(response)
      }),
      policy.timeout,
      timedOut,
      (caller) => {
        const clock = clockOf(caller)
        const attempt = {
          info,
          client,
          prompt,
          n,
          streamed: false,
          startedAt: clock.unsafeCurrentTimeMillis(),
          ...requestOf(caller)
        }
        const mark = elapsedMillis(clock)
        return (exit) => recordAttempt(policy, attempt, millisBetween(mark, elapsedMillis(clock)), endedOf(exit))
      }
    )

  const plan = fallback === undefined ? undefined : ExecutionPlan.make(
    // (Layers, not Contexts: `ExecutionPlan` types a Context step's error as `unknown`.)
    { provide: Layer.succeed(ActiveModel, primary) },
    // The fallback answers once the primary gave up (its retries spent),
    // whatever the failure: a bad plan is not a failure here (it is re-asked).
    { provide: Layer.succeed(ActiveModel, fallback), while: (_: ModelFailure) => Effect.succeed(true) }
  )

  /** One ask: the primary's attempts, then the fallback's. */
  const generate = (info: CallInfo, prompt: string, format: Format): Effect.Effect<ModelResponse, ModelFailure> => {
    const attempts = (client: ModelClient) =>
      inModelSpan(
        info.purpose,
        client,
        format,
        (span) => withRetries(policy, (n) => generateOnce(info, client, prompt, format, n, span))
      )
    return plan === undefined
      ? attempts(primary)
      : Effect.withExecutionPlan(Effect.flatMap(ActiveModel, attempts), plan)
  }

  /**
   * One streamed attempt: text deltas, each pull awaited for at most the
   * model timeout, cut at `maxOutputBytes`; recorded (with the text
   * received) when it ends.
   */
  const streamOnce = (
    info: CallInfo,
    client: ModelClient,
    prompt: string,
    n: number,
    emitted: { value: boolean },
    span: ModelSpan
  ) =>
    Stream.unwrap(Effect.withFiberRuntime<Stream.Stream<string, ModelFailure>>((fiber) => {
      const clock = clockOf(fiber)
      const attempt = {
        info,
        client,
        prompt,
        n,
        streamed: true,
        startedAt: clock.unsafeCurrentTimeMillis(),
        ...requestOf(fiber)
      }
      const mark = elapsedMillis(clock)
      const state: StreamState = {
        emitted,
        received: [],
        bytes: 0,
        usage: undefined,
        modelId: undefined,
        span,
        over: undefined,
        ended: false
      }
      // Opening and pulling run within the ask's span (a Stream cannot carry it).
      const deltas = Stream.fromPull(
        Effect.map(span.within(Stream.toPull(client.stream(prompt))), (pull) => {
          const bounded = Effect.map(
            withDeadline(span.within(pull), policy.timeout, () => Option.some<ModelFailure>(timedOut())),
            (parts) => deltasOf(parts, state)
          )
          // Once over the limit, the next pull ends the stream with the failure.
          return Effect.suspend(() =>
            state.over === undefined ? bounded : Effect.fail(Option.some<ModelFailure>(state.over))
          )
        })
      )
      const ending = Stream.onEnd(deltas, Effect.sync(() => void (state.ended = true)))
      return Effect.succeed(Stream.ensuringWith(ending, (exit) => {
        const output = state.received.join("")
        const { modelId, usage } = state
        span.answered(usage, modelId)
        const end: Ended = Exit.isSuccess(exit)
          ? state.ended
            ? { outcome: "succeeded", output, usage, modelId }
            // Its consumer stopped pulling before the end: the answer was cut short, not given.
            : { outcome: "interrupted", output, usage, modelId, error: abandoned, errorType: "interrupted" }
          : {
            outcome: outcomeOf(exit.cause),
            output,
            usage,
            modelId,
            error: errorText(exit.cause),
            errorType: errorTypeOf(exit.cause)
          }
        return recordAttempt(policy, attempt, millisBetween(mark, elapsedMillis(clock)), end)
      }))
    }))

  /** A pulled chunk of parts as its text deltas, within the limit (the delta crossing it cut). */
  const deltasOf = (parts: Chunk.Chunk<Response.StreamPart<{}>>, state: StreamState): Chunk.Chunk<string> => {
    const out: Array<string> = []
    for (const part of parts) {
      if (part.type === "text-delta") {
        const size = utf8Length(part.delta)
        state.emitted.value = true
        state.span.firstChunk()
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
      if (part.type === "error") {
        // A provider's stream may report a failure as a part (Anthropic's
        // `error` event, `overloaded_error`): the answer is cut short, so the
        // stream fails — never a shorter answer taken for a whole one.
        state.over = streamErrorOf(part.error)
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
    span: ModelSpan,
    n = 1
  ): Stream.Stream<string, ModelFailure> => {
    const emitted = { value: false }
    return Stream.catchAll(streamOnce(info, client, prompt, n, emitted, span), (failure) => {
      if (emitted.value) return Stream.fail(failure)
      return Stream.unwrap(
        Effect.flatMap(
          Effect.clockWith((clock) => clock.currentTimeMillis),
          (now) =>
            Option.match(retryDelay(policy, failure, n, now), {
              onNone: () => Effect.succeed(Stream.fail(failure)),
              onSome: (delay) => Effect.as(Effect.sleep(delay), streamAttempts(info, client, prompt, span, n + 1))
            })
        )
      )
    })
  }

  /** One streamed ask of `client`: its attempts, in its span. */
  const streamAsk = (info: CallInfo, client: ModelClient, prompt: string) =>
    streamInModelSpan(info.purpose, client, (span) => streamAttempts(info, client, prompt, span))

  const stream = (info: CallInfo, prompt: string): Stream.Stream<string, ModelFailure> =>
    plan === undefined
      ? streamAsk(info, primary, prompt)
      : Stream.withExecutionPlan(
        Stream.unwrap(Effect.map(ActiveModel, (client) => streamAsk(info, client, prompt))),
        plan,
        { preventFallbackOnPartialStream: true }
      )

  return { generate, stream }
}
