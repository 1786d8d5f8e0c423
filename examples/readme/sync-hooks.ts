/**
 * README "Synchronous handlers": handlers that do no effectful work, written
 * as plain functions with `Hook.sync`.
 */
import { QuotesLive, stockQuote } from "./tools.js"
// #region readme
import { Layer } from "effect"
import { Agent, Hook } from "effect-agent-pipeline"

let modelCalls = 0

const light = Hook.make({
  name: "light",
  // Counts every model call and passes the prompt on unchanged.
  beforeInference: Hook.sync((_call, prompt: string) => {
    modelCalls++
    return prompt
  }),
  // Rewrites the final answer: the value is judged exactly as an Effect's value.
  afterSynthesis: Hook.sync((_ctx, text: string) => text.replaceAll("ACME", "Acme Corp.")),
  // Sees each tool run begin (and could return a finish callback).
  around: { toolExecution: Hook.sync(() => undefined) }
})

export const AgentLive = Agent.layerOffline({ hooks: [light], tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))
// #endregion readme

export const calls = () => modelCalls
