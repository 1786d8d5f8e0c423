/**
 * Seed 000 §7.4 — allow or reject a plan with the required hook. The rule
 * uses trusted application configuration (namespace, agent and capability
 * together), never an allow-list from the prompt or planner metadata.
 */
import { Effect, Schema } from "effect"
import { Hook } from "effect-agent-pipeline"

export interface Operation {
  readonly namespace: string
  readonly agent: string
  readonly capability: string
}

/** The application's own, typed denial: callers can tell it from an internal fault. */
export class OperationNotAllowed extends Schema.TaggedError<OperationNotAllowed>()("OperationNotAllowed", {
  stepId: Schema.String,
  operation: Schema.String
}) {
  override get message(): string {
    return `step ${this.stepId} uses an operation not allowed by this application (${this.operation})`
  }
}

const keyOf = (o: Operation) => `${o.namespace}/${o.agent}/${o.capability}`

export const allowedOperations = (allowed: ReadonlyArray<Operation>) => {
  // Copied once: concurrent requests only read it.
  const permitted = new Set(allowed.map(keyOf))
  return Hook.required({
    name: "allowed-operations",
    afterPlanning: (_ctx, plan) => {
      for (const step of plan.steps) {
        const operation = keyOf(step)
        if (!permitted.has(operation)) return Effect.fail(new OperationNotAllowed({ stepId: step.step_id, operation }))
      }
      return Effect.succeed(plan)
    }
  })
}
