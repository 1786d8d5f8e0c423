import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ConversationHistoryHook, ExecutionStore, Pipeline, VectorStore } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// Constructed directly and registered like any hook: the memory builders do not wire it.
const history = ConversationHistoryHook.make({ maxTurns: 10, budgetBytes: 4_000, ttl: "30 days" })

const AgentLive = Agent.layerOffline({
  tools: [weatherForecast],
  hooks: Effect.map(history, (hook) => [hook])
}).pipe(Layer.provide(VectorStore.layerMemory()))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const chat = (request: string, requestId: string) =>
    pipeline.process({ request, requestId, metadata: { session_id: "chat-1" } })

  yield* chat("What's the weather forecast in Lisbon?", "turn-1")
  yield* chat("And tomorrow?", "turn-2")

  // The second request was planned with the first exchange as <conversation_history>.
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("turn-2"))
  const runs = Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })
  for (const effect of runs.flatMap((run) => run.name === "conversation-history" ? run.effects : [])) {
    yield* Console.log(`${effect.effectId}: ${effect.summary ?? effect.status}`)
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
