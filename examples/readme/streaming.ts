/**
 * README "Results and streaming": what `process` returns, the events
 * `stream` emits, and telling typed errors apart.
 */
import { weatherForecast } from "../shared/DemoTools.js"
// #region readme
import { Console, Effect, Stream } from "effect"
import { Agent, Pipeline } from "effect-agent-pipeline"

// Buffered: Completed (with the AgentResponse) or Suspended (waiting for a human).
export const buffered = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "What's the weather forecast in Lisbon?" })
  switch (result._tag) {
    case "Completed": {
      const { confidence, phases, rawDraft, response } = result.response
      yield* Console.log(`${response} (confidence ${confidence}, ${phases.length} phase)`)
      yield* Console.log(`the model's draft before AfterSynthesis hooks: ${rawDraft}`)
      break
    }
    case "Suspended":
      yield* Console.log(`waiting for approval at checkpoint ${result.checkpoint.checkpointId}`)
  }
})

// Streamed: Token events as the model writes, then exactly one Completed
// (the final response, after AfterSynthesis hooks) or Suspended.
export const streamed = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  yield* pipeline.stream({ request: "What's the weather forecast in Lisbon?" }).pipe(
    Stream.runForEach((event) => {
      switch (event._tag) {
        case "Token":
          return Console.log(`token: ${JSON.stringify(event.text)}`)
        case "Completed":
          return Console.log(`final: ${event.response.response}`)
        case "Suspended":
          return Console.log(`suspended: ${event.checkpoint.checkpointId}`)
      }
    })
  )
})

// Every failure is a typed PipelineError: handle the ones you expect by tag.
export const safely = streamed.pipe(
  Effect.catchTags({
    InvalidRequest: (e) => Console.log(`bad request at ${e.path}: ${e.detail}`),
    PlanningError: (e) => Console.log(`the model did not produce a valid plan: ${e.detail}`)
  })
)

export const AgentLive = Agent.layerOffline({ tools: [weatherForecast] })
// #endregion readme
