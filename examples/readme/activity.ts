/**
 * README "Activity coordination": an agent that announces what each request
 * works on and sees what the others do, in the planning prompt.
 */
import { weatherForecast } from "../shared/DemoTools.js"
// #region readme
import { Effect, Layer } from "effect"
import { Activity, ActivityStore, Agent } from "effect-agent-pipeline"

// The domain comes from `domain`, or from the request's `metadata.activity_domain`.
const activity = Activity.make({ agent: "forecaster", ttl: "30 seconds" })

export const AgentLive = Agent.layerOffline({
  tools: [weatherForecast],
  hooks: Effect.map(activity, (hooks) => hooks.hooks) // announcement first, then cleanup
}).pipe(
  // One process; several share SQLite, PostgreSQL or Redis (see below).
  Layer.provideMerge(ActivityStore.layerMemory)
)
// #endregion readme
