import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Layer } from "effect"
import { Agent, Hook, Pipeline } from "effect-agent-pipeline"
import { executeTrade, QuotesLive, stockQuote } from "./tools.js"

const noTrades = Hook.make({
  name: "no-trades",
  guard: {
    toolCall: (call, proceed) =>
      call.payload.capability === "execute_trade" ? Hook.deny("trades need a human") : proceed
  }
})

// Sees every operation run that ends failed or denied — model calls, tool
// calls, retrievals, memory, phases, the request — with its Cause. It only
// observes: its own failure is recorded and never replaces the operation's.
const alerts = Hook.make({
  name: "alerts",
  onError: (call, result, cause, meta) =>
    Console.log(`${meta.runId}: ${call.operation} ${result.outcome} in round ${meta.iteration}`).pipe(
      Effect.zipRight(Console.log(`  ${Cause.pretty(cause).split("\n")[0]}`))
    )
})

const AgentLive = Agent.layerOffline({
  tools: [stockQuote, executeTrade],
  hooks: [noTrades, alerts]
}).pipe(Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "Buy 10 shares of ACME stock", requestId: "errors-1" })
  yield* Console.log(`request: ${result._tag}`)
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
