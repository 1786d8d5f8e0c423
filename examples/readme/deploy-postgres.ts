/**
 * README "Stores and deployments": several agent processes sharing one
 * PostgreSQL database (records and checkpoints) and one Redis (activity
 * signals), assembled by hand.
 */
import { allTools } from "../shared/DemoTools.js"
// #region readme
import { Config, Effect, Layer } from "effect"
import { Activity, Agent, CheckpointKey, OfflineModel } from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"
import * as Redis from "effect-agent-pipeline/redis"

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

export const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: allTools,
  hooks: Effect.map(Activity.make({ agent: "desk" }), (activity) => activity.hooks),
  executionStore: StoresLive,
  checkpointStore: StoresLive,
  // Every process sets the same AGENT_CHECKPOINT_KEY (`openssl rand -hex 32`):
  // a checkpoint sealed by one can be resumed by another.
  checkpointKey: CheckpointKey.layerConfig(),
  // Running records say which process owns them until when; a record whose
  // process died reads `abandoned` once this lease ran out.
  options: { recordLease: "30 seconds", checkpointClaimLease: "10 minutes" }
}).pipe(Layer.provide(ActivityLive))
// #endregion readme
