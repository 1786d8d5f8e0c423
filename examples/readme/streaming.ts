import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Stream } from "effect"
import { Agent, Pipeline } from "effect-agent-pipeline"
import { weatherForecast } from "./tools.js"

// Buffered: Completed (with the AgentResponse) or Suspended (waiting for a human).
const buffered = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "What's the weather forecast in Lisbon?" })
  switch (result._tag) {
    case "Completed": {
      const { confidence, phases, rawDraft, response } = result.response
      yield* Console.log(`${response}\n(confidence ${confidence}, ${phases.length} phase)`)
      yield* Console.log(`the draft before AfterSynthesis hooks is the same: ${rawDraft === response}`)
      break
    }
    case "Suspended":
      yield* Console.log(`waiting for approval at checkpoint ${result.checkpoint.checkpointId}`)
  }
})

// Streamed: Token events as the model writes, then exactly one Completed
// (the final response, after AfterSynthesis hooks) or Suspended.
const streamed = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  let text = ""
  let tokens = 0
  yield* pipeline.stream({ request: "What's the weather forecast in Lisbon?" }).pipe(
    Stream.runForEach((event) => {
      switch (event._tag) {
        case "Token":
          return Effect.sync(() => {
            text += event.text
            tokens++
          })
        case "Completed":
          return Console.log(
            `${tokens} tokens, then Completed; they add up to its response: ${text === event.response.response}`
          )
        case "Suspended":
          return Console.log(`suspended: ${event.checkpoint.checkpointId}`)
      }
    })
  )
})

// Every failure is a typed PipelineError: handle the ones you expect by tag.
const safely = streamed.pipe(
  Effect.catchTags({
    InvalidRequest: (e) => Console.log(`bad request at ${e.path}: ${e.detail}`),
    PlanningError: (e) => Console.log(`the model did not produce a valid plan (${e.reason})`)
  })
)

// A model that answers something that is not a plan, twice (the re-ask too).
const Confused = Agent.layerTest({ tools: [], script: { plans: ["not a plan", "still not"], synthesis: "" } })

const main = Effect.gen(function*() {
  yield* buffered
  yield* safely
}).pipe(
  Effect.provide(Agent.layerOffline({ tools: [weatherForecast] })),
  Effect.zipRight(Effect.provide(safely, Confused))
)

NodeRuntime.runMain(main)
