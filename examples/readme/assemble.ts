import { NodeRuntime } from "@effect/platform-node"
import { Console, Duration, Effect, Layer } from "effect"
import { Agent, ExecutionStore, OfflineModel, Pipeline, ScriptedModel } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

const AgentLive = Agent.layer({
  model: OfflineModel.layer, // required: any Layer providing @effect/ai's LanguageModel
  tools: [stockQuote], // required (may be empty)
  hooks: [], // or an Effect that builds them
  executionStore: ExecutionStore.layerMemory({
    retention: { normal: Duration.hours(1), error: Duration.days(1) }
  }),
  gate: { forRequest: () => ({ cacheReadEnabled: true, cacheVary: { model: "offline-v1" } }) },
  options: { maxPhases: 2, concurrency: 8, maxRequestBytes: 64 * 1024 }
}).pipe(Layer.provide(QuotesLive)) // what the tool handlers need

// Another model is another `model` part; nothing else changes.
const ScriptedAgent = Agent.layer({
  model: ScriptedModel.layer({ plans: [{ steps: [], terminal: true }], synthesis: "Nothing to do." }),
  tools: []
})

const ask = (request: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const result = yield* pipeline.process({ request })
    yield* Console.log(result._tag === "Completed" ? result.response.response : "suspended")
  })

const main = Effect.gen(function*() {
  yield* ask("What is the stock quote for ACME?").pipe(Effect.provide(AgentLive))
  yield* ask("What is the stock quote for ACME?").pipe(Effect.provide(ScriptedAgent))
})

NodeRuntime.runMain(main)
