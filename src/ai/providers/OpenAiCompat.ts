/**
 * Any server speaking the OpenAI Chat Completions API (`POST
 * {apiUrl}/chat/completions`) as an agent's model: vLLM, Ollama, llama.cpp's
 * server, LM Studio, LiteLLM, hosted "OpenAI-compatible" APIs, mock
 * servers — and OpenAI itself. Most of them speak only this API, not the
 * Responses API `effect-agent-pipeline/openai` uses. Imported as
 * `effect-agent-pipeline/openai-compat`; it needs `@effect/platform` and
 * `@effect/platform-node` (Node's HTTP client), not `@effect/ai-openai`.
 *
 * - Planning is structured output, asked for as `response_format: {
 *   type: "json_schema", json_schema: { name: "routing_plan", schema,
 *   strict: true } }`. A server that rejects it (a 400 / 422 naming
 *   `response_format` or `json_schema`) is asked by a forced call of one
 *   function, `routing_plan`, whose arguments are the plan; one that
 *   rejects tools too, by a system instruction carrying the schema. The
 *   mode that worked is kept for the model's later calls.
 * - Synthesis is text, or a stream (`stream: true`, `stream_options: {
 *   include_usage: true }`) whose `delta.content` pieces are the tokens the
 *   pipeline streams on. A stream ends at `data: [DONE]` or at the end of
 *   its body, with its usage when the server sent a usage chunk.
 * - Tools (`LanguageModel.generateText` with a toolkit) are sent as
 *   functions with `tool_choice`; the calls come back as tool-call parts,
 *   buffered or streamed (pieces gathered by index).
 * - Answers are read leniently: only the fields used are checked
 *   (`content` null, `""` or absent; any `finish_reason`; no `usage`; no
 *   `refusal`, `logprobs` or tool-call `index` required).
 *
 * Failures cross the provider boundary once, as `OpenAi.layer`'s do:
 * `AiError`s that keep the request's method and URL, the response's status,
 * its `retry-after` and rate-limit headers and a body excerpt — never the
 * request's headers, never the key, never a foreign cause. An error the
 * server sends inside a stream (`data: {"error": …}`) fails it with an
 * `HttpResponseError` carrying the status the error names.
 *
 * @since 0.1.0
 */
import type { LanguageModel } from "@effect/ai"
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { type ConfigError, Effect, Layer, type Redacted } from "effect"
import * as ChatClient from "../internal/chatCompletionsClient.js"
import * as ChatModel from "../internal/chatCompletionsModel.js"
import { identityOf, withIdentity } from "../internal/modelClient.js"
import { secretsOf } from "../internal/secrets.js"
import * as ModelProvider from "../ModelProvider.js"
import * as ProviderEndpoint from "../ProviderEndpoint.js"

/**
 * How structured output (planning) is asked for first: `json_schema`
 * (`response_format`), `tool` (a forced function call) or `prompt` (the
 * schema in a system instruction). A server that rejects a mode is asked by
 * the next one, and the model keeps to it.
 *
 * @since 0.1.0
 * @category models
 */
export type StructuredOutput = "json_schema" | "tool" | "prompt"

/**
 * Request settings sent with every call, as they are: the common ones
 * typed, any other field the server takes (`top_k`, `repeat_penalty`,
 * `chat_template_kwargs`, …) too. The fields the provider owns (`model`,
 * `messages`, `tools`, `tool_choice`, `response_format`, `stream`,
 * `stream_options`) cannot be set here.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly [setting: string]: unknown
  readonly temperature?: number | undefined
  readonly top_p?: number | undefined
  readonly max_tokens?: number | undefined
  readonly seed?: number | undefined
  readonly stop?: string | ReadonlyArray<string> | undefined
}

/**
 * A language model on a Chat Completions server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The model name, as the server knows it (`Qwen/Qwen2.5-7B-Instruct`, `qwen2.5:7b`, …). */
  readonly model: string
  /** The API base URL, ending in `/v1` (the client appends `/chat/completions`). Default: `https://api.openai.com/v1`. */
  readonly apiUrl?: string | undefined
  /** Sent as `Authorization: Bearer …`; none for a local server that needs none. */
  readonly apiKey?: Redacted.Redacted | undefined
  /** Request settings sent with every call. */
  readonly config?: Config | undefined
  /** The structured-output mode to start in. Default: `json_schema`. */
  readonly structuredOutput?: StructuredOutput | undefined
  /** Rewrites the HTTP client the provider uses (e.g. to add headers). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/**
 * The model part of an agent: a `LanguageModel` (and the pipeline's direct
 * interface to it) on a Chat Completions server, over Node's HTTP client.
 *
 * @example
 * ```ts
 * import { Agent } from "effect-agent-pipeline"
 * import * as OpenAiCompat from "effect-agent-pipeline/openai-compat"
 *
 * // A local Ollama (no key); vLLM: apiUrl "http://localhost:8000/v1".
 * const AgentLive = Agent.layer({
 *   model: OpenAiCompat.layer({
 *     model: "qwen2.5:7b-instruct",
 *     apiUrl: "http://localhost:11434/v1",
 *     config: { temperature: 0 }
 *   }),
 *   tools: []
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel> => {
  const secrets = secretsOf([options.apiKey])
  const client = {
    // The client appends `/chat/completions`: no double slash.
    apiUrl: (options.apiUrl ?? ProviderEndpoint.openAiDefaultUrl).replace(/\/+$/, ""),
    apiKey: options.apiKey,
    transformClient: options.transformClient
  }
  const model = {
    model: options.model,
    settings: options.config ?? {},
    structuredOutput: options.structuredOutput ?? "json_schema"
  }
  // The spans of its calls say which provider and model they ask (`chat {model}`).
  return withIdentity(
    ModelProvider.layer(
      Effect.flatMap(ChatClient.make(client, secrets), (chat) => ChatModel.make(chat, model, secrets))
    ).pipe(Layer.provide(NodeHttpClient.layerUndici)),
    identityOf("openai", options.model, client.apiUrl)
  )
}

/**
 * The model `model` on the server configured by `OPENAI_BASE_URL` (default
 * `https://api.openai.com/v1`) with the key `OPENAI_API_KEY` (required for
 * api.openai.com, optional elsewhere) — the variables `OpenAi.layerConfig`
 * reads.
 *
 * @example
 * ```ts
 * import { Agent } from "effect-agent-pipeline"
 * import * as OpenAiCompat from "effect-agent-pipeline/openai-compat"
 *
 * // OPENAI_BASE_URL=http://localhost:8080/v1 node main.js   (llama.cpp's llama-server)
 * const AgentLive = Agent.layer({ model: OpenAiCompat.layerConfig("qwen2.5-7b-instruct"), tools: [] })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  model: string
): Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(ProviderEndpoint.openAi, (endpoint) => layer({ model, ...endpoint })))
