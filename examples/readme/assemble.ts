/**
 * README "Assembling an agent": every part of `Agent.layer` by name, and
 * swapping the model by swapping that one part.
 */
import { QuotesLive, stockQuote } from "./tools.js"
// #region readme
import { Duration, Layer } from "effect"
import { Agent, ExecutionStore, OfflineModel, ScriptedModel } from "effect-agent-pipeline"

export const AgentLive = Agent.layer({
  model: OfflineModel.layer, // required: any Layer providing @effect/ai's LanguageModel
  tools: [stockQuote], // required (may be empty)
  hooks: [], // or an Effect that builds them
  executionStore: ExecutionStore.layerMemory({
    retention: { normal: Duration.hours(1), error: Duration.days(1) }
  }),
  gate: { forRequest: () => ({ cacheReadEnabled: true, cacheVary: { model: "offline-v1" } }) },
  options: { maxPhases: 2, concurrency: 8, maxRequestBytes: 64 * 1024 }
}).pipe(Layer.provide(QuotesLive)) // what the tool handlers need

// Another model is another `model` part; nothing else changes.
export const ScriptedAgent = Agent.layer({
  model: ScriptedModel.layer({ plans: [{ steps: [], terminal: true }], synthesis: "Nothing to do." }),
  tools: []
})
// #endregion readme
