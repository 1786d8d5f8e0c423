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
import { clockOf } from "../../runtime/internal/timing.js"
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

const noSpan: ModelSpan = { within: identity, answered: () => {}, firstChunk: () => {} }

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

/** The span's reporting side, over `span` (opened now), merging the library spans `merges` names into it. */
const reportingTo = (span: Tracer.Span, nowNanos: () => bigint, merges: (name: string) => boolean): ModelSpan & {
  readonly ending: (exit: Exit.Exit<unknown, unknown>) => void
} => {
  const startNanos = nowNanos()
  let usage: ModelUsage | undefined
  let modelId: string | undefined
  let first = false
  const merged = mergedInto(span, notMerged)
  const merging = adaptingSpans((name, _kind, parent, make) =>
    merges(name) && Option.isSome(parent) && (parent.value === span || parent.value === merged) ? merged : make()
  )
  return {
    within: (effect) => merging(Effect.withParentSpan(effect, span)),
    answered: (u, m) => {
      usage = u
      modelId = m
    },
    firstChunk: () => {
      if (first) return
      first = true
      span.attribute("gen_ai.response.time_to_first_chunk", Number(nowNanos() - startNanos) / 1e9)
    },
    ending: (exit) => {
      if (modelId !== undefined) span.attribute("gen_ai.response.model", modelId)
      if (usage?.inputTokens !== undefined) span.attribute("gen_ai.usage.input_tokens", usage.inputTokens)
      if (usage?.outputTokens !== undefined) span.attribute("gen_ai.usage.output_tokens", usage.outputTokens)
      const errorType = Exit.isFailure(exit) ? errorTypeOf(exit.cause) : undefined
      if (errorType !== undefined) span.attribute("error.type", errorType)
    }
  }
}

const clockOfFiber = (fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
  const timed = fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
  const clock = clockOf(fiber)
  return () => (timed ? clock.unsafeCurrentTimeNanos() : BigInt(0))
}

/**
 * One ask of `client` — its attempts, retries and their HTTP requests —
 * inside its GenAI client span, when spans are collected (else `use` runs
 * with a span that records nothing): named `chat {gen_ai.request.model}`,
 * kind CLIENT, with `gen_ai.operation.name`, `gen_ai.provider.name`,
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
    if (!collects(fiber)) return use(noSpan)
    return Effect.useSpan(spanName("chat", client.identity), chatOptions(purpose, client, format, false), (span) => {
      const reporting = reportingTo(span, clockOfFiber(fiber), isLanguageModelSpan)
      return Effect.onExit(reporting.within(use(reporting)), (exit) => Effect.sync(() => reporting.ending(exit)))
    })
  })

/**
 * {@link inModelSpan} for a streamed ask: the span is opened when the
 * stream starts and ends with it (`gen_ai.request.stream`,
 * `gen_ai.response.time_to_first_chunk`); `use` runs each pull of its
 * attempts `within` it.
 *
 * @since 0.1.0
 * @category utils
 */
export const streamInModelSpan = <A, E, R>(
  purpose: string,
  client: ModelClient,
  use: (span: ModelSpan) => Stream.Stream<A, E, R>
): Stream.Stream<A, E, R> =>
  // The span lives in the stream's scope: it ends, with the stream's exit, however the stream ends.
  Stream.unwrapScoped(Effect.withFiberRuntime<Stream.Stream<A, E, R>, never, Scope.Scope>((fiber) => {
    if (!collects(fiber)) return Effect.succeed(use(noSpan))
    return Effect.flatMap(
      Effect.makeSpanScoped(spanName("chat", client.identity), chatOptions(purpose, client, "text", true)),
      (span) => {
        const reporting = reportingTo(span, clockOfFiber(fiber), isLanguageModelSpan)
        // Added after the span's own finalizer, so it runs before the span ends.
        return Effect.as(
          Effect.addFinalizer((exit) => Effect.sync(() => reporting.ending(exit))),
          use(reporting)
        )
      }
    )
  }))

/**
 * `model` with each call in a GenAI client span `embeddings {model}`
 * (when spans are collected): `gen_ai.operation.name` `embeddings`,
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
  const inSpan = <A>(effect: Effect.Effect<A, AiError.AiError>): Effect.Effect<A, AiError.AiError> =>
    Effect.withFiberRuntime((fiber) => {
      if (!collects(fiber)) return effect
      return Effect.useSpan(spanName("embeddings", who), options, (span) => {
        const reporting = reportingTo(span, clockOfFiber(fiber), isEmbeddingModelSpan)
        return Effect.onExit(reporting.within(effect), (exit) => Effect.sync(() => reporting.ending(exit)))
      })
    })
  return EmbeddingModel.EmbeddingModel.of({
    embed: (input) => inSpan(model.embed(input)),
    embedMany: (inputs, options) => inSpan(model.embedMany(inputs, options))
  })
}
