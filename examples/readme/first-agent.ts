import { Tool } from "@effect/ai"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option, Schema } from "effect"
import { Agent, ExecutionStore, Hook, Pipeline, ToolRegistry } from "effect-agent-pipeline"

// A tool is an @effect/ai Tool (Schema parameters and result) plus a handler,
// registered under a namespace and an agent.
const WeatherForecast = Tool.make("weather_forecast", {
  description: "Weather forecast (temperature, conditions) for a city",
  parameters: { city: Schema.String },
  success: Schema.Struct({ city: Schema.String, temperatureC: Schema.Number, conditions: Schema.String })
})

const weather = ToolRegistry.entry({
  namespace: "my-app",
  agent: "weather-service",
  tool: WeatherForecast,
  handler: ({ city }) => Effect.succeed({ city, temperatureC: 21, conditions: "sunny" })
})

// A hook adds context before planning (rendered as <agent_memory> in the prompt).
const deskNotes = Hook.make({
  name: "desk-notes",
  beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "Forecasts are for today." } })
})

const program = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "What's the weather forecast in Lisbon?", requestId: "first-1" })
  if (result._tag === "Completed") yield* Console.log(result.response.response)

  // The evidence: which hooks ran and what they decided.
  const store = yield* ExecutionStore.ExecutionStore
  const record = yield* store.get("first-1")
  if (Option.isSome(record)) {
    for (const hook of record.value.hookInvocations) {
      yield* Console.log(`${hook.stage} ${hook.name}: ${hook.outcome}`)
    }
  }
})

program.pipe(Effect.provide(Agent.layerOffline({ tools: [weather], hooks: [deskNotes] })), NodeRuntime.runMain)
