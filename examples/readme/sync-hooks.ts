import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionStore, Hook, Pipeline } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

let modelCalls = 0

const light = Hook.make({
  name: "light",
  // Counts every model call and passes the prompt on unchanged.
  beforeInference: Hook.sync((_call, prompt: string) => {
    modelCalls++
    return prompt
  }),
  // Rewrites the final answer: the value is judged exactly as an Effect's value.
  afterSynthesis: Hook.sync((_ctx, text: string) => `${text}\n(Quotes are delayed 15 minutes.)`),
  // Sees each tool run begin (and could return a finish callback).
  around: { toolExecution: Hook.sync(() => undefined) }
})

const AgentLive = Agent.layerOffline({ hooks: [light], tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId: "sync-1" })
  if (result._tag === "Completed") yield* Console.log(result.response.response)
  yield* Console.log(`model calls: ${modelCalls}`)
  // Recorded like any hook run.
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("sync-1"))
  for (const run of Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })) {
    yield* Console.log(`${run.stage} ${run.name}: ${run.status}`)
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
