/**
 * Anthropic's Messages API as an agent's model, through
 * `@effect/ai-anthropic` over `@effect/platform-node`'s HTTP client.
 * Imported as `effect-agent-pipeline/anthropic`, so only a program that uses
 * it needs `@effect/ai-anthropic` and `@effect/platform-node` installed.
 *
 * - Planning is `generateObject`: Anthropic has no JSON-schema response
 *   format, so the client sends the plan's schema (`PlanOutput`) as the
 *   `input_schema` of one tool, `routing_plan`, and forces the call
 *   (`tool_choice: { type: "tool", name: "routing_plan" }`); the tool call's
 *   input is the plan.
 * - Synthesis is `generateText`, or a streamed `POST /v1/messages` whose
 *   `content_block_delta` text deltas are the tokens the pipeline streams on.
 *
 * `apiUrl` has no `/v1` (the client calls `{apiUrl}/v1/messages`).
 *
 * The `LanguageModel` it provides is `@effect/ai-anthropic`'s (every
 * feature of it, for user code). The pipeline calls the same client by its
 * direct path (`ModelProvider.DirectModel`, internal/anthropicDirect.ts):
 * the same requests, bodies, spans and errors, without `LanguageModel`'s
 * per-call Schema work.
 *
 * Failures cross the provider boundary once, translated: `AiError`s that
 * keep the request's method and URL, the response's status, its
 * `retry-after` and rate-limit headers and a body excerpt (2 KB) — never
 * the request's headers (the key travels as `x-api-key`), never the key
 * (also scrubbed from any text a server echoes it in), never a foreign
 * cause. An error response's body is read as an excerpt, so a huge or
 * deeply nested one is a typed failure, not a crash.
 *
 * @since 0.1.0
 */
import type { LanguageModel } from "@effect/ai"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { type ConfigError, Effect, Layer, type Redacted } from "effect"
import * as AnthropicDirect from "../internal/anthropicDirect.js"
import { httpConventions } from "../internal/httpConventions.js"
import { identityOf, withIdentity } from "../internal/modelClient.js"
import { boundErrorBodies, guardEffect, guardStream } from "../internal/providerBoundary.js"
import { type Secrets, secretsOf } from "../internal/secrets.js"
import * as ModelProvider from "../ModelProvider.js"
import * as ProviderEndpoint from "../ProviderEndpoint.js"

/**
 * A language model on Anthropic's API (or a server speaking it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The model name (`claude-sonnet-4-5`, `claude-3-5-haiku-latest`, …). */
  readonly model: string
  /** Sent as `x-api-key`. */
  readonly apiKey?: Redacted.Redacted | undefined
  /** The API base URL, without `/v1`. Default: `https://api.anthropic.com`. */
  readonly apiUrl?: string | undefined
  /** The `anthropic-version` header. Default: the client's (`2023-06-01`). */
  readonly anthropicVersion?: string | undefined
  /** Request settings sent with every call (`max_tokens` — default 4096 —, `temperature`, …). */
  readonly config?: Omit<AnthropicLanguageModel.Config.Service, "model"> | undefined
  /** Rewrites the HTTP client the provider uses (e.g. to add headers). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

const moduleName = "AnthropicClient"

/**
 * The client's calls behind the provider boundary: every failure is a safe
 * `AiError` (no request headers — the key travels as `x-api-key` —, no
 * foreign cause, the key scrubbed from its text; see
 * `internal/safeAiError.ts`). The raw generated client (`client.client`)
 * is handed on as it is: the language model does not use it.
 */
const guarded = (client: AnthropicClient.Service, secrets: Secrets): AnthropicClient.Service =>
  AnthropicClient.AnthropicClient.of({
    client: client.client,
    streamRequest: (request, schema) =>
      guardStream(client.streamRequest(request, schema), moduleName, "streamRequest", secrets),
    createMessage: (options) => guardEffect(client.createMessage(options), moduleName, "createMessage", secrets),
    createMessageStream: (options) =>
      guardStream(client.createMessageStream(options), moduleName, "createMessageStream", secrets)
  })

/**
 * The `@effect/ai-anthropic` client over Node's HTTP client (undici),
 * behind the provider boundary: its failures never carry the key or the
 * request's headers, and an error response's body is read as a bounded
 * excerpt (see docs/models.md, "Model providers" › "Keys never serialize").
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options: Omit<Options, "model" | "config">
): Layer.Layer<AnthropicClient.AnthropicClient> => {
  const secrets = secretsOf([options.apiKey])
  const transform = options.transformClient
  return Layer.effect(
    AnthropicClient.AnthropicClient,
    Effect.map(AnthropicClient.AnthropicClient, (client) => guarded(client, secrets))
  ).pipe(
    Layer.provide(AnthropicClient.layer({
      apiKey: options.apiKey,
      apiUrl: options.apiUrl ?? ProviderEndpoint.anthropicDefaultUrl,
      anthropicVersion: options.anthropicVersion,
      transformClient: (client) =>
        boundErrorBodies(httpConventions(transform === undefined ? client : transform(client)))
    })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
}

/**
 * The model part of an agent: a `LanguageModel` on Anthropic's API.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { Agent } from "effect-agent-pipeline"
 * import * as Anthropic from "effect-agent-pipeline/anthropic"
 *
 * const AgentLive = Agent.layer({
 *   model: Anthropic.layer({ model: "claude-sonnet-4-5", apiKey: Redacted.make("sk-ant-…") }),
 *   tools: []
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel> => {
  const model = { model: options.model, ...(options.config === undefined ? {} : { config: options.config }) }
  return withIdentity(
    // `@effect/ai-anthropic`'s LanguageModel, and the direct functions over the same client.
    ModelProvider.layerWithDirect(AnthropicLanguageModel.layer(model), AnthropicDirect.make(model)).pipe(
      Layer.provide(layerClient(options))
    ),
    // Telemetry: `gen_ai.provider.name` anthropic, the model asked for, the server.
    identityOf("anthropic", options.model, options.apiUrl ?? ProviderEndpoint.anthropicDefaultUrl)
  )
}

/**
 * The model `model` on the server configured by `ANTHROPIC_BASE_URL`
 * (default `https://api.anthropic.com`) with the key `ANTHROPIC_API_KEY`
 * (required for api.anthropic.com).
 *
 * @example
 * ```ts
 * import { Agent } from "effect-agent-pipeline"
 * import * as Anthropic from "effect-agent-pipeline/anthropic"
 *
 * // ANTHROPIC_API_KEY=sk-ant-… node main.js
 * const AgentLive = Agent.layer({ model: Anthropic.layerConfig("claude-sonnet-4-5"), tools: [] })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  model: string
): Layer.Layer<LanguageModel.LanguageModel | ModelProvider.DirectModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(ProviderEndpoint.anthropic, (endpoint) => layer({ model, ...endpoint })))
