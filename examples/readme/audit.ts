import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, HashMap, Logger, Metric, MetricState, Option } from "effect"
import { Agent, Audit, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// Prices per million tokens, by model id. The offline model counts about
// 4 characters a token; a model the table does not price has no cost.
const prices = { offline: { inputPerMillion: 0.4, outputPerMillion: 1.6 } }

const AgentLive = Agent.layerOffline({
  tools: [weatherForecast],
  hooks: Effect.map(Audit.hook({ prices }), (audit) => [audit])
})

/** The sum of a counter's series, as an exporter reads them. */
const total = (name: string) =>
  Effect.map(Metric.snapshot, (pairs) =>
    pairs
      .filter((pair) => pair.metricKey.name === name)
      .reduce(
        (sum, pair) => sum + (MetricState.isCounterState(pair.metricState) ? Number(pair.metricState.count) : 0),
        0
      ))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  // Where the log lines go: here, a list (a deployment ships them with
  // Logger.json or an OpenTelemetry logger). Their fields are annotations.
  const lines: Array<string> = []
  const collect = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, message }) => {
      if (String(message) !== Audit.logMessage) return
      const fields = ["purpose", "model", "provider", "outcome", "inputTokens", "outputTokens", "cost"]
      const field = (key: string) => String(Option.getOrElse(HashMap.get(annotations, key), () => "-"))
      lines.push(`${String(message)}: ${fields.map((key) => `${key}=${field(key)}`).join(" ")}`)
    })
  )
  const [calls, cost] = [yield* total("pipeline.model.calls"), yield* total("pipeline.model.cost")]

  const request = { request: "What is the weather forecast in Lisbon?", requestId: "audited" }
  yield* pipeline.process(request).pipe(Effect.provide(collect))

  // 1. The record: one effect per model call, on the audit hook's runs.
  const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("audited"))
  for (const invocation of Option.getOrThrow(record).hookInvocations) {
    for (const effect of invocation.effects) yield* Console.log(`${effect.effectId}: ${effect.summary}`)
  }
  // 2. The log lines.
  for (const line of lines) yield* Console.log(line)
  // 3. The metrics (what this request added to them).
  const added = (yield* total("pipeline.model.cost")) - cost
  yield* Console.log(`calls: ${(yield* total("pipeline.model.calls")) - calls}, cost: ${added.toFixed(7)} USD`)
}).pipe(Effect.provide(AgentLive))

// The program's own logger is the list above, not runMain's pretty one.
NodeRuntime.runMain(main, { disablePrettyLogger: true })
