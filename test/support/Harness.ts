/**
 * Test harness: a pipeline over a scripted model, the demo
 * tools, an in-memory execution store and checkpoint store, and the given
 * hooks. Returns the services the tests inspect.
 */
import { Context, Effect, Layer } from "effect"
import {
  Agent,
  Approval,
  CheckpointStore,
  ConversationHistory,
  ExecutionRecord,
  ExecutionStore,
  type Hook,
  type Json,
  Pipeline,
  type PipelineRequest,
  PromptBuilder,
  ScriptedModel,
  ShortCircuit,
  ToolRegistry
} from "effect-agent-pipeline"
import { allTools, NAMESPACE } from "../../examples/shared/DemoTools.js"

export { NAMESPACE }

/** A plan step for the demo tools. */
export const quoteStep = (stepId: string, symbol = "ACME", extra: Record<string, unknown> = {}) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "stock-service",
  capability: "stock_quote",
  parameters: { symbol },
  ...extra
})

export const tradeStep = (stepId: string) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "trading-service",
  capability: "execute_trade",
  parameters: { symbol: "ACME", quantity: 10, side: "buy" }
})

export const weatherStep = (stepId: string, city = "Paris", extra: Record<string, unknown> = {}) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "weather-service",
  capability: "weather_forecast",
  parameters: { city },
  ...extra
})

export const convertStep = (stepId: string, amount: Json.Json, extra: Record<string, unknown> = {}) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "fx-service",
  capability: "convert_currency",
  parameters: { amount, from: "USD", to: "EUR" },
  ...extra
})

export const plan = <S>(steps: ReadonlyArray<S>, terminal = true) => ({ steps, terminal })

export interface HarnessOptions {
  readonly hooks?: ReadonlyArray<Hook.Hook<never>>
  readonly script?: ScriptedModel.Script
  readonly options?: Pipeline.PipelineOptions
  readonly approval?: Approval.ApprovalPolicy["Type"]
  readonly gate?: ShortCircuit.PipelineGate
  readonly retention?: ExecutionStore.RetentionSettings
  readonly tools?: ReadonlyArray<ToolRegistry.ToolEntry<never>>
  /** Replaces the in-memory store (e.g. a wrapper that observes writes). */
  readonly store?: ExecutionStore.ExecutionStore.Service
  readonly preparer?: ConversationHistory.ConversationHistoryPreparer["Type"]
  readonly promptBuilder?: PromptBuilder.PromptBuilder.Service
}

export interface Harness {
  readonly pipeline: Pipeline.Pipeline.Service
  readonly store: ExecutionStore.ExecutionStore.Service
  readonly checkpoints: CheckpointStore.CheckpointStore["Type"]
  readonly prompts: ReadonlyArray<ScriptedModel.RecordedPrompt>
  readonly plansUsed: () => number
  /** The stored record (fails the test if absent). */
  readonly record: (requestId: string) => Effect.Effect<ExecutionRecord.ExecutionRecord>
}

/**
 * Builds the harness over `Agent.layerTest` (the demo tools unless `tools`
 * is given); fails with the registration error if hooks are invalid.
 */
export const makeHarness = (options: HarnessOptions = {}) =>
  Effect.gen(function*() {
    const gate = options.gate
    const layer = Agent.layerTest({
      script: options.script ?? { plans: [], synthesis: "draft answer" },
      tools: options.tools ?? allTools,
      hooks: options.hooks ?? [],
      options: options.options,
      approval: options.approval,
      gate: gate === undefined ? undefined : { forRequest: () => gate },
      promptBuilder: options.promptBuilder,
      conversationHistory: options.preparer,
      executionStore: options.store !== undefined
        ? Layer.succeed(ExecutionStore.ExecutionStore, options.store)
        : ExecutionStore.layerMemory(options.retention ? { retention: options.retention } : undefined)
    })
    // The built context outlives the scope: the services keep working, but
    // the scoped background work (the lease keeper's renewals and progress
    // writes) stops with it. Tests of that work provide the agent's Layer
    // for their whole body instead (see test/pipeline/RecordLifecycle.test.ts).
    const context = yield* Effect.scoped(Layer.build(layer))
    const test = Context.get(context, Agent.TestAgent)
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      store: Context.get(context, ExecutionStore.ExecutionStore),
      checkpoints: Context.get(context, CheckpointStore.CheckpointStore),
      prompts: test.prompts,
      plansUsed: test.plansUsed,
      record: (requestId: string) => Effect.orDie(test.record(requestId))
    } satisfies Harness
  })

/** Input as a JavaScript caller could pass it: the types are not checked. */
export const untypedInput = (input: unknown): PipelineRequest.Input => input as PipelineRequest.Input

/** A hook that records the order in which its stages were called. */
export const tracer = (name: string, calls: Array<string>): Hook.Hook<never> => ({
  name,
  beforePlanning: () => Effect.sync(() => void calls.push(`before_planning:${name}`)),
  afterPlanning: (_ctx, p) => Effect.sync(() => (calls.push(`after_planning:${name}`), p)),
  afterExecution: () => Effect.sync(() => void calls.push(`after_execution:${name}`)),
  afterSynthesis: (_ctx, text) => Effect.sync(() => (calls.push(`after_synthesis:${name}`), text))
})
