/**
 * The request side of OpenAI's direct path (openAiDirect.ts): the body
 * `OpenAiLanguageModel` would send for a one-text-part user prompt and no
 * tools, its span attributes, and the settings a call runs with.
 */
import { Telemetry, Tool } from "@effect/ai"
import { type Generated, OpenAiLanguageModel, OpenAiTelemetry } from "@effect/ai-openai"
import type { Tracer } from "effect"
import { inertSpan } from "../../runtime/internal/spans.js"
import { PlanRequest, usageOf } from "../ModelProvider.js"
import type { Format } from "./modelClient.js"

/**
 * The layer's model and request settings (`OpenAi.Options`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly model: string
  readonly config?: Omit<OpenAiLanguageModel.Config.Service, "model"> | undefined
}

/**
 * A `/responses` request body.
 *
 * @since 0.1.0
 * @category models
 */
export type Request = typeof Generated.CreateResponse.Encoded

type Config = OpenAiLanguageModel.Config.Service

const textFormat = { type: "text" } as const

/** The plan's response format as `OpenAiLanguageModel` derives it from `PlanRequest` (once, not per call). */
const planFormatOf = (() => {
  let strict: typeof Generated.TextResponseFormatConfiguration.Encoded | undefined
  let lax: typeof Generated.TextResponseFormatConfiguration.Encoded | undefined
  const make = (isStrict: boolean): typeof Generated.TextResponseFormatConfiguration.Encoded => ({
    type: "json_schema",
    name: "routing_plan",
    description: Tool.getDescriptionFromSchemaAst(PlanRequest.ast) ?? "Response with a JSON object",
    schema: Tool.getJsonSchemaFromSchemaAst(PlanRequest.ast) as any,
    strict: isStrict
  })
  return (isStrict: boolean) => isStrict ? (strict ??= make(true)) : (lax ??= make(false))
})()

/**
 * The body `OpenAiLanguageModel` sends for `prompt` (one user text part, no
 * tools) with `config` (the model included).
 *
 * @since 0.1.0
 * @category utils
 */
export const requestOf = (config: Config, prompt: string, format: Format): Request => {
  const { strict, ...requestConfig } = config
  return {
    ...requestConfig,
    input: [{ role: "user", content: [{ type: "input_text", text: prompt }] }],
    include: Array.from(new Set(config.include ?? [])),
    text: {
      format: format === "plan" ? planFormatOf(strict ?? true) : textFormat,
      verbosity: config.text?.verbosity
    },
    tools: undefined,
    tool_choice: undefined
  }
}

/**
 * The request's GenAI attributes, as `OpenAiLanguageModel` sets them.
 *
 * @since 0.1.0
 * @category utils
 */
export const annotateRequest = (span: Tracer.Span, request: Request): void => {
  if (span === inertSpan) return
  OpenAiTelemetry.addGenAIAnnotations(span, {
    system: "openai",
    operation: { name: "chat" },
    request: {
      model: request.model,
      temperature: request.temperature,
      topP: request.top_p,
      maxTokens: request.max_output_tokens
    },
    openai: { request: { responseFormat: request.text?.format?.type, serviceTier: request.service_tier } }
  })
}

/**
 * The usage `OpenAiLanguageModel` reports in its finish part.
 *
 * @since 0.1.0
 * @category utils
 */
export const usageOfResponse = (usage: Generated.Response["usage"]) =>
  usageOf({
    inputTokens: usage?.input_tokens,
    outputTokens: usage?.output_tokens,
    totalTokens: (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0)
  })

// The attributes `LanguageModel.make` puts on its spans, kept identical.
export const planSpan = {
  captureStackTrace: false,
  attributes: { objectName: "routing_plan", concurrency: undefined, toolChoice: undefined }
}
export const textSpan = { captureStackTrace: false, attributes: { concurrency: undefined, toolChoice: undefined } }

/**
 * What a call runs with: the request settings (the layer's, overridden by an
 * `OpenAiLanguageModel.withConfigOverride` in the caller's context), or
 * `undefined` when a span transformer is installed (the call then takes
 * the `LanguageModel` path).
 *
 * @since 0.1.0
 * @category utils
 */
export const callConfig = (base: Config, options: Options) => (context: Map<string, unknown>): Config | undefined => {
  if (context.has(Telemetry.CurrentSpanTransformer.key)) return undefined
  const override = context.get(OpenAiLanguageModel.Config.key) as Config | undefined
  return override === undefined ? base : { model: options.model, ...options.config, ...override }
}
