import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionStore, MemoryHooks, Pipeline, VectorStore } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// No LanguageModel given to the hooks: events get the heuristic summary and no
// knowledge-extraction hook is built. With an EmbeddingModel in context the
// enrichment would also read related events by similarity.
const memoryHooks = Effect.map(
  MemoryHooks.build({ domain: "travel", summarizer: "heuristic", retention: "30 days" }),
  (memory) => memory.hooks // [enrichment, record]
)

const AgentLive = Agent.layerOffline({ tools: [weatherForecast], hooks: memoryHooks }).pipe(
  // Events live in the vector store: memory here, SQLite or PostgreSQL to keep them.
  Layer.provideMerge(VectorStore.layerMemory())
)

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const ask = (request: string, requestId: string) =>
    pipeline.process({ request, requestId, metadata: { user_id: "ada" } })

  yield* ask("What's the weather forecast in Lisbon?", "first")
  // No tool matches this one: the offline model answers from the memory the planner was shown.
  const followUp = yield* ask("Remind me what you found out about Lisbon.", "follow-up")
  if (followUp._tag === "Completed") {
    // The quoted event carries the minute it was recorded: masked so the output below stays put.
    yield* Console.log(followUp.response.response.replace(/time=[^;]+/, "time=…"))
  }

  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("follow-up"))
  const runs = Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })
  for (const effect of runs.find((run) => run.name === "memory-enrichment")?.effects ?? []) {
    yield* Console.log(`${effect.effectId}: ${effect.summary ?? effect.status}`)
  }

  // A user can be forgotten: every event and knowledge fragment filed for them.
  yield* Console.log(`forgotten: ${JSON.stringify(yield* MemoryHooks.forgetUser("ada"))}`)
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
