import { EmbeddingModel } from "@effect/ai"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { Embeddings, ModelConfig } from "effect-agent-pipeline"

// AGENT_EMBEDDINGS=offline (default) or openai:text-embedding-3-small (OPENAI_BASE_URL, OPENAI_API_KEY)
const similarity = (a: string, b: string) =>
  Effect.gen(function*() {
    const model = yield* EmbeddingModel.EmbeddingModel
    const [va = [], vb = []] = yield* model.embedMany([a, b])
    return Embeddings.cosine(va, vb)
  })

const main = Effect.gen(function*() {
  const related = yield* similarity("weather in Paris", "Paris weather forecast")
  const unrelated = yield* similarity("weather in Paris", "quarterly earnings report")
  yield* Console.log(`related: ${related.toFixed(2)}, unrelated: ${unrelated.toFixed(2)}`)
}).pipe(Effect.provide(ModelConfig.layerEmbeddingModel))

NodeRuntime.runMain(main)
