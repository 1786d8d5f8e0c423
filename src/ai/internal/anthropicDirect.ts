/**
 * Anthropic's direct path (issue 20: no model gets a faster path than a
 * real provider does): the pipeline's {@link DirectModel} over the same
 * `AnthropicClient` `@effect/ai-anthropic`'s `LanguageModel` calls — the
 * guarded client of `Anthropic.layerClient`, so the provider boundary and
 * the shared HTTP conventions are the same on both paths.
 *
 * It sends what `AnthropicLanguageModel` sends for the same call (the same
 * body, key for key and in the same order; the same `POST
 * /v1/messages?beta=true`, or `/v1/messages` with `stream: true`):
 * `max_tokens` 4096 unless configured, the model, the configuration (the
 * Layer's, then an `AnthropicLanguageModel.withConfigOverride` in force at
 * the call), the prompt as one user message of one text block, and for a
 * plan the forced tool call: one tool, `routing_plan`, whose `input_schema`
 * is the plan's wire JSON Schema (`PlanRequest`), and `tool_choice: { type:
 * "tool", name: "routing_plan", disable_parallel_tool_use: true }`.
 *
 * It reads what the pipeline reads: the text blocks (a plan: the tool
 * calls' inputs, as JSON text), the usage and the model id — without
 * `LanguageModel.make`'s per-call Schema construction and decoding of the
 * parts (see docs/performance). A response `LanguageModel` could not
 * decode fails as it fails there: `MalformedOutput` from `LanguageModel`.
 *
 * Telemetry is the `LanguageModel` path's: the call opens the span
 * `LanguageModel.generateText` / `generateObject` / `streamText` (merged
 * into the pipeline's `chat {model}` span, genAiSpans.ts) with the GenAI
 * request and response attributes `@effect/ai-anthropic` adds. When an
 * `@effect/ai` span transformer is installed, calls go through the
 * `LanguageModel` (which applies it).
 */
import { AiError, LanguageModel, Telemetry, Tool } from "@effect/ai"
import { AnthropicClient, AnthropicLanguageModel, AnthropicTool, type Generated } from "@effect/ai-anthropic"
import { Array as Arr, Context, Effect, type Fiber, Option, Predicate, Stream, type Tracer } from "effect"
import type { ModelResponse } from "../../domain/ModelCall.js"
import { collects, inertSpan } from "../../runtime/internal/spans.js"
import { clockOf } from "../../runtime/internal/timing.js"
import { type DirectModel, PlanRequest, responseOfText, usageOf } from "../ModelProvider.js"
import { partsOfStream, undecodable } from "./anthropicDirectStream.js"

/**
 * The model and the configuration `AnthropicLanguageModel.layer` is given.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly model: string
  readonly config?: Omit<AnthropicLanguageModel.Config.Service, "model"> | undefined
}

type Format = "text" | "plan"

/**
 * A Messages API request body (what `AnthropicClient.createMessage` posts).
 *
 * @since 0.1.0
 * @category models
 */
export type MessageRequest = typeof Generated.BetaCreateMessageParams.Encoded

const objectName = "routing_plan"

/** The plan's tool, as `AnthropicLanguageModel` describes a JSON response format (built once). */
const planTools: ReadonlyArray<typeof Generated.BetaTool.Encoded> = [{
  name: objectName,
  description: Tool.getDescriptionFromSchemaAst(PlanRequest.ast) ?? "Respond with a JSON object",
  // The plan's JSON Schema is an object schema (`BetaInputSchema`'s `type: "object"`).
  input_schema: Tool.getJsonSchemaFromSchemaAst(PlanRequest.ast) as typeof Generated.BetaInputSchema.Encoded
}]
const planChoice = { type: "tool", name: objectName, disable_parallel_tool_use: true } as const

/**
 * The body `AnthropicLanguageModel` builds for a text prompt (its
 * `makeRequest`, the same spreads in the same order): the configuration
 * `config`, the prompt as one user message, and for a plan the forced tool.
 *
 * @since 0.1.0
 * @category utils
 */
export const requestOf = (
  prompt: string,
  format: Format,
  options: Options,
  override: AnthropicLanguageModel.Config.Service | undefined
): MessageRequest => {
  const config = { model: options.model, ...options.config, ...override }
  return {
    max_tokens: 4096,
    ...config,
    system: undefined,
    messages: [{ role: "user", content: [{ type: "text", text: prompt, cache_control: undefined }] }],
    tools: format === "plan" ? planTools : undefined,
    tool_choice: format === "plan" ? planChoice : undefined
  }
}

// The attributes `LanguageModel.make` puts on its spans, kept identical.
const planSpan: Tracer.SpanOptions = {
  captureStackTrace: false,
  attributes: { objectName, concurrency: undefined, toolChoice: undefined }
}
const textSpan: Tracer.SpanOptions = {
  captureStackTrace: false,
  attributes: { concurrency: undefined, toolChoice: undefined }
}

/** `@effect/ai-anthropic`'s request annotations (its `annotateRequest`). */
const annotateRequest = (span: Tracer.Span, request: MessageRequest): void =>
  Telemetry.addGenAIAnnotations(span, {
    system: "anthropic",
    operation: { name: "chat" },
    request: {
      model: request.model,
      temperature: request.temperature,
      topK: request.top_k,
      topP: request.top_p,
      maxTokens: request.max_tokens,
      stopSequences: Arr.ensure(request.stop_sequences).filter(Predicate.isNotNullable)
    }
  })

/** `@effect/ai-anthropic`'s response annotations (its `annotateResponse`). */
const annotateResponse = (span: Tracer.Span, response: Generated.BetaMessage): void =>
  Telemetry.addGenAIAnnotations(span, {
    response: {
      id: response.id,
      model: response.model,
      finishReasons: response.stop_reason ? [response.stop_reason] : undefined
    },
    usage: { inputTokens: response.usage.input_tokens, outputTokens: response.usage.output_tokens }
  })

const noObject = () =>
  new AiError.MalformedOutput({
    module: "LanguageModel",
    method: "generateObject",
    description: "No object was generated by the large language model"
  })

/**
 * What `LanguageModel` answers for `message`: the text of its text blocks
 * (a plan: the JSON text of its tool calls' inputs), its usage and model
 * id; or the failure `LanguageModel` reports for it.
 *
 * @since 0.1.0
 * @category utils
 */
export const responseOf = (
  message: Generated.BetaMessage,
  format: Format
): Effect.Effect<ModelResponse, AiError.AiError> => {
  const texts: Array<string> = []
  for (const block of message.content) {
    switch (block.type) {
      case "text": {
        if (format === "text") texts.push(block.text)
        break
      }
      case "tool_use": {
        if (format === "text") return Effect.fail(undecodable("generateText", "tool-call"))
        texts.push(JSON.stringify(block.input))
        break
      }
      case "server_tool_use": {
        if (AnthropicTool.getProviderDefinedToolName(block.name) !== undefined) {
          return Effect.fail(undecodable("generateText", "tool-call"))
        }
        break
      }
      case "bash_code_execution_tool_result":
      case "code_execution_tool_result":
      case "text_editor_code_execution_tool_result":
      case "web_search_tool_result":
        return Effect.fail(undecodable("generateText", "tool-result"))
    }
  }
  if (format === "plan" && texts.length === 0) return Effect.fail(noObject())
  const { input_tokens, output_tokens } = message.usage
  return Effect.succeed({
    text: texts.length === 1 ? texts[0]! : texts.join(""),
    usage: usageOf({
      inputTokens: input_tokens,
      outputTokens: output_tokens,
      totalTokens: input_tokens + output_tokens
    }),
    modelId: message.model
  })
}

/** The span a call reports to: `LanguageModel`'s, when spans are collected. */
const withCallSpan = <A, E, R>(
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  name: string,
  options: Tracer.SpanOptions,
  f: (span: Tracer.Span) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  collects(fiber) ? Effect.useSpan(name, options, (span) => Effect.withParentSpan(f(span), span)) : f(inertSpan)

const noBeta = { "anthropic-beta": undefined }

/**
 * The direct functions of `AnthropicLanguageModel.layer(options)`, over the
 * `AnthropicClient` it uses; its `LanguageModel` (in the context) answers
 * instead while an `@effect/ai` span transformer is installed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<DirectModel.Service, never, AnthropicClient.AnthropicClient | LanguageModel.LanguageModel> =>
  Effect.gen(function*() {
    const client = yield* AnthropicClient.AnthropicClient
    const languageModel = yield* LanguageModel.LanguageModel
    // `LanguageModel.make` looks for a span transformer at the call, then where it was built.
    const atMake = yield* Effect.serviceOption(Telemetry.CurrentSpanTransformer)
    const transforms = (context: Context.Context<never>) =>
      Option.isSome(atMake) || Option.isSome(Context.getOption(context, Telemetry.CurrentSpanTransformer))
    const overrideIn = (context: Context.Context<never>) =>
      Option.getOrUndefined(Context.getOption(context, AnthropicLanguageModel.Config))

    const generate = (prompt: string, format: Format): Effect.Effect<ModelResponse, AiError.AiError> =>
      Effect.withFiberRuntime((fiber) => {
        const context = fiber.currentContext
        if (transforms(context)) {
          return format === "plan"
            ? Effect.map(languageModel.generateObject({ prompt, schema: PlanRequest, objectName }), responseOfText)
            : Effect.map(languageModel.generateText({ prompt }), responseOfText)
        }
        const payload = requestOf(prompt, format, options, overrideIn(context))
        return withCallSpan(
          fiber,
          format === "plan" ? "LanguageModel.generateObject" : "LanguageModel.generateText",
          format === "plan" ? planSpan : textSpan,
          (span) => {
            if (span !== inertSpan) annotateRequest(span, payload)
            return Effect.flatMap(client.createMessage({ params: noBeta, payload }), (message) => {
              if (span !== inertSpan) annotateResponse(span, message)
              return responseOf(message, format)
            })
          }
        )
      })

    const streamText: NonNullable<DirectModel.Service["streamText"]> = (prompt) =>
      Stream.unwrap(Effect.withFiberRuntime((fiber) => {
        const context = fiber.currentContext
        if (transforms(context)) return Effect.succeed(languageModel.streamText({ prompt }))
        const payload = requestOf(prompt, "text", options, overrideIn(context))
        const partsIn = (span: Tracer.Span) =>
          partsOfStream(client.createMessageStream({ params: noBeta, payload }), span, clockOf(fiber))
        if (!collects(fiber)) return Effect.succeed(partsIn(inertSpan))
        // The span lives as long as the stream (a scope only when there is a span: it costs).
        return Effect.succeed(Stream.unwrapScoped(Effect.map(
          Effect.makeSpanScoped("LanguageModel.streamText", textSpan),
          (span) => {
            annotateRequest(span, payload)
            return partsIn(span)
          }
        )))
      }))

    return {
      generateText: (prompt) => generate(prompt, "text"),
      generatePlan: (prompt) => generate(prompt, "plan"),
      streamText
    }
  })
