/**
 * README "Stores and deployments": the embedded default, a SQLite file.
 */
import { allTools } from "../shared/DemoTools.js"
// #region readme
import { Agent, OfflineModel } from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"

// One file (WAL mode), created with its folder on first use.
const StoresLive = Sqlite.layer({ filename: "./data/agent.db" })

export const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: allTools,
  executionStore: StoresLive,
  checkpointStore: StoresLive
})
// #endregion readme
