/**
 * The streamed side of OpenAI's direct path (openAiDirect.ts): a
 * `POST /responses` with `stream: true` (the guarded client's
 * `createResponseStream`, the body `OpenAiLanguageModel` sends), its events
 * read as the parts `LanguageModel.streamText` gives the pipeline —
 * `response-metadata` (`response.created`), `text-delta`
 * (`response.output_text.delta`), `finish` with the usage
 * (`response.completed` / `incomplete` / `failed`), `error` — in a
 * `LanguageModel.streamText` span annotated as `OpenAiLanguageModel`
 * annotates it. Other events (tool calls, reasoning, sources) are not read:
 * the pipeline's prompts ask for text.
 */
import { type AiError, type LanguageModel, Response } from "@effect/ai"
import { type OpenAiClient, OpenAiTelemetry } from "@effect/ai-openai"
import { DateTime, Effect, Option, Stream, type Tracer } from "effect"
import { collects, inertSpan } from "../../runtime/internal/spans.js"
import { annotateRequest, type callConfig, requestOf, textSpan } from "./openAiDirectRequest.js"

// `@effect/ai-openai`'s mapping of a response's `incomplete_details.reason`.
const finishReasons: Readonly<Record<string, Response.FinishReason>> = {
  content_filter: "content-filter",
  function_call: "tool-calls",
  length: "length",
  max_output_tokens: "length",
  stop: "stop",
  tool_calls: "tool-calls"
}

const finishReasonOf = (reason: string | null | undefined, hasToolCalls: boolean): Response.FinishReason =>
  reason === null || reason === undefined
    ? (hasToolCalls ? "tool-calls" : "stop")
    : (finishReasons[reason] ?? (hasToolCalls ? "tool-calls" : "unknown"))

type Event = OpenAiClient.ResponseStreamEvent
type Part = Response.StreamPart<{}>

const finishOf = (
  response: Extract<Event, { readonly type: "response.completed" }>["response"],
  hasToolCalls: boolean,
  span: Tracer.Span
): Part => {
  const usage = response.usage
  const reason = finishReasonOf(response.incomplete_details?.reason, hasToolCalls)
  const reasoningTokens = usage?.output_tokens_details?.reasoning_tokens
  const cachedInputTokens = usage?.input_tokens_details?.cached_tokens
  if (span !== inertSpan) {
    OpenAiTelemetry.addGenAIAnnotations(span, {
      response: { finishReasons: [reason] },
      usage: { inputTokens: usage?.input_tokens, outputTokens: usage?.output_tokens },
      openai: { response: { serviceTier: response.service_tier } }
    })
  }
  return Response.makePart("finish", {
    reason,
    usage: new Response.Usage({
      inputTokens: usage?.input_tokens,
      outputTokens: usage?.output_tokens,
      totalTokens: (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0),
      ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
      ...(cachedInputTokens === undefined ? {} : { cachedInputTokens })
    }, true)
  })
}

/** The parts of one event (most events have none). */
const partsOf = (event: Event, span: Tracer.Span, state: { hasToolCalls: boolean }): ReadonlyArray<Part> => {
  switch (event.type) {
    case "response.output_text.delta":
      return [Response.makePart("text-delta", { id: event.item_id, delta: event.delta })]
    case "response.created": {
      if (span !== inertSpan) {
        OpenAiTelemetry.addGenAIAnnotations(span, { response: { id: event.response.id, model: event.response.model } })
      }
      return [Response.makePart("response-metadata", {
        id: Option.some(event.response.id),
        modelId: Option.some(event.response.model),
        timestamp: Option.some(DateTime.unsafeMake(event.response.created_at * 1000))
      })]
    }
    case "response.completed":
    case "response.incomplete":
    case "response.failed":
      return [finishOf(event.response, state.hasToolCalls, span)]
    case "response.output_item.done":
      if (event.item.type === "function_call") state.hasToolCalls = true
      return []
    case "error":
      return [Response.makePart("error", { error: event })]
    default:
      return []
  }
}

/**
 * `DirectModel.streamText` over `client`; through `languageModel` when a
 * span transformer is installed (`configOf` says so).
 *
 * @since 0.1.0
 * @category constructors
 */
export const streamWith = (
  client: OpenAiClient.Service,
  languageModel: LanguageModel.Service,
  atMake: boolean,
  configOf: ReturnType<typeof callConfig>
) =>
(prompt: string): Stream.Stream<Part, AiError.AiError> =>
  Stream.unwrapScoped(Effect.withFiberRuntime((fiber) => {
    const config = atMake ? undefined : configOf(fiber.currentContext.unsafeMap)
    if (config === undefined) return Effect.succeed(languageModel.streamText({ prompt }))
    const request = requestOf(config, prompt, "text")
    const opened = collects(fiber)
      ? Effect.makeSpanScoped("LanguageModel.streamText", textSpan)
      : Effect.succeed(inertSpan)
    return Effect.map(opened, (span) => {
      annotateRequest(span, request)
      const state = { hasToolCalls: false }
      return Stream.mapConcat(client.createResponseStream(request), (event) => partsOf(event, span, state))
    })
  }))
