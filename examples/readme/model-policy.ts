import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Agent, ExecutionStore, OfflineModel, Pipeline } from "effect-agent-pipeline"
import * as OpenAi from "effect-agent-pipeline/openai"
import { QuotesLive, stockQuote } from "./tools.js"

const AgentLive = Agent.layer({
  model: OpenAi.layerConfig("gpt-4.1-mini"), // OPENAI_API_KEY, OPENAI_BASE_URL
  // Asked once the primary gave up on a call (its retries spent).
  fallbackModel: OfflineModel.layer,
  tools: [stockQuote],
  options: {
    modelTimeout: "20 seconds", // per attempt; for a stream, the longest wait for its next part
    modelRetries: 3, // 429, 408, 409, 5xx, resets, timeouts; backoff from modelRetryDelay, retry-after honoured
    planReasks: 1, // an answer that is not a plan is asked again once, with the decode error
    toolTimeout: "10 seconds", // per tool call; a tool entry's own `timeout` overrides it
    modelCalls: "metadata" // keep tokens, timing and outcomes of model calls — not prompts or outputs
  }
}).pipe(Layer.provide(QuotesLive))

/** Prints what the record keeps of a request's model calls. */
const printModelCalls = (requestId: string) =>
  Effect.gen(function*() {
    const store = yield* ExecutionStore.ExecutionStore
    const record = yield* store.get(requestId)
    if (Option.isNone(record)) return
    for (const call of record.value.modelCalls ?? []) {
      // call.usage: the tokens in and out the provider reported, if it did.
      const usage = call.usage === undefined ? "no usage" : "usage recorded"
      yield* Console.log(
        `${call.purpose} (re-ask ${call.reask}) attempt ${call.attempt} on ${call.model}: ${call.outcome}, ${usage}`
      )
    }
  })

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId: "policy-1" })
  if (result._tag === "Completed") yield* Console.log(result.response.response)
  yield* printModelCalls("policy-1")
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
