/**
 * The agent the durable bench (`durable.ts`) and its runner processes
 * (`durableRunner.ts`) share: a scripted plan of two charges and a
 * synthesis (as test/durable/DurableRequest.test.ts), the charge tool
 * sleeping up to `toolMillis`, and the agent's stores (SQLite or
 * PostgreSQL, the same ones in-process and durable requests record into).
 */
import { Tool } from "@effect/ai"
import { Duration, Effect, Layer, Schema } from "effect"
import { Agent, CheckpointStore, ExecutionStore, Hook, ScriptedModel, ToolRegistry } from "../src/index.js"

const Charge = Tool.make("charge", {
  description: "Charge an amount",
  parameters: { cents: Schema.Number },
  success: Schema.String
})

const step = (id: string, cents: number) => ({
  step_id: id,
  namespace: "billing",
  agent: "payments",
  capability: "charge",
  parameters: { cents }
})

/** Two tool steps, then synthesis (one planning call: the plan is terminal). */
export const plan = { steps: [step("c1", 100), step("c2", 250)], terminal: true }

export type Stores = Layer.Layer<
  ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore,
  ExecutionStore.ExecutionStoreError
>

export interface BenchAgentOptions {
  readonly stores: Stores
  /** How many planning calls the script answers (one per request). */
  readonly plans: number
  /** Each tool call sleeps this many milliseconds (0: none). */
  readonly toolMillis?: number | undefined
  /** Called from an AfterSynthesis hook with the request id (a request's end on the runner that ran it). */
  readonly onSynthesis?: ((requestId: string) => void) | undefined
}

/** The bench's agent. */
export const benchAgent = (options: BenchAgentOptions) => {
  const millis = options.toolMillis ?? 0
  const charge = ToolRegistry.entry({
    namespace: "billing",
    agent: "payments",
    tool: Charge,
    handler: ({ cents }) =>
      millis > 0
        ? Effect.as(Effect.sleep(Duration.millis(millis)), `charged ${cents}`)
        : Effect.succeed(`charged ${cents}`)
  })
  const onSynthesis = options.onSynthesis
  return Agent.layer({
    model: ScriptedModel.layer({ plans: Array.from({ length: options.plans }, () => plan), synthesis: "done" }),
    tools: [charge],
    hooks: onSynthesis === undefined ? [] : [
      Hook.make({
        name: "bench-done",
        afterSynthesis: (ctx, text) => Effect.sync(() => (onSynthesis(ctx.requestId), text))
      })
    ],
    executionStore: options.stores,
    checkpointStore: options.stores
  })
}
