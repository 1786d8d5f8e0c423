/**
 * README "Stores and deployments": the embedded default, a SQLite file.
 */
import { allTools } from "../shared/DemoTools.js"
// #region readme
import { Agent, CheckpointKey, OfflineModel } from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"

// One file (WAL mode), created with its folder on first use.
const StoresLive = Sqlite.layer({ filename: "./data/agent.db" })

export const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: allTools,
  executionStore: StoresLive,
  checkpointStore: StoresLive,
  // The key that seals checkpoints, kept beside the database (created 0600
  // on first use): checkpoints survive a restart.
  checkpointKey: CheckpointKey.layerFile("./data/agent.db.checkpoint-key")
})
// #endregion readme
