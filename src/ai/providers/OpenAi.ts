/**
 * OpenAI — and every server speaking the OpenAI Responses API (vLLM, Ollama,
 * LM Studio, llama.cpp) — as an agent's model, through `@effect/ai-openai`
 * over `@effect/platform-node`'s HTTP client. Imported as
 * `effect-agent-pipeline/openai`, so only a program that uses it needs
 * `@effect/ai-openai` and `@effect/platform-node` installed.
 *
 * - Planning is `generateObject`: a `POST {apiUrl}/responses` with
 *   `text.format = { type: "json_schema", strict: true, schema }`, the schema
 *   being the strict wire form of the plan (`PlanOutput`).
 * - Synthesis is `generateText`, or a streamed `POST {apiUrl}/responses`
 *   with `stream: true` whose `response.output_text.delta` events are the
 *   tokens the pipeline streams on.
 *
 * `apiUrl` ends in `/v1` (the client appends `/responses`, `/embeddings`).
 *
 * The pipeline's own calls (planning, synthesis, streamed synthesis) take
 * the direct path (`ModelProvider.layerWithDirect`): the same requests on
 * the same client, the same span attributes and typed errors, without
 * `@effect/ai`'s per-call response Schemas (issue 20). User code calling
 * the `LanguageModel` service gets `@effect/ai-openai`'s, unchanged.
 *
 * Failures cross the provider boundary once, translated: the language and
 * embedding models fail with `@effect/ai` `AiError`s that keep the
 * request's method and URL, the response's status, its `retry-after` and
 * rate-limit headers and a body excerpt (2 KB) — never the request's
 * headers (`Authorization: Bearer …`), never the key (also scrubbed from
 * any text a server echoes it in), never a foreign cause. An error
 * response's body is read as an excerpt, so a huge or deeply nested one
 * is a typed failure, not a crash.
 *
 * @since 0.1.0
 */
import { EmbeddingModel, type LanguageModel } from "@effect/ai"
import { OpenAiClient, OpenAiEmbeddingModel, OpenAiLanguageModel } from "@effect/ai-openai"
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { type ConfigError, Effect, Layer, type Redacted } from "effect"
import { embeddingsInSpans } from "../internal/genAiSpans.js"
import { httpConventions } from "../internal/httpConventions.js"
import { lenientResponses } from "../internal/lenientResponses.js"
import { identityOf, withIdentity } from "../internal/modelClient.js"
import * as OpenAiDirect from "../internal/openAiDirect.js"
import { boundErrorBodies, guardEffect, guardStream } from "../internal/providerBoundary.js"
import { type Secrets, secretsOf } from "../internal/secrets.js"
import * as ModelProvider from "../ModelProvider.js"
import * as ProviderEndpoint from "../ProviderEndpoint.js"

/**
 * Where the server is and how to authenticate.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /** Sent as `Authorization: Bearer …`; none for a local server that needs none. */
  readonly apiKey?: Redacted.Redacted | undefined
  /** The API base URL, ending in `/v1`. Default: `https://api.openai.com/v1`. */
  readonly apiUrl?: string | undefined
  /** Rewrites the HTTP client the provider uses (e.g. to add headers). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/**
 * A language model on an OpenAI-compatible server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends ClientOptions {
  /** The model name, as the server knows it (`gpt-4.1-mini`, `qwen2.5:7b`, …). */
  readonly model: string
  /** Request settings sent with every call (`temperature`, `max_output_tokens`, `strict`, …). */
  readonly config?: Omit<OpenAiLanguageModel.Config.Service, "model"> | undefined
}

/**
 * An embedding model on an OpenAI-compatible server (`POST {apiUrl}/embeddings`).
 *
 * @since 0.1.0
 * @category models
 */
export interface EmbeddingOptions extends ClientOptions {
  /** The model name (`text-embedding-3-small`, `nomic-embed-text`, …). */
  readonly model: string
  /** Output dimensions, for models that can shorten their vectors. */
  readonly dimensions?: number | undefined
}

const moduleName = "OpenAiClient"

/**
 * The client's calls behind the provider boundary: every failure is a safe
 * `AiError` (no request headers, no foreign cause, the key scrubbed from
 * its text; see `internal/safeAiError.ts`). The raw generated client
 * (`client.client`) is handed on as it is: the language and embedding
 * models do not use it.
 */
const guarded = (client: OpenAiClient.Service, secrets: Secrets): OpenAiClient.Service =>
  OpenAiClient.OpenAiClient.of({
    client: client.client,
    streamRequest: (request, schema) =>
      guardStream(client.streamRequest(request, schema), moduleName, "streamRequest", secrets),
    createResponse: (options) => guardEffect(client.createResponse(options), moduleName, "createResponse", secrets),
    createResponseStream: (options) =>
      guardStream(client.createResponseStream(options), moduleName, "createResponseStream", secrets),
    createEmbedding: (options) => guardEffect(client.createEmbedding(options), moduleName, "createEmbedding", secrets)
  })

/**
 * The `@effect/ai-openai` client over Node's HTTP client (undici), behind
 * the provider boundary: its failures never carry the key or the request's
 * headers, and an error response's body is read as a bounded excerpt (see
 * docs/models.md, "Model providers" › "Keys never serialize"). A
 * `/responses` answer that leaves out keys OpenAI's Schema requires (vLLM,
 * Ollama, llama.cpp, LM Studio, LiteLLM) has them filled with their "none"
 * values before it is decoded (`internal/lenientResponses.ts`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (options: ClientOptions): Layer.Layer<OpenAiClient.OpenAiClient> => {
  const secrets = secretsOf([options.apiKey])
  const transform = options.transformClient
  return Layer.effect(
    OpenAiClient.OpenAiClient,
    Effect.map(OpenAiClient.OpenAiClient, (client) => guarded(client, secrets))
  ).pipe(
    Layer.provide(OpenAiClient.layer({
      apiKey: options.apiKey,
      apiUrl: options.apiUrl ?? ProviderEndpoint.openAiDefaultUrl,
      transformClient: (client) =>
        boundErrorBodies(
          // Issue 19: the keys vLLM, Ollama, llama.cpp, LM Studio and LiteLLM leave out of
          // `/responses` bodies and events, filled before the strict decoder (lenientResponses.ts).
          lenientResponses(httpConventions(transform === undefined ? client : transform(client)))
        )
    })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
}

/**
 * The model part of an agent: a `LanguageModel` on an OpenAI-compatible
 * server.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { Agent } from "effect-agent-pipeline"
 * import * as OpenAi from "effect-agent-pipeline/openai"
 *
 * const AgentLive = Agent.layer({
 *   model: OpenAi.layer({ model: "gpt-4.1-mini", apiKey: Redacted.make("sk-…") }),
 *   tools: []
 * })
 * // A local server: OpenAi.layer({ model: "qwen2.5:7b", apiUrl: "http://localhost:11434/v1" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel> =>
  withIdentity(
    ModelProvider.layerWithDirect(
      OpenAiLanguageModel.layer({
        model: options.model,
        ...(options.config === undefined ? {} : { config: options.config })
      }),
      // The pipeline's calls, on the same client (issue 20).
      OpenAiDirect.make({ model: options.model, config: options.config })
    ).pipe(Layer.provide(layerClient(options))),
    // Telemetry: `gen_ai.provider.name` openai, the model asked for, the server.
    identityOf("openai", options.model, options.apiUrl ?? ProviderEndpoint.openAiDefaultUrl)
  )

/**
 * The model `model` on the server configured by `OPENAI_BASE_URL` (default
 * `https://api.openai.com/v1`) with the key `OPENAI_API_KEY` (required for
 * api.openai.com).
 *
 * @example
 * ```ts
 * import { Agent } from "effect-agent-pipeline"
 * import * as OpenAi from "effect-agent-pipeline/openai"
 *
 * // OPENAI_API_KEY=sk-… node main.js
 * const AgentLive = Agent.layer({ model: OpenAi.layerConfig("gpt-4.1-mini"), tools: [] })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  model: string
): Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(ProviderEndpoint.openAi, (endpoint) => layer({ model, ...endpoint })))

/**
 * An `@effect/ai` `EmbeddingModel` on an OpenAI-compatible server: inputs
 * are batched into one `POST {apiUrl}/embeddings` (at most 2,048 a request).
 *
 * @example
 * ```ts
 * import { EmbeddingModel } from "@effect/ai"
 * import { Effect, Redacted } from "effect"
 * import * as OpenAi from "effect-agent-pipeline/openai"
 *
 * const vector = EmbeddingModel.EmbeddingModel.pipe(
 *   Effect.flatMap((model) => model.embed("hello")),
 *   Effect.provide(OpenAi.layerEmbeddings({ model: "text-embedding-3-small", apiKey: Redacted.make("sk-…") }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbeddings = (options: EmbeddingOptions): Layer.Layer<EmbeddingModel.EmbeddingModel> =>
  // Telemetry: each call an `embeddings {model}` span (GenAI conventions).
  Layer.effect(
    EmbeddingModel.EmbeddingModel,
    Effect.map(EmbeddingModel.EmbeddingModel, (model) =>
      embeddingsInSpans(
        model,
        identityOf("openai", options.model, options.apiUrl ?? ProviderEndpoint.openAiDefaultUrl),
        options.dimensions
      ))
  ).pipe(
    Layer.provide(
      OpenAiEmbeddingModel.layerBatched({
        model: options.model,
        ...(options.dimensions === undefined ? {} : { config: { dimensions: options.dimensions } })
      }).pipe(Layer.provide(layerClient(options)))
    )
  )

/**
 * The embedding model `model` on the server configured by `OPENAI_BASE_URL`
 * and `OPENAI_API_KEY` (as {@link layerConfig}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbeddingsConfig = (
  model: string
): Layer.Layer<EmbeddingModel.EmbeddingModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(ProviderEndpoint.openAi, (endpoint) => layerEmbeddings({ model, ...endpoint })))
