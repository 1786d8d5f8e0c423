import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Fiber, Stream } from "effect"
import { Agent, ExecutionStore, Hook, Pipeline, Progress } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// A plan with one tool call, and a stage hook.
const AgentLive = Agent.layerTest({
  tools: [weatherForecast],
  hooks: [
    Hook.make({ name: "rag-retriever", beforePlanning: () => Effect.void })
  ],
  script: {
    plans: [{
      steps: [{
        step_id: "w1",
        namespace: "weather",
        agent: "weather-service",
        capability: "weather_forecast",
        parameters: { city: "Lisbon" }
      }]
    }],
    synthesis: "Sunny, 21 °C."
  }
})

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  // The store is where a request running in another process is read from;
  // a request running here is followed live, from its recorder.
  const store = yield* ExecutionStore.ExecutionStore
  // Opened before the request starts: the stream waits for it, and ends
  // by itself once the request's record is final.
  const progress = yield* Progress.events("weather-1", { store }).pipe(
    Stream.runForEach((event) => {
      switch (event._tag) {
        // Ended events' messages carry durations ("… in 2 ms"); print their status.
        case "ToolEnded":
          return Console.log(`  tool ${event.capability}: ${event.status}`)
        case "HookEnded":
          return Console.log(`  hook ${event.hookName}: ${event.status}`)
        default:
          return Console.log(event.message)
      }
    }),
    Effect.fork
  )
  yield* pipeline.process({ request: "What's the weather in Lisbon?", requestId: "weather-1" })
  yield* Fiber.join(progress)
})

main.pipe(Effect.provide(AgentLive), NodeRuntime.runMain)
