/**
 * Which language model and which embedding model an agent uses, from
 * configuration (Effect `Config`, so environment variables by default):
 *
 * | variable | values | default |
 * | --- | --- | --- |
 * | `AGENT_MODEL` | `offline`, `openai:<model>`, `anthropic:<model>`, `openai-compat:<model>` | `offline` |
 * | `AGENT_EMBEDDINGS` | `offline`, `openai:<model>` | `offline` |
 * | `OPENAI_BASE_URL` | an OpenAI API base URL, ending in `/v1`: Responses API for `openai:`, Chat Completions for `openai-compat:` (vLLM, Ollama, llama.cpp, LM Studio, LiteLLM) | `https://api.openai.com/v1` |
 * | `OPENAI_API_KEY` | the key, sent as a bearer token | required for api.openai.com |
 * | `ANTHROPIC_BASE_URL` | the Anthropic API base URL, without `/v1` | `https://api.anthropic.com` |
 * | `ANTHROPIC_API_KEY` | the key, sent as `x-api-key` | required for api.anthropic.com |
 *
 * A value that is not one of these is a `ConfigError` naming the variable.
 * Keys are read with `Config.redacted`: they stay `Redacted` up to the
 * HTTP header that carries them, and no error, record, log or span of the
 * pipeline holds them (a provider error keeps the request's method, URL,
 * status and a body excerpt, never its headers). A base URL may not carry
 * credentials (`https://user:key@…`); an invalid one is not echoed back.
 * A provider's package is loaded only when it is chosen, so a program on the
 * offline model needs none installed; its keys are read only then too.
 *
 * @since 0.1.0
 */
import type { EmbeddingModel, LanguageModel } from "@effect/ai"
import { Config, ConfigError, Effect, Either, Layer } from "effect"
import * as Embeddings from "./Embeddings.js"
import * as OfflineModel from "./OfflineModel.js"
import * as ProviderEndpoint from "./ProviderEndpoint.js"

/**
 * The chosen language model.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelChoice =
  | { readonly provider: "offline" }
  | { readonly provider: "openai" | "anthropic" | "openai-compat"; readonly model: string }

/**
 * The chosen embedding model.
 *
 * @since 0.1.0
 * @category models
 */
export type EmbeddingsChoice =
  | { readonly provider: "offline" }
  | { readonly provider: "openai"; readonly model: string }

const choice = <P extends string>(variable: string, providers: ReadonlyArray<P>) =>
(
  value: string
): Either.Either<
  { readonly provider: "offline" } | { readonly provider: P; readonly model: string },
  ConfigError.ConfigError
> => {
  const trimmed = value.trim()
  if (trimmed === "offline") return Either.right({ provider: "offline" })
  const colon = trimmed.indexOf(":")
  const provider = providers.find((p) => p === trimmed.slice(0, colon))
  const model = trimmed.slice(colon + 1).trim()
  if (colon > 0 && provider !== undefined && model.length > 0) return Either.right({ provider, model })
  const expected = ["offline", ...providers.map((p) => `${p}:<model>`)].join(", ")
  return Either.left(ConfigError.InvalidData([variable], `${variable} must be one of ${expected}; got "${value}"`))
}

/**
 * The language model, read from `AGENT_MODEL`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const model: Config.Config<ModelChoice> = Config.string("AGENT_MODEL").pipe(
  Config.withDefault("offline"),
  Config.mapOrFail(choice("AGENT_MODEL", ["openai", "anthropic", "openai-compat"] as const))
)

/**
 * The embedding model, read from `AGENT_EMBEDDINGS`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const embeddings: Config.Config<EmbeddingsChoice> = Config.string("AGENT_EMBEDDINGS").pipe(
  Config.withDefault("offline"),
  Config.mapOrFail(choice("AGENT_EMBEDDINGS", ["openai"] as const))
)

const loadFailed = (variable: string, packages: string) => (error: unknown) =>
  ConfigError.InvalidData([variable], `cannot load the provider (install ${packages}): ${String(error)}`)

const loadOpenAi = (variable: string) =>
  Effect.tryPromise({
    try: () => import("./providers/OpenAi.js"),
    catch: loadFailed(variable, "@effect/ai-openai and @effect/platform-node")
  })

const loadOpenAiCompat = (variable: string) =>
  Effect.tryPromise({
    try: () => import("./providers/OpenAiCompat.js"),
    catch: loadFailed(variable, "@effect/platform and @effect/platform-node")
  })

const loadAnthropic = (variable: string) =>
  Effect.tryPromise({
    try: () => import("./providers/Anthropic.js"),
    catch: loadFailed(variable, "@effect/ai-anthropic and @effect/platform-node")
  })

/**
 * The language model Layer for a choice: reads the chosen provider's
 * endpoint and loads its package.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ModelConfig } from "effect-agent-pipeline"
 *
 * const model = Effect.flatMap(ModelConfig.model, ModelConfig.layerLanguageModelFor)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLanguageModelFor = (
  choice: ModelChoice
): Effect.Effect<Layer.Layer<LanguageModel.LanguageModel>, ConfigError.ConfigError> => {
  switch (choice.provider) {
    case "offline":
      return Effect.succeed(OfflineModel.layer)
    case "openai":
      return Effect.zipWith(
        ProviderEndpoint.openAi,
        loadOpenAi("AGENT_MODEL"),
        (endpoint, OpenAi) => OpenAi.layer({ model: choice.model, ...endpoint })
      )
    case "anthropic":
      return Effect.zipWith(
        ProviderEndpoint.anthropic,
        loadAnthropic("AGENT_MODEL"),
        (endpoint, Anthropic) => Anthropic.layer({ model: choice.model, ...endpoint })
      )
    case "openai-compat":
      return Effect.zipWith(
        ProviderEndpoint.openAi,
        loadOpenAiCompat("AGENT_MODEL"),
        (endpoint, OpenAiCompat) => OpenAiCompat.layer({ model: choice.model, ...endpoint })
      )
  }
}

/**
 * The embedding model Layer for a choice.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbeddingModelFor = (
  choice: EmbeddingsChoice
): Effect.Effect<Layer.Layer<EmbeddingModel.EmbeddingModel>, ConfigError.ConfigError> => {
  switch (choice.provider) {
    case "offline":
      return Effect.succeed(Embeddings.layerOffline())
    case "openai":
      return Effect.zipWith(
        ProviderEndpoint.openAi,
        loadOpenAi("AGENT_EMBEDDINGS"),
        (endpoint, OpenAi) => OpenAi.layerEmbeddings({ model: choice.model, ...endpoint })
      )
  }
}

/**
 * The configured language model (`AGENT_MODEL`), as a Layer: the model part
 * `Agent.layerConfig` uses when none is given.
 *
 * @example
 * ```ts
 * import { Agent, ModelConfig } from "effect-agent-pipeline"
 *
 * // AGENT_MODEL=openai:gpt-4.1-mini OPENAI_API_KEY=sk-… node main.js
 * const AgentLive = Agent.layer({ model: ModelConfig.layerLanguageModel, tools: [] })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLanguageModel: Layer.Layer<LanguageModel.LanguageModel, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.flatMap(model, layerLanguageModelFor)
)

/**
 * The configured embedding model (`AGENT_EMBEDDINGS`), as a Layer.
 *
 * @example
 * ```ts
 * import { EmbeddingModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { ModelConfig } from "effect-agent-pipeline"
 *
 * const vector = Effect.flatMap(EmbeddingModel.EmbeddingModel, (m) => m.embed("hello")).pipe(
 *   Effect.provide(ModelConfig.layerEmbeddingModel)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmbeddingModel: Layer.Layer<EmbeddingModel.EmbeddingModel, ConfigError.ConfigError> = Layer
  .unwrapEffect(Effect.flatMap(embeddings, layerEmbeddingModelFor))
