/**
 * What the "store in trouble" tests share: an agent over given stores with
 * the required plan boundary (no trades), and a logger that keeps warnings.
 */
import { Effect, type Layer, Logger } from "effect"
import { Agent, type CheckpointStore, type ExecutionStore, Hook, OfflineModel } from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"

/** An offline agent whose required AfterPlanning hook refuses any trade. */
export const agentWithBoundary = <E>(
  stores: Layer.Layer<ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore, E>
) =>
  Agent.layer({
    model: OfflineModel.layer,
    tools: allTools,
    hooks: [
      Hook.required({
        name: "no-trades",
        afterPlanning: (_ctx, plan) =>
          plan.steps.some((s) => s.capability === "execute_trade")
            ? Effect.fail("trades are not allowed")
            : Effect.succeed(plan)
      })
    ],
    executionStore: stores,
    checkpointStore: stores
  })

/** A logger Layer keeping every warning's message (as JSON) in `warnings`. */
export const keepingWarnings = (warnings: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(JSON.stringify(message))
    })
  )
