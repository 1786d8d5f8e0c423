/**
 * README "Telemetry": spans and metrics exported over OTLP/HTTP when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set, nothing otherwise.
 */
import { allTools } from "../shared/DemoTools.js"
// #region readme
import { Effect } from "effect"
import { Agent, Pipeline } from "effect-agent-pipeline"
import * as Telemetry from "effect-agent-pipeline/otel"

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  return yield* pipeline.process({ request: "What's the weather forecast in Lisbon?" })
})

// OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 exports there; unset, the
// Layer is empty: no tracer, no spans, nothing sent. Provide it outermost, so
// its last export happens after the agent has shut down.
export const program = main.pipe(
  Effect.provide(Agent.layerOffline({ tools: allTools })),
  Effect.provide(Telemetry.layerConfig)
) // NodeRuntime.runMain(program)
// #endregion readme
