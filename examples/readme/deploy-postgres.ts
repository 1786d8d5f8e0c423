/**
 * README "Stores and deployments": several agent processes sharing one
 * PostgreSQL database (records and checkpoints), assembled by hand.
 */
import { allTools } from "../shared/DemoTools.js"
// #region readme
import { Config, Effect, Layer } from "effect"
import { Agent, OfflineModel } from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"

// Records and checkpoints in one database, over one connection pool; the
// tables are created (migrated) on first use.
const StoresLive = Layer.unwrapEffect(
  Effect.map(Config.redacted("DATABASE_URL"), (url) =>
    Postgres.layer({ url, retention: { normal: "3 days", error: "30 days" } }))
)

export const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: allTools,
  executionStore: StoresLive,
  checkpointStore: StoresLive,
  // Running records say which process owns them until when; a record whose
  // process died reads `abandoned` once this lease ran out.
  options: { recordLease: "30 seconds", checkpointClaimLease: "10 minutes" }
})
// #endregion readme
