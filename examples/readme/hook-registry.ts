import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionStore, Hook, HookRegistry, Pipeline } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

// The agent's own hooks run in every request; `registry: true` adds the HookRegistry.
const audit = Hook.make({ name: "audit", afterExecution: () => Effect.void })
const AgentLive = Agent.layerOffline({ hooks: [audit], tools: [stockQuote], registry: true }).pipe(
  Layer.provide(QuotesLive)
)

const ask = (requestId: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId })
    yield* Console.log(`${requestId}: ${result._tag === "Completed" ? result.response.response : "suspended"}`)
  })

const main = Effect.gen(function*() {
  yield* ask("before")

  // The handler's type follows the point: after_synthesis gets and returns the response text.
  const disclaimer = yield* HookRegistry.register(
    "after_synthesis",
    (_ctx, text) => Effect.succeed(`${text}\n(Quotes are delayed 15 minutes.)`),
    { name: "disclaimer" }
  )
  // No name: one is generated.
  const watch = yield* HookRegistry.register("around_tool_execution", () => Effect.void)
  yield* Console.log(`hooks: ${(yield* HookRegistry.hooks).map((h) => h.name).join(", ")}`)
  yield* ask("registered")

  // A second hook of the same name is refused; nothing changes.
  yield* HookRegistry.register("after_synthesis", (_ctx, text) => Effect.succeed(text), { name: "disclaimer" }).pipe(
    Effect.catchTag("HookRegistryError", (e) => Console.log(`refused: ${e.reason}`))
  )

  // Registered hooks are recorded like the agent's own.
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("registered"))
  for (const run of Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })) {
    yield* Console.log(`  ${run.stage} ${run.name}: ${run.status}`)
  }

  // Removal takes effect from the next request on.
  yield* disclaimer.remove
  yield* HookRegistry.unregister(watch.name)
  yield* ask("removed")
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
