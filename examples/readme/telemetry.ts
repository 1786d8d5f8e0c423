import { Effect, Layer } from "effect"
import { Agent, Pipeline } from "effect-agent-pipeline"
import * as Telemetry from "effect-agent-pipeline/otel"
import { QuotesLive, stockQuote } from "./tools.js"

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  return yield* pipeline.process({ request: "What is the stock quote for ACME?" })
})

// OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 exports there; unset, the
// Layer is empty: no tracer, no spans, nothing sent. Provide it outermost, so
// its last export happens after the agent has shut down.
export const program = main.pipe(
  Effect.provide(Agent.layerOffline({ tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))),
  Effect.provide(Telemetry.layerConfig)
)
