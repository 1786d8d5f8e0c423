import { NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option } from "effect"
import { Agent, CheckpointKey, ExecutionStore, OfflineModel } from "effect-agent-pipeline"
import * as DurablePipeline from "effect-agent-pipeline/durable"
import * as Postgres from "effect-agent-pipeline/postgres"
import { QuotesLive, stockQuote } from "./tools.js"

// Every runner of the pool runs this program: the same agent, the same
// database (records, checkpoints and the engine's tables), its own address.
const StoresLive = Layer.unwrapEffect(
  Effect.map(Config.redacted("DATABASE_URL"), (url) => Postgres.layer({ url }))
)

const EngineLive = Layer.unwrapEffect(
  Effect.map(
    Config.all({
      url: Config.redacted("DATABASE_URL"),
      // Where the other runners reach this one.
      host: Config.withDefault(Config.string("RUNNER_HOST"), "127.0.0.1"),
      port: Config.port("RUNNER_PORT")
    }),
    ({ host, port, url }) => DurablePipeline.enginePostgres({ url, runner: { host, port } })
  )
)

const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: [stockQuote],
  executionStore: StoresLive,
  checkpointStore: StoresLive,
  // One AGENT_CHECKPOINT_KEY for the pool: any runner verifies any approval.
  checkpointKey: CheckpointKey.layerConfig()
}).pipe(Layer.provide(QuotesLive))

const RunnerLive = DurablePipeline.layer().pipe(Layer.provideMerge(AgentLive), Layer.provide(EngineLive))

const main = Effect.gen(function*() {
  const durable = yield* DurablePipeline.DurablePipeline
  // Whichever runner owns the request's shard runs it; if that runner dies,
  // another takes the request over.
  const result = yield* durable.process({ requestId: "quote-7", request: "What is the stock quote for ACME?" })
  if (result._tag === "Completed") yield* Console.log(result.response.response)
  const store = yield* ExecutionStore.ExecutionStore
  const record = Option.getOrThrow(yield* store.get("quote-7"))
  yield* Console.log(`quote-7: ${record.mode}, ${record.lifecycle?.status}`)
}).pipe(Effect.provide(RunnerLive))

NodeRuntime.runMain(main)
