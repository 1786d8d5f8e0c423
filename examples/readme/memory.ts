/**
 * README "Retrieval and memory": a RAG hook and a memory hook over the
 * seam services, with a transform scrubbing what is stored and a guard
 * isolating tenants.
 */
import { weatherForecast } from "../shared/DemoTools.js"
// #region readme
import { Effect, Layer } from "effect"
import { Agent, Hook, Memory, MemoryStore, Retrieval, Retriever } from "effect-agent-pipeline"

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
    memoryStore: (
      call,
      proceed
    ) => (call.payload.scope === "anonymous" ? Hook.deny("no memory for anonymous users") : proceed)
  }
})

export const AgentLive = Agent.layerOffline({ tools: [weatherForecast], hooks: [rag, remember, privacy] }).pipe(
  Layer.provide(Retriever.layerMemory([{ id: "lisbon", content: "Lisbon forecasts are for today, in Celsius." }])),
  Layer.provideMerge(MemoryStore.layerMemory)
)
// #endregion readme
