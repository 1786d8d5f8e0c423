/**
 * README "Model providers": embeddings through `@effect/ai`'s
 * `EmbeddingModel`, offline by default.
 */
// #region readme
import { EmbeddingModel } from "@effect/ai"
import { Effect } from "effect"
import { Embeddings, ModelConfig } from "effect-agent-pipeline"

// AGENT_EMBEDDINGS=offline (default) or openai:text-embedding-3-small (OPENAI_BASE_URL, OPENAI_API_KEY)
export const similarity = (a: string, b: string) =>
  Effect.gen(function*() {
    const model = yield* EmbeddingModel.EmbeddingModel
    const [va = [], vb = []] = yield* model.embedMany([a, b])
    return Embeddings.cosine(va, vb)
  })

export const program = similarity("weather in Paris", "Paris weather forecast").pipe(
  Effect.provide(ModelConfig.layerEmbeddingModel)
) // offline: ≈ 0.75
// #endregion readme
