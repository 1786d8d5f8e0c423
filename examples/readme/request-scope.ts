import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option, Schedule } from "effect"
import { Agent, ExecutionStore, Hook, HookEffects, Pipeline, RequestScope } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// Stands in for a real lease renewal (a Redis PEXPIRE, a database heartbeat).
const renewLeaseForever = Effect.void.pipe(Effect.repeat(Schedule.spaced("10 seconds")), Effect.asVoid)

const lease = Hook.make({
  name: "lease",
  beforePlanning: () =>
    Effect.gen(function*() {
      yield* HookEffects.report({ effectId: "lease-release", name: "Lease release", status: "pending" })
      yield* RequestScope.addFinalizer(() =>
        HookEffects.report({ effectId: "lease-release", name: "Lease release", status: "succeeded" }).pipe(
          Effect.ignore
        )
      )
      yield* RequestScope.fork(renewLeaseForever) // interrupted when the request ends
    }).pipe(Effect.ignore)
})

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({ request: "What's the weather forecast in Lisbon?", requestId: "lease-1" })
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("lease-1"))
  for (const run of Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })) {
    for (const effect of run.effects) yield* Console.log(`${run.name}: ${effect.effectId} ${effect.status}`)
  }
}).pipe(Effect.provide(Agent.layerOffline({ tools: [weatherForecast], hooks: [lease] })))

NodeRuntime.runMain(main)
