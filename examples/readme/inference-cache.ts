import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionStore, Hook, Pipeline } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

// An LLM response cache: the read side serves a stored answer with
// Hook.respond (the model is not called); the write side stores what the
// model answered (meta.servedBy says when the text came from the cache).
const cache = new Map<string, string>()
const llmCache = Hook.make({
  name: "llm-cache",
  capabilities: ["inference_cache"],
  beforeInference: (call, prompt) => {
    const hit = cache.get(call.payload.prompt)
    return hit === undefined ? Effect.succeed(prompt) : Hook.respond(hit)
  },
  afterInference: (call, text, meta) =>
    Effect.sync(() => {
      if (meta.servedBy === undefined) cache.set(call.payload.prompt, text)
      return text
    })
})

const AgentLive = Agent.layerOffline({ tools: [stockQuote], hooks: [llmCache] }).pipe(Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const store = yield* ExecutionStore.ExecutionStore
  for (const requestId of ["cache-1", "cache-2"]) {
    const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId })
    const record = Option.getOrThrow(yield* store.get(requestId))
    // A served response is recorded as such, and no model call is recorded for it.
    const served = record.hookInvocations.filter((run) => run.decision?.reason === "cache_match").length
    yield* Console.log(
      `${requestId}: ${record.modelCalls?.length ?? 0} model calls, ${served} served from the cache`
    )
    if (result._tag === "Completed") yield* Console.log(result.response.response)
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
