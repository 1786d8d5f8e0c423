import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Agent, Pipeline, PipelineRequest } from "effect-agent-pipeline"
import { QuotesLive, stockQuote } from "./tools.js"

// body: unknown, e.g. a parsed HTTP request body.
const answer = (body: unknown) =>
  Effect.gen(function*() {
    // Unknown fields, non-JSON metadata, oversized input → InvalidRequest
    // with the first failing path and a one-line detail.
    const request = yield* PipelineRequest.decode(body)
    const pipeline = yield* Pipeline.Pipeline
    return yield* pipeline.process(request)
  })

const main = Effect.gen(function*() {
  const misspelled = yield* Effect.flip(answer({ request: "What is the stock quote for ACME?", requestID: "q-1" }))
  if (misspelled._tag === "InvalidRequest") {
    yield* Console.log(`refused: ${misspelled.reason} at ${misspelled.path}`)
  }
  const result = yield* answer(JSON.parse(`{"request": "What is the stock quote for ACME?", "requestId": "q-1"}`))
  yield* Console.log(`${result._tag}: ${result._tag === "Completed" ? result.response.requestId : "suspended"}`)
}).pipe(Effect.provide(Agent.layerOffline({ tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))))

NodeRuntime.runMain(main)
