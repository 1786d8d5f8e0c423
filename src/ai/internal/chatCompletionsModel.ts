/**
 * The OpenAI-compatible provider's functions (issue 19): `generateText` and
 * `streamText` over a Chat Completions client, served by `ModelProvider`
 * as `LanguageModel` (built with `LanguageModel.make`) and as the
 * pipeline's `DirectModel`.
 *
 * - Text: one `POST /chat/completions`; a stream asks for the usage chunk
 *   (`stream_options: { include_usage: true }`).
 * - Structured output (a JSON response format): asked for in the mode the
 *   model is in — `json_schema`, then `tool`, then `prompt` — moving on
 *   when the server rejects one (chatCompletionsStructured.ts). The mode is
 *   remembered per model (a `Ref`, so per Layer build): later calls start
 *   in the mode that was not rejected, and it is visible in what they send
 *   (`response_format`, a forced `tool_choice`, or the system instruction)
 *   and on the call's span (`gen_ai.request.structured_output`). The
 *   fallback happens inside one call: the pipeline sees one model call
 *   (its timeout covers all of it).
 * - `LanguageModel.streamText` always asks for text: a stream is never
 *   structured.
 */
import { type AiError, type IdGenerator, type LanguageModel, type Response, Telemetry } from "@effect/ai"
import { Effect, Ref, Stream } from "effect"
import * as ModelProvider from "../ModelProvider.js"
import type { ChatClient } from "./chatCompletionsClient.js"
import { messagesOf, type ToolFields, toolFieldsOf } from "./chatCompletionsRequest.js"
import { partsOf } from "./chatCompletionsResponse.js"
import { partsOfStream } from "./chatCompletionsStream.js"
import {
  laterMode,
  type Mode,
  nextMode,
  type ObjectFormat,
  objectFormatOf,
  rejects,
  structured
} from "./chatCompletionsStructured.js"
import type { ChatMessage, ChatRequest } from "./chatCompletionsWire.js"
import { safeAiError } from "./safeAiError.js"
import type { Secrets } from "./secrets.js"

/**
 * What the model sends with every call.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelOptions {
  readonly model: string
  /** Request settings (`temperature`, `max_tokens`, …), sent as they are, except the fields the provider sets. */
  readonly settings: Readonly<Record<string, unknown>>
  /** The structured-output mode to start in. */
  readonly structuredOutput: Mode
}

/** The fields of a request the provider sets: a setting of the same name is not sent. */
const owned: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "tools",
  "tool_choice",
  "response_format",
  "stream",
  "stream_options"
])

/**
 * The span attribute naming the structured-output mode of a call.
 *
 * @since 0.1.0
 * @category constants
 */
export const modeAttribute = "gen_ai.request.structured_output"

/**
 * The provider over `client`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  client: ChatClient,
  options: ModelOptions,
  secrets: Secrets
): Effect.Effect<ModelProvider.Provider> =>
  Effect.gen(function*() {
    const modeRef = yield* Ref.make(options.structuredOutput)
    const settings = Object.fromEntries(Object.entries(options.settings).filter(([name]) => !owned.has(name)))
    const request = (fields: Pick<ChatRequest, "messages"> & Partial<ChatRequest>): ChatRequest => ({
      ...settings,
      ...fields,
      model: options.model
    })

    const annotate = (providerOptions: LanguageModel.ProviderOptions) =>
      Telemetry.addGenAIAnnotations(providerOptions.span, {
        system: "openai",
        operation: { name: "chat" },
        request: {
          model: options.model,
          temperature: number(settings["temperature"]),
          topP: number(settings["top_p"]),
          maxTokens: number(settings["max_tokens"])
        }
      })

    const attempt = (
      mode: Mode,
      object: ObjectFormat,
      messages: ReadonlyArray<ChatMessage>,
      tools: ToolFields,
      providerOptions: LanguageModel.ProviderOptions
    ): Effect.Effect<Array<Response.PartEncoded>, AiError.AiError, IdGenerator.IdGenerator> => {
      const { fields, read } = structured(mode, object, messages, tools)
      providerOptions.span.attribute(modeAttribute, mode)
      return Effect.matchEffect(client.create(request(fields)), {
        onSuccess: (body) => partsOf(body, client.requestDetails, read),
        onFailure: (error) => {
          const next = nextMode(mode)
          if (next === undefined || !rejects(error, mode)) return Effect.fail(error)
          return Ref.updateAndGet(modeRef, (current) => laterMode(current, next)).pipe(
            Effect.tap((now) =>
              Effect.logWarning(
                `the server refused structured output by ${mode} (HTTP ${
                  error._tag === "HttpResponseError" ? error.response.status : "error"
                }); asking by ${now} from now on`
              ).pipe(Effect.annotateLogs("module", "OpenAiCompat"))
            ),
            Effect.flatMap((now) => attempt(now, object, messages, tools, providerOptions))
          )
        }
      })
    }

    const generateText = (providerOptions: LanguageModel.ProviderOptions) =>
      Effect.gen(function*() {
        annotate(providerOptions)
        const messages = yield* messagesOf(providerOptions.prompt)
        const tools = yield* toolFieldsOf(providerOptions)
        const format = providerOptions.responseFormat
        if (format.type === "text") {
          const body = yield* client.create(request({ messages, ...tools }))
          return yield* partsOf(body, client.requestDetails)
        }
        return yield* attempt(yield* Ref.get(modeRef), objectFormatOf(format), messages, tools, providerOptions)
      })

    const streamText = (providerOptions: LanguageModel.ProviderOptions) =>
      Stream.unwrap(Effect.gen(function*() {
        annotate(providerOptions)
        const messages = yield* messagesOf(providerOptions.prompt)
        const tools = yield* toolFieldsOf(providerOptions)
        const events = client.stream(request({ messages, ...tools, stream_options: { include_usage: true } }))
        return partsOfStream(events, client.requestDetails)
      }))

    // What the client raised is safe already; what reading the answer raised
    // (an error the server reported inside a 200, an answer that does not
    // read) is made safe here, the key scrubbed from it too.
    const safe = (error: AiError.AiError) => safeAiError(error, secrets)
    return yield* ModelProvider.make({
      generateText: (providerOptions) => Effect.mapError(generateText(providerOptions), safe),
      streamText: (providerOptions) => Stream.mapError(streamText(providerOptions), safe)
    })
  })

const number = (u: unknown): number | undefined => (typeof u === "number" ? u : undefined)
