import { NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option } from "effect"
import { Activity, Agent, CheckpointKey, ExecutionStore, OfflineModel, Pipeline } from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"
import * as Redis from "effect-agent-pipeline/redis"
import { QuotesLive, stockQuote } from "./tools.js"

// Records and checkpoints in one database, over one connection pool; the
// tables are created (migrated) on first use.
const StoresLive = Layer.unwrapEffect(
  Effect.map(
    Config.redacted("DATABASE_URL"),
    (url) => Postgres.layer({ url, retention: { normal: "3 days", error: "30 days" } })
  )
)

// What every process is working on right now, for the activity hooks.
const ActivityLive = Layer.unwrapEffect(Effect.map(Config.redacted("REDIS_URL"), (url) => Redis.layer({ url })))

const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: [stockQuote],
  hooks: Effect.map(Activity.make({ agent: "desk" }), (activity) => activity.hooks),
  executionStore: StoresLive,
  checkpointStore: StoresLive,
  // Every process sets the same AGENT_CHECKPOINT_KEY (`openssl rand -hex 32`):
  // a checkpoint sealed by one can be resumed by another.
  checkpointKey: CheckpointKey.layerConfig(),
  // Running records say which process owns them until when; a record whose
  // process died reads `abandoned` once this lease ran out.
  options: { recordLease: "30 seconds", checkpointClaimLease: "10 minutes" }
}).pipe(Layer.provide(ActivityLive), Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "What is the stock quote for ACME?" })
  if (result._tag !== "Completed") return
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get(result.response.requestId))
  if (Option.isNone(record)) return
  yield* Console.log(`stored in PostgreSQL: ${record.value.lifecycle?.status}`)
  // The activity signal lived in Redis while the request ran, and is gone.
  for (const effect of record.value.hookInvocations.flatMap((run) => run.effects)) {
    if (effect.effectId === "activity_signal_cleanup") yield* Console.log(`signal cleaned up: ${effect.status}`)
  }
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
