/**
 * A model provider's functions served two ways (DESIGN §2, the model seam):
 *
 * - as `@effect/ai`'s `LanguageModel` service (what user code calls), built
 *   by `LanguageModel.make` from the same functions;
 * - as {@link DirectModel}, the narrow interface the pipeline's `Inference`
 *   seam calls: a prompt in, the model's text out.
 *
 * Why two: `LanguageModel.make` builds its response Schemas anew on every
 * `generateText` / `generateObject` call (a new AST, so Schema's parser
 * cache never hits) — about 280 + 90 µs per request, as much as a whole
 * request of the fastest peer framework. The direct path calls the same
 * provider function with the same `ProviderOptions`, reads the text parts
 * of its response and its usage (checking the shape of what it reads, and
 * nothing it does not), and opens the same `LanguageModel.*` span, with the
 * GenAI usage attributes, when spans are collected. Plans are decoded by the
 * pipeline, from the text, on either path. A `LanguageModel` Layer from
 * elsewhere (any `@effect/ai` provider) still works: `Inference` then calls
 * it through the `LanguageModel` service.
 *
 * The `LanguageModel` service a provider builds carries its direct
 * functions ({@link withDirect}; {@link make} attaches them), so a model
 * provided as `LanguageModel` alone still gets the direct path
 * ({@link directOf}). A provider on a library's `LanguageModel` (OpenAI,
 * Anthropic) adds its own direct functions with {@link layerWithDirect}:
 * no model gets a faster path than a real provider does.
 *
 * @since 0.1.0
 */
import { AiError, IdGenerator, LanguageModel, Prompt, type Response, Telemetry } from "@effect/ai"
import { Context, Effect, type Fiber, Layer, Option, Schema, type Stream, type Tracer } from "effect"
import { wireJsonSchema } from "../domain/internal/planWire.js"
import type { ModelResponse, ModelUsage } from "../domain/ModelCall.js"
import { inertSpan, useSpan } from "../runtime/internal/spans.js"
import * as parts from "./internal/providerParts.js"
import { streamDirect } from "./internal/providerStream.js"
import * as Unprovided from "./internal/unprovided.js"

export type {
  /**
   * @since 0.1.0
   * @category models
   */
  ModelResponse
} from "../domain/ModelCall.js"

type Format = parts.Format

/**
 * The narrow model interface the pipeline calls.
 *
 * @since 0.1.0
 * @category services
 */
export class DirectModel extends Context.Tag("effect-agent-pipeline/DirectModel")<DirectModel, DirectModel.Service>() {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace DirectModel {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** A buffered answer: the text of the response's text parts, joined. */
    readonly generateText: (prompt: string) => Effect.Effect<ModelResponse, AiError.AiError>
    /**
     * The routing plan as structured output: the response's text, not yet
     * decoded (the pipeline decodes it, and re-asks when it is not a plan).
     */
    readonly generatePlan: (prompt: string) => Effect.Effect<ModelResponse, AiError.AiError>
    /**
     * A streamed answer, as `LanguageModel.streamText({ prompt })` streams
     * it: decoded parts (`Response.makePart`); the pipeline reads
     * `text-delta` (`delta`), `finish` (`usage`) and `response-metadata`
     * (`modelId`, an `Option`). Optional: without it, streams go through
     * `LanguageModel`.
     */
    readonly streamText?: ((prompt: string) => Stream.Stream<Response.StreamPart<{}>, AiError.AiError>) | undefined
  }
}

/** Where a `LanguageModel` service keeps its direct functions (not enumerable: a spread copy drops them). */
const directKey: unique symbol = Symbol("effect-agent-pipeline/ModelProvider/direct")

/**
 * `service` carrying `direct`, the same provider's narrow functions: a new
 * `LanguageModel` service (its methods `service`'s own) that the pipeline
 * calls through `direct` ({@link directOf}) when no `DirectModel` is
 * provided. `direct` must answer as `service` does for a text prompt.
 *
 * The functions are kept under a private, non-enumerable key: a service
 * made from this one by spreading it (`{ ...service, generateText: … }`, a
 * wrapper changing what the model does) does not carry them, so the
 * pipeline calls that wrapper through `LanguageModel`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LanguageModel } from "@effect/ai"
 * import { ModelProvider } from "effect-agent-pipeline"
 *
 * declare const service: LanguageModel.Service
 * declare const direct: ModelProvider.DirectModel.Service
 * const served = ModelProvider.withDirect(service, direct)
 * // ModelProvider.directOf(served) === direct
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const withDirect = (service: LanguageModel.Service, direct: DirectModel.Service): LanguageModel.Service => {
  const served: LanguageModel.Service = { ...service }
  Object.defineProperty(served, directKey, { value: direct, enumerable: false })
  return served
}

/**
 * The direct functions a `LanguageModel` service carries ({@link withDirect}),
 * if any.
 *
 * @since 0.1.0
 * @category utils
 */
export const directOf = (service: LanguageModel.Service): DirectModel.Service | undefined => {
  const direct: unknown = (service as { readonly [directKey]?: unknown })[directKey]
  return direct === undefined ? undefined : direct as DirectModel.Service
}

/**
 * A provider Layer from a library's `LanguageModel` Layer and the same
 * provider's direct functions: it provides that `LanguageModel` (its
 * methods unchanged, carrying the direct functions, {@link withDirect}) and
 * {@link DirectModel}. `direct` is built once, with the `LanguageModel` it
 * is added to in its context (e.g. to fall back on it when `@effect/ai`'s
 * span transformer is installed) and the rest of its requirements from
 * outside (e.g. the provider's client, which `languageModel` shares: provide
 * it to the result, once).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { LanguageModel } from "@effect/ai"
 * import { ModelProvider } from "effect-agent-pipeline"
 *
 * declare const library: Layer.Layer<LanguageModel.LanguageModel>
 * declare const direct: Effect.Effect<ModelProvider.DirectModel.Service>
 * const provider = ModelProvider.layerWithDirect(library, direct)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithDirect = <E, R, E2, R2>(
  languageModel: Layer.Layer<LanguageModel.LanguageModel, E, R>,
  direct: Effect.Effect<DirectModel.Service, E2, R2>
): Layer.Layer<LanguageModel.LanguageModel | DirectModel, E | E2, R | Exclude<R2, LanguageModel.LanguageModel>> =>
  Layer.provide(
    Layer.effectContext(
      Effect.flatMap(
        LanguageModel.LanguageModel,
        (service) =>
          Effect.map(
            direct,
            (functions) =>
              Context.make(LanguageModel.LanguageModel, withDirect(service, functions)).pipe(
                Context.add(DirectModel, functions)
              )
          )
      )
    ),
    languageModel
  )

/**
 * Both faces of one provider.
 *
 * @since 0.1.0
 * @category models
 */
export interface Provider {
  readonly languageModel: LanguageModel.Service
  readonly direct: DirectModel.Service
}

/**
 * What a plan call asks for: a JSON object, described to the model by the
 * plan's strict wire JSON Schema (`PlanWire`, which OpenAI's strict mode
 * accepts). The pipeline decodes the plan itself — the wire form or a plain
 * `RoutingPlan` — so output that is JSON but not a plan reaches the re-ask
 * with its text, whichever path the model took.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlanRequest = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  jsonSchema: { ...wireJsonSchema, description: "A routing plan: the tool calls (steps) that answer the request" }
})

const planFormat = { type: "json", objectName: "routing_plan", schema: PlanRequest } as const
const textFormat = { type: "text" } as const
// The attributes `LanguageModel.make` puts on its spans, kept identical.
const planSpan = {
  captureStackTrace: false,
  attributes: { objectName: "routing_plan", concurrency: undefined, toolChoice: undefined }
}
const textSpan = { captureStackTrace: false, attributes: { concurrency: undefined, toolChoice: undefined } }

/**
 * Token counts from a finish part's `usage` (whatever a provider written in
 * JavaScript put there; counts that are not integers are left out).
 *
 * @since 0.1.0
 * @category utils
 */
export const usageOf: (usage: unknown) => ModelUsage | undefined = parts.usageOf

/**
 * Serves a provider's functions as both `LanguageModel` and
 * {@link DirectModel} (buffered and streamed: the pipeline calls them
 * without `LanguageModel`'s per-call Schema work, with the same spans,
 * parts and errors).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ModelProvider } from "effect-agent-pipeline"
 *
 * const provider = ModelProvider.make({
 *   generateText: () => Effect.succeed([{ type: "text", text: "hello" }]),
 *   streamText: () => Stream.empty
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (params: LanguageModel.ConstructorParams): Effect.Effect<Provider> =>
  Effect.gen(function*() {
    const languageModel = yield* LanguageModel.make(params)
    const idGenerator = Option.getOrElse(yield* Effect.serviceOption(IdGenerator.IdGenerator), () =>
      IdGenerator.defaultIdGenerator)
    const generate = (
      prompt: string,
      format: Format
    ): Effect.Effect<ModelResponse, AiError.AiError, IdGenerator.IdGenerator> =>
      useSpan(
        format === "plan" ? "LanguageModel.generateObject" : "LanguageModel.generateText",
        format === "plan" ? planSpan : textSpan,
        (span) =>
          params.generateText({
            prompt: Prompt.make(prompt),
            tools: [],
            toolChoice: "none",
            responseFormat: format === "plan" ? planFormat : textFormat,
            span
          }).pipe(
            Effect.flatMap((response) =>
              Array.isArray(response)
                ? parts.responseOf(response, format)
                : Effect.fail(
                  parts.malformed(
                    format === "plan" ? "generateObject" : "generateText",
                    "the response is not a list of parts"
                  )
                )
            ),
            (answered) => (span === inertSpan ? answered : Effect.tap(answered, (response) =>
              annotate(span, response)))
          )
      )
    // A span transformer (`@effect/ai`'s telemetry hook) is applied by the
    // LanguageModel path: when one is installed, calls take that path.
    const atMake = Option.isSome(yield* Effect.serviceOption(Telemetry.CurrentSpanTransformer))
    // Read from the calling fiber's context (one step, not a service lookup's three).
    const transformed = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
      atMake || Option.isSome(Context.getOption(fiber.currentContext, Telemetry.CurrentSpanTransformer))
    const generateText = (prompt: string) =>
      Effect.withFiberRuntime<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>((fiber) =>
        transformed(fiber)
          ? Effect.map(languageModel.generateText({ prompt }), responseOfText)
          : generate(prompt, "text")
      )
    const generatePlan = (prompt: string) =>
      Effect.withFiberRuntime<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>((fiber) =>
        transformed(fiber)
          ? Effect.map(
            languageModel.generateObject({ prompt, schema: PlanRequest, objectName: "routing_plan" }),
            responseOfText
          )
          : generate(prompt, "plan")
      )
    // The provider's functions run with an IdGenerator, as LanguageModel.make's do
    // (the pipeline's model calls start their fiber with it: unprovided.ts).
    const direct = Unprovided.register<DirectModel.Service>({
      generateText: (prompt) => Effect.provideService(generateText(prompt), IdGenerator.IdGenerator, idGenerator),
      generatePlan: (prompt) => Effect.provideService(generatePlan(prompt), IdGenerator.IdGenerator, idGenerator),
      streamText: streamDirect(params, languageModel, idGenerator, transformed)
    }, { services: Context.make(IdGenerator.IdGenerator, idGenerator), generateText, generatePlan })
    return { languageModel: withDirect(languageModel, direct), direct }
  })

/**
 * A `LanguageModel` response as a {@link ModelResponse}.
 *
 * @since 0.1.0
 * @category utils
 */
export const responseOfText = (
  response: { readonly text: string; readonly usage: Response.Usage; readonly content: ReadonlyArray<Response.AnyPart> }
): ModelResponse => {
  let modelId: string | undefined
  for (const part of response.content) {
    if (part.type === "response-metadata") modelId = Option.getOrUndefined(part.modelId)
  }
  return { text: response.text, usage: usageOf(response.usage), modelId }
}

/** GenAI attributes on the call's span (what a provider's own client adds on the LanguageModel path). */
const annotate = (span: Tracer.Span, response: ModelResponse) =>
  Effect.sync(() => {
    Telemetry.addGenAIAnnotations(span, {
      response: { model: response.modelId },
      usage: { inputTokens: response.usage?.inputTokens, outputTokens: response.usage?.outputTokens }
    })
  })

/**
 * The provider as a Layer of both services.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, R>(
  provider: Effect.Effect<Provider, E, R>
): Layer.Layer<LanguageModel.LanguageModel | DirectModel, E, R> =>
  Layer.effectContext(
    Effect.map(provider, ({ direct, languageModel }) =>
      Context.make(
        LanguageModel.LanguageModel,
        directOf(languageModel) === direct ? languageModel : withDirect(languageModel, direct)
      ).pipe(Context.add(DirectModel, direct)))
  )
