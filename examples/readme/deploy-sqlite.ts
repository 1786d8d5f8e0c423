import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, CheckpointKey, ExecutionStore, OfflineModel, Pipeline } from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { QuotesLive, stockQuote } from "./tools.js"

// One file (WAL mode), created with its folder on first use.
const StoresLive = Sqlite.layer({ filename: "./data/agent.db" })

const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: [stockQuote],
  executionStore: StoresLive,
  checkpointStore: StoresLive,
  // The key that seals checkpoints, kept beside the database (created 0600
  // on first use): checkpoints survive a restart.
  checkpointKey: CheckpointKey.layerFile("./data/agent.db.checkpoint-key")
}).pipe(Layer.provide(QuotesLive))

const ask = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  return yield* pipeline.process({ request: "What is the stock quote for ACME?" })
})

const readBack = (requestId: string) =>
  Effect.gen(function*() {
    const store = yield* ExecutionStore.ExecutionStore
    return yield* store.get(requestId)
  })

const main = Effect.gen(function*() {
  const result = yield* ask.pipe(Effect.provide(AgentLive))
  if (result._tag !== "Completed") return
  // Another agent over the same file — another process, or after a restart — reads the record.
  const stored = yield* readBack(result.response.requestId).pipe(Effect.provide(AgentLive))
  yield* Console.log(`read back: ${Option.match(stored, { onNone: () => "none", onSome: (r) => r.lifecycle?.status })}`)
})

NodeRuntime.runMain(main)
