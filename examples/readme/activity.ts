import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Activity, ActivityStore, Agent, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// The domain comes from `domain`, or from the request's `metadata.activity_domain`.
const activity = Activity.make({ agent: "forecaster", ttl: "30 seconds" })

const AgentLive = Agent.layerOffline({
  tools: [weatherForecast],
  hooks: Effect.map(activity, (hooks) => hooks.hooks) // announcement first, then cleanup
}).pipe(
  // One process; several processes share a SQLite, PostgreSQL or Redis activity store instead.
  Layer.provideMerge(ActivityStore.layerMemory)
)

const main = Effect.gen(function*() {
  // Another agent is planning deliveries in the same domain.
  const signals = yield* ActivityStore.ActivityStore
  yield* signals.announce(
    { signalId: "courier:r7", domain: "weather", agent: "courier", requestId: "r7", summary: "deliveries in Lisbon" },
    "1 minute"
  )

  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({
    request: "What's the weather forecast in Lisbon?",
    requestId: "forecast-1",
    metadata: { activity_domain: "weather" }
  })

  // The request's own signal is gone; the courier's is still there.
  const active = yield* signals.listActive("weather")
  yield* Console.log(`active in weather: ${active.map((s) => s.signalId).join(", ")}`)
  // What the announcement did, as effects in the record.
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("forecast-1"))
  const runs = Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })
  for (const effect of runs.find((run) => run.name === "activity-announcement")?.effects ?? []) {
    yield* Console.log(`${effect.effectId}: ${effect.status}`)
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
