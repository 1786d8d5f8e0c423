import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import {
  Agent,
  ExecutionStore,
  Pipeline,
  ScriptedModel,
  UserFacts,
  UserMemoryHooks,
  VectorStore
} from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// The extraction hook exists only with a LanguageModel. A real one in
// production; here a scripted one, so the program runs offline.
const memoryHooks = Effect.gen(function*() {
  const extractor = yield* ScriptedModel.make({
    plans: [],
    synthesis: JSON.stringify([
      { text: "Is called Ada", kind: "identity", confidence: 0.95 },
      { text: "Prefers Celsius", kind: "preference", confidence: 0.9 },
      { text: "Her password is hunter2", kind: "fact", confidence: 0.9 } // never kept
    ])
  })
  const memory = yield* UserMemoryHooks.build({ model: extractor.service, execution: "blocking", ttl: "365 days" })
  return memory.hooks // [enrichment, extraction]
})

const AgentLive = Agent.layerOffline({ tools: [weatherForecast], hooks: memoryHooks }).pipe(
  // Facts live in the vector store: memory here, SQLite or PostgreSQL to keep them.
  Layer.provideMerge(VectorStore.layerMemory())
)

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({
    request: "I'm Ada and I think in Celsius. What's the weather forecast in Lisbon?",
    metadata: { user_id: "ada" }
  })
  for (const fact of yield* UserFacts.list("ada")) yield* Console.log(`${fact.kind}: ${fact.text}`)

  // The next request starts with what the first one taught.
  yield* pipeline.process({
    request: "And in Porto?",
    requestId: "porto",
    metadata: { user_id: "ada" }
  })
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("porto"))
  const runs = Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })
  for (const effect of runs.find((run) => run.name === "user-memory-enrichment")?.effects ?? []) {
    yield* Console.log(`${effect.effectId}: ${effect.summary}`)
  }

  // A user can be forgotten.
  yield* Console.log(`forgotten: ${yield* UserFacts.forget("ada")} facts`)
}).pipe(Effect.provide(AgentLive), Effect.scoped)

NodeRuntime.runMain(main)
