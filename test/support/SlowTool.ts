/**
 * A tool that holds a request mid-step until the test releases it: for
 * looking at a request's record while it runs.
 */
import { Tool } from "@effect/ai"
import { Deferred, Effect, Schema } from "effect"
import { ToolRegistry } from "effect-agent-pipeline"

const Slow = Tool.make("slow", {
  description: "Waits until released.",
  parameters: { q: Schema.String },
  success: Schema.String
})

/** A plan step that calls the slow tool. */
export const slowStep = (stepId: string) => ({
  step_id: stepId,
  namespace: "test",
  agent: "slow",
  capability: "slow",
  parameters: { q: "x" }
})

/** The slow tool: it signals `started`, then waits for `release`. */
export const slowTool = (started: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  ToolRegistry.entry({
    namespace: "test",
    agent: "slow",
    tool: Slow,
    handler: ({ q }) =>
      Effect.zipRight(Deferred.succeed(started, undefined), Effect.as(Deferred.await(release), `done ${q}`))
  })
