import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Fiber, Stream } from "effect"
import { Agent, Audit, Pipeline, Progress } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// Redaction on (no tool exempt), and an audit event for every model call.
const AgentLive = Agent.layerOffline({
  tools: [weatherForecast],
  hooks: Effect.map(Audit.hook({ logLevel: "None" }), (audit) => [audit]),
  redaction: {}
})

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  // Live progress of the request, followed from before it starts.
  const progress = yield* Progress.events("guarded-1").pipe(
    Stream.runForEach((event) =>
      event._tag === "ToolEnded"
        ? Console.log(`tool ${event.capability}: ${event.status}`)
        : event._tag === "HookStarted"
        ? Console.log(`hook ${event.hookName} (${event.stage})`)
        : event._tag === "HookEnded"
        ? Effect.void
        : Console.log(event.message)
    ),
    Effect.fork
  )
  // The streamed answer, token by token: the address never reaches the client.
  let streamed = ""
  yield* pipeline.stream({
    request: "Weather forecast in Lisbon, for ann.lee@corp.example",
    requestId: "guarded-1"
  }).pipe(Stream.runForEach((event) => Effect.sync(() => (streamed += event._tag === "Token" ? event.text : ""))))
  yield* Fiber.join(progress)
  yield* Console.log(streamed)
})

NodeRuntime.runMain(main.pipe(Effect.provide(AgentLive)))
