import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Agent, Hook, Pipeline } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

// Every operation hook call gets the run's RunMeta last: the request's id,
// the round of the model loop (planning phase n and its tool calls: n - 1;
// the synthesis after k phases: k) and the hook's group.
const rounds = Hook.make({
  name: "rounds",
  around: {
    inference: (call, meta) => Console.log(`${meta.runId} round ${meta.iteration}: ${call.payload.purpose}`)
  },
  beforeTool: (call, args, meta) =>
    Effect.as(Console.log(`${meta.runId} round ${meta.iteration}: tool ${call.payload.capability}`), args)
})

const AgentLive = Agent.layerOffline({ tools: [stockQuote], hooks: [rounds] }).pipe(Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId: "meta-1" })
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
