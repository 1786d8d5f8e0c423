/**
 * Model calls as OpenTelemetry's GenAI semantic conventions want them on
 * spans (issue 19; semantic-conventions v1.41.1, `gen-ai-spans.md`): one
 * CLIENT span per logical call, named `{gen_ai.operation.name}
 * {gen_ai.request.model}`, covering its retries.
 *
 * - An ask of a language model ({@link inModelSpan}, {@link streamInModelSpan}):
 *   `chat {model}`.
 * - An embeddings call ({@link embeddingsInSpans}): `embeddings {model}`.
 *
 * `@effect/ai` opens a span of its own around each call (`LanguageModel.*`,
 * `EmbeddingModel.*`, INTERNAL, its provider annotating it with the
 * deprecated `gen_ai.system`); it is merged into ours — one span per call,
 * whose children are its HTTP requests — so the provider's annotations
 * (response id, finish reasons, request settings) land on the GenAI span,
 * less `gen_ai.system` and `LanguageModel`'s call options. Spans are made
 * only while a tracer collects them (runtime/internal/spans.ts).
 *
 * Each such operation is also one sample of the GenAI metric
 * `gen_ai.client.operation.duration` (seconds; `PipelineMetrics.operationDuration`),
 * spans or not: the span's `gen_ai.operation.name`, provider, requested and
 * response model, server, `pipeline.inference.purpose` (asks) and
 * `error.type`. An interrupted operation has a span but no sample.
 *
 * `error.type`: `timeout` (the model timeout), the HTTP status of an error
 * response (`429`, `500`), else the failure's tag (`HttpRequestError` for a
 * transport failure, `MalformedOutput`, `ModelOutputTooLarge`, …); `_OTHER`
 * for a defect; none for an interruption.
 */
import { EmbeddingModel } from "@effect/ai"
import type { AiError } from "@effect/ai"
import { Cause, Effect, Exit, type Fiber, FiberRef, Option, type Scope, Stream, type Tracer } from "effect"
import { identity } from "effect/Function"
import type { ModelUsage } from "../../domain/ModelCall.js"
import { adaptingSpans, collects, mergedInto } from "../../runtime/internal/spans.js"
import { clockOf, elapsedMillis } from "../../runtime/internal/timing.js"
import { unsafeRecordOperationDuration } from "../../runtime/PipelineMetrics.js"
import type { Format, ModelClient, ModelIdentity } from "./modelClient.js"

/**
 * The span of one ask of one model, as the calls under it report to it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelSpan {
  /** Runs `effect` under the span (a stream's pulls: a `Stream` cannot carry the span itself). */
  readonly within: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** What the model answered: the latest attempt's usage and model id win. */
  readonly answered: (usage: ModelUsage | undefined, modelId: string | undefined) => void
  /** The first streamed text arrived (`gen_ai.response.time_to_first_chunk`). */
  readonly firstChunk: () => void
}

/**
 * Attributes of a model library's own call span that the GenAI span does
 * not take: the deprecated `gen_ai.system` (the span has
 * `gen_ai.provider.name`) and `LanguageModel`'s call options.
 */
const notMerged: ReadonlySet<string> = new Set(["gen_ai.system", "concurrency", "toolChoice", "objectName"])

/** `@effect/ai`'s language model call spans (and the direct path's, named the same). */
const isLanguageModelSpan = (name: string): boolean => name.startsWith("LanguageModel.")

/** `@effect/ai`'s embedding model call spans. */
const isEmbeddingModelSpan = (name: string): boolean => name.startsWith("EmbeddingModel.")

type Operation = "chat" | "embeddings"

/** `{gen_ai.operation.name} {gen_ai.request.model}`, or the operation alone when the model is not known. */
const spanName = (operation: Operation, who: ModelIdentity.Service | undefined): string =>
  who === undefined ? operation : `${operation} ${who.model}`

/** The attributes known when the span starts (the conventions' sampling-relevant ones among them). */
const spanOptions = (
  operation: Operation,
  who: ModelIdentity.Service | undefined,
  attributes: Record<string, unknown>
): Tracer.SpanOptions => {
  const all: Record<string, unknown> = { "gen_ai.operation.name": operation }
  if (who !== undefined) {
    all["gen_ai.provider.name"] = who.provider
    all["gen_ai.request.model"] = who.model
    if (who.serverAddress !== undefined) all["server.address"] = who.serverAddress
    if (who.serverPort !== undefined) all["server.port"] = who.serverPort
  }
  return { kind: "client", captureStackTrace: false, attributes: { ...all, ...attributes } }
}

const chatOptions = (purpose: string, client: ModelClient, format: Format, streamed: boolean): Tracer.SpanOptions =>
  spanOptions("chat", client.identity, {
    "gen_ai.output.type": format === "plan" ? "json" : "text",
    "pipeline.inference.purpose": purpose,
    ...(streamed ? { "gen_ai.request.stream": true } : {})
  })

const isTagged = (u: unknown): u is { readonly _tag: string } =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string"

/** `error.type` of a call that failed (see the module comment). */
const errorTypeOf = (cause: Cause.Cause<unknown>): string | undefined => {
  if (Cause.isInterruptedOnly(cause)) return undefined
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure) || !isTagged(failure.value)) return "_OTHER"
  const error: { readonly _tag: string; readonly reason?: unknown; readonly response?: { readonly status?: unknown } } =
    failure.value
  if (error._tag === "ModelTimeout") return "timeout"
  if (
    error._tag === "HttpResponseError" && error.reason === "StatusCode" && typeof error.response?.status === "number"
  ) {
    return String(error.response.status)
  }
  return error._tag
}

/** Span time (nanoseconds), or 0 when the fiber's tracer timing is off. */
const clockOfFiber = (fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
  const timed = fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
  const clock = clockOf(fiber)
  return () => (timed ? clock.unsafeCurrentTimeNanos() : BigInt(0))
}

/** What an operation's duration sample says besides its outcome. */
interface Measured {
  readonly operation: Operation
  readonly who: ModelIdentity.Service | undefined
  readonly purpose?: string | undefined
}

/** An operation's reporting side: to its span, when one is made, and to its duration sample, always. */
interface Reporting extends ModelSpan {
  /** Its outcome: the span's closing attributes, and one `gen_ai.client.operation.duration` sample. */
  readonly ending: (exit: Exit.Exit<unknown, unknown>) => void
}

/** One `gen_ai.client.operation.duration` sample of an operation that ended. */
const recordDuration = (
  measured: Measured,
  seconds: number,
  modelId: string | undefined,
  errorType: string | undefined
) =>
  unsafeRecordOperationDuration({
    operation: measured.operation,
    purpose: measured.purpose,
    provider: measured.who?.provider,
    model: measured.who?.model,
    responseModel: modelId,
    serverAddress: measured.who?.serverAddress,
    serverPort: measured.who?.serverPort,
    seconds,
    errorType
  })

/**
 * An operation's reporting, started now on `fiber`: the span's side over
 * `span` (merging the library spans `merges` names into it), when there is
 * one; its duration, measured on the fiber's clock, either way.
 */
const reportingTo = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  measured: Measured,
  span: Tracer.Span | undefined,
  merges: (name: string) => boolean
): Reporting => {
  const clock = clockOf(fiber)
  const startMillis = elapsedMillis(clock)
  let usage: ModelUsage | undefined
  let modelId: string | undefined
  const answered = (u: ModelUsage | undefined, m: string | undefined) => {
    usage = u
    modelId = m
  }
  const ending = (exit: Exit.Exit<unknown, unknown>) => {
    const errorType = Exit.isFailure(exit) ? errorTypeOf(exit.cause) : undefined
    if (span !== undefined) {
      if (modelId !== undefined) span.attribute("gen_ai.response.model", modelId)
      if (usage?.inputTokens !== undefined) span.attribute("gen_ai.usage.input_tokens", usage.inputTokens)
      if (usage?.outputTokens !== undefined) span.attribute("gen_ai.usage.output_tokens", usage.outputTokens)
      if (errorType !== undefined) span.attribute("error.type", errorType)
    }
    // An interrupted operation neither succeeded nor failed: no sample.
    if (Exit.isSuccess(exit) || !Cause.isInterruptedOnly(exit.cause)) {
      recordDuration(measured, (elapsedMillis(clock) - startMillis) / 1_000, modelId, errorType)
    }
  }
  if (span === undefined) return { within: identity, answered, firstChunk: () => {}, ending }
  const nowNanos = clockOfFiber(fiber)
  const startNanos = nowNanos()
  let first = false
  const merged = mergedInto(span, notMerged)
  const merging = adaptingSpans((name, _kind, parent, make) =>
    merges(name) && Option.isSome(parent) && (parent.value === span || parent.value === merged) ? merged : make()
  )
  return {
    within: (effect) => merging(Effect.withParentSpan(effect, span)),
    answered,
    firstChunk: () => {
      if (first) return
      first = true
      span.attribute("gen_ai.response.time_to_first_chunk", Number(nowNanos() - startNanos) / 1e9)
    },
    ending
  }
}

/** `effect`, reported to `reporting`: within its span (if any), its outcome reported when it ends. */
const reported = <A, E, R>(reporting: Reporting, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.onExit(reporting.within(effect), (exit) => Effect.sync(() => reporting.ending(exit)))

/**
 * One ask of `client` — its attempts, retries and their HTTP requests —
 * measured as one `gen_ai.client.operation.duration` sample, and inside
 * its GenAI client span when spans are collected (else `use` runs with a
 * span that only keeps what the model answered, for the sample): named
 * `chat {gen_ai.request.model}`, kind CLIENT, with `gen_ai.operation.name`, `gen_ai.provider.name`,
 * `gen_ai.request.model`, `server.address` / `server.port` (as the model's
 * {@link ModelIdentity} gives them), `gen_ai.output.type`,
 * `pipeline.inference.purpose`; when it ends `gen_ai.response.model`,
 * `gen_ai.usage.*` and, on failure, `error.type`. `@effect/ai`'s own
 * `LanguageModel.*` call span is merged into it (see the module comment).
 *
 * @since 0.1.0
 * @category utils
 */
export const inModelSpan = <A, E, R>(
  purpose: string,
  client: ModelClient,
  format: Format,
  use: (span: ModelSpan) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const measured: Measured = { operation: "chat", who: client.identity, purpose }
    if (!collects(fiber)) {
      const reporting = reportingTo(fiber, measured, undefined, isLanguageModelSpan)
      // No span to end: an interrupted ask takes no sample, so its end need
      // not be guarded against interruption (`Effect.onExit` would be).
      return Effect.flatMap(Effect.exit(use(reporting)), (exit) => {
        reporting.ending(exit)
        return exit
      })
    }
    return Effect.useSpan(spanName("chat", client.identity), chatOptions(purpose, client, format, false), (span) => {
      const reporting = reportingTo(fiber, measured, span, isLanguageModelSpan)
      return reported(reporting, use(reporting))
    })
  })

/**
 * {@link inModelSpan} for a streamed ask: the span is opened, and the
 * duration measured, from when the stream starts until it ends
 * (`gen_ai.request.stream`, `gen_ai.response.time_to_first_chunk`); `use`
 * runs each pull of its attempts `within` it.
 *
 * @since 0.1.0
 * @category utils
 */
export const streamInModelSpan = <A, E, R>(
  purpose: string,
  client: ModelClient,
  use: (span: ModelSpan) => Stream.Stream<A, E, R>
): Stream.Stream<A, E, R> =>
  // The span and the measure live in the stream's scope: they end, with the stream's exit, however the stream ends.
  Stream.unwrapScoped(Effect.withFiberRuntime<Stream.Stream<A, E, R>, never, Scope.Scope>((fiber) => {
    const measured: Measured = { operation: "chat", who: client.identity, purpose }
    const opened = collects(fiber)
      ? Effect.makeSpanScoped(spanName("chat", client.identity), chatOptions(purpose, client, "text", true))
      : Effect.succeed(undefined)
    return Effect.flatMap(opened, (span) => {
      const reporting = reportingTo(fiber, measured, span, isLanguageModelSpan)
      // Added after the span's own finalizer, so it runs before the span ends.
      return Effect.as(
        Effect.addFinalizer((exit) => Effect.sync(() => reporting.ending(exit))),
        use(reporting)
      )
    })
  }))

/**
 * `model` with each call one `gen_ai.client.operation.duration` sample
 * (`gen_ai.operation.name` `embeddings`) and, when spans are collected, in
 * a GenAI client span `embeddings {model}`: `gen_ai.operation.name` `embeddings`,
 * `gen_ai.provider.name`, `gen_ai.request.model`, `server.*`,
 * `gen_ai.embeddings.dimension.count` when the model was asked for a
 * dimension count; `error.type` on failure. `@effect/ai`'s
 * `EmbeddingModel.*` span is merged into it. (`@effect/ai`'s embedding
 * model reports no usage and no response model.)
 *
 * @since 0.1.0
 * @category constructors
 */
export const embeddingsInSpans = (
  model: EmbeddingModel.Service,
  who: ModelIdentity.Service,
  dimensions?: number | undefined
): EmbeddingModel.Service => {
  const options = spanOptions(
    "embeddings",
    who,
    dimensions === undefined ? {} : { "gen_ai.embeddings.dimension.count": dimensions }
  )
  const measured: Measured = { operation: "embeddings", who }
  const inSpan = <A>(effect: Effect.Effect<A, AiError.AiError>): Effect.Effect<A, AiError.AiError> =>
    Effect.withFiberRuntime((fiber) => {
      if (!collects(fiber)) return reported(reportingTo(fiber, measured, undefined, isEmbeddingModelSpan), effect)
      return Effect.useSpan(
        spanName("embeddings", who),
        options,
        (span) => reported(reportingTo(fiber, measured, span, isEmbeddingModelSpan), effect)
      )
    })
  return EmbeddingModel.EmbeddingModel.of({
    embed: (input) => inSpan(model.embed(input)),
    embedMany: (inputs, options) => inSpan(model.embedMany(inputs, options))
  })
}
