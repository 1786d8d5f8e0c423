/**
 * Runs the plan-policy recipe (seed 000 §7.4): a stock quote is allowed, a
 * trade is denied by the required after-planning hook, and the caller tells
 * the denial (`RequiredAfterPlanningError`) from a successful answer.
 *
 *   npm run example:plan-policy
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { Agent, Pipeline } from "effect-agent-pipeline"
import { allTools } from "../shared/DemoTools.js"
import { allowedOperations, OperationNotAllowed } from "./PlanPolicy.js"

const policy = allowedOperations([{ namespace: "demo-tools", agent: "stock-service", capability: "stock_quote" }])

const ask = (request: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    return yield* pipeline.process({ request }).pipe(
      Effect.map((result) =>
        result._tag === "Completed" ? `ALLOWED: ${result.response.response}` : "SUSPENDED (unexpected here)"
      ),
      // Only the success branch may deliver an answer; a required-hook rejection is a denial.
      // The hook's own failure is the cause: the application's typed denial is
      // told apart from a fault in the hook.
      Effect.catchTag("RequiredAfterPlanningError", (rejected) =>
        Effect.succeed(
          rejected.cause instanceof OperationNotAllowed
            ? `DENIED by ${rejected.hookName}: ${rejected.detail}`
            : `FAILED in ${rejected.hookName}: ${rejected.detail}`
        ))
    )
  })

const program = Effect.gen(function*() {
  yield* Console.log(yield* ask("What is the stock quote for ACME?"))
  yield* Console.log(yield* ask("Buy 10 shares of ACME stock"))
})

program.pipe(Effect.provide(Agent.layerOffline({ hooks: [policy], tools: allTools })), NodeRuntime.runMain)
