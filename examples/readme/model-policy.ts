/**
 * README "Timeouts, retries, re-asks and fallback": an agent on a hosted
 * model with the model policy spelled out, the offline model as its
 * fallback, and a reader of the model calls its records keep.
 */
import { allTools } from "../shared/DemoTools.js"
// #region readme
import { Console, Effect, Option } from "effect"
import { Agent, ExecutionStore, OfflineModel } from "effect-agent-pipeline"
import * as OpenAi from "effect-agent-pipeline/openai"

export const AgentLive = Agent.layer({
  model: OpenAi.layerConfig("gpt-4.1-mini"), // OPENAI_API_KEY, OPENAI_BASE_URL
  // Asked once the primary gave up on a call (its retries spent).
  fallbackModel: OfflineModel.layer,
  tools: allTools,
  options: {
    modelTimeout: "20 seconds", // per attempt; for a stream, the longest wait for its next part
    modelRetries: 3, // 429, 408, 409, 5xx, resets, timeouts; backoff from modelRetryDelay, retry-after honoured
    planReasks: 1, // an answer that is not a plan is asked again once, with the decode error
    toolTimeout: "10 seconds", // per tool call; a tool entry's own `timeout` overrides it
    modelCalls: "metadata" // keep tokens, timing and outcomes of model calls — not prompts or outputs
  }
})

/** Prints what the record keeps of a request's model calls. */
export const printModelCalls = (requestId: string) =>
  Effect.gen(function*() {
    const store = yield* ExecutionStore.ExecutionStore
    const record = yield* store.get(requestId)
    if (Option.isNone(record)) return
    for (const call of record.value.modelCalls ?? []) {
      const tokens = call.usage === undefined
        ? "no usage"
        : `${call.usage.inputTokens ?? "?"} in / ${call.usage.outputTokens ?? "?"} out`
      yield* Console.log(
        `${call.purpose} (re-ask ${call.reask}) attempt ${call.attempt} on ${call.model}: ${call.outcome}, ${tokens}${
          call.error === undefined ? "" : ` — ${call.error.split("\n")[0]}`
        }`
      )
    }
  })
// #endregion readme
