import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionStore, Hook, Memory, MemoryStore, Pipeline, Retrieval, Retriever } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// Retrieval.retrieve runs one `retrieval` operation: its hooks fire, its runs are recorded.
const rag = Hook.make({
  name: "rag",
  beforePlanning: (ctx) =>
    Retrieval.retrieve(ctx.request, { limit: 3 }).pipe(
      Effect.map((docs) => ({ enrichments: { rag_context: docs.map((d) => `- ${d.content}`).join("\n") } })),
      Effect.orElseSucceed(() => undefined) // no context is better than no answer
    )
})

// Memory.store runs one `memory_store` operation.
const remember = Hook.make({
  name: "remember",
  afterExecution: (ctx) =>
    Memory.store(String(ctx.metadata.user_id ?? "anonymous"), { content: ctx.request }).pipe(Effect.ignore)
})

// Scrub e-mail addresses before anything is stored; keep each user's memory to themselves.
const privacy = Hook.make({
  name: "privacy",
  beforeMemoryStore: (_call, record) =>
    Effect.succeed({ ...record, content: record.content.replace(/\S+@\S+/g, "[email]") }),
  guard: {
    memoryStore: (call, proceed) =>
      call.payload.scope === "anonymous" ? Hook.deny("no memory for anonymous users") : proceed
  }
})

const AgentLive = Agent.layerOffline({ tools: [weatherForecast], hooks: [rag, remember, privacy] }).pipe(
  Layer.provide(Retriever.layerMemory([{ id: "lisbon", content: "Lisbon forecasts are for today, in Celsius." }])),
  Layer.provideMerge(MemoryStore.layerMemory)
)

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({
    request: "What's the weather forecast in Lisbon? Mail me at ann@example.com",
    metadata: { user_id: "ann" }
  })
  const memory = yield* MemoryStore.MemoryStore
  for (const stored of yield* memory.load("ann", { query: "", limit: 10 })) {
    yield* Console.log(`remembered for ann: ${stored.content}`)
  }

  yield* pipeline.process({ request: "What's the weather forecast in Lisbon?", requestId: "anonymous-1" })
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("anonymous-1"))
  for (const run of Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })) {
    if (run.name === "rag") yield* Console.log(`rag: ${run.effects.map((e) => JSON.stringify(e.data)).join(" ")}`)
    if (run.stage === "guard_memory_store") yield* Console.log(`${run.name} guarded the memory store: ${run.status}`)
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
