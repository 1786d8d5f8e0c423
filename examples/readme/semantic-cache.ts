import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Agent, Embeddings, Pipeline, SemanticCache, VectorStore } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// Tenant (metadata.tenant_id) and locale (metadata.locale, else "en") vary by
// default; the model and the tool set only when configured.
const cache = SemanticCache.make({
  ttl: "1 hour",
  dimensions: { model: "offline", tools: ["weather_forecast"] }
})

const AgentLive = Agent.layerOffline({
  tools: [weatherForecast],
  hooks: Effect.map(cache, (c) => c.hooks) // lookup, capture, write
}).pipe(
  // Any VectorStore (memory, SQLite, PostgreSQL) and any EmbeddingModel.
  Layer.provideMerge(Layer.merge(VectorStore.layerMemory(), Embeddings.layerOffline()))
)

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const ask = (requestId: string, request: string, tenant: string) =>
    Effect.gen(function*() {
      const result = yield* pipeline.process({ request, requestId, metadata: { tenant_id: tenant } })
      if (result._tag !== "Completed") return yield* Console.log(`${requestId}: ${result._tag}`)
      const { metadata, shortCircuit } = result.response
      const hit = metadata["semantic_cache"]
      const score = typeof hit === "object" && hit !== null && "score" in hit ? Number(hit.score).toFixed(3) : "-"
      yield* Console.log(`${requestId} ${tenant}: ${shortCircuit?.source ?? "model"} (score ${score})`)
    })

  yield* ask("r1", "What is the weather forecast in Lisbon?", "acme") // answered, then written through
  yield* ask("r2", "What is the weather forecast in Lisbon?", "acme") // served from the cache
  yield* ask("r3", "What is the weather forecast in Lisbon?", "globex") // another tenant: a miss
  yield* Console.log(`invalidated: ${yield* SemanticCache.invalidate({ tenant: "acme" })}`)
  yield* ask("r4", "What is the weather forecast in Lisbon?", "acme") // answered again
  // Scores 0.878 against the Lisbon entry (above minScore), but Porto is not
  // Lisbon: the salient-token guard (the default) rejects the candidate.
  yield* ask("r5", "What is the weather forecast in Porto?", "acme")
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
