/**
 * Test harness: a pipeline over a scripted (or offline) model, the demo
 * tools, an in-memory execution store and checkpoint store, and the given
 * hooks. Returns the services the tests inspect.
 */
import { LanguageModel } from "@effect/ai"
import { Context, Effect, Layer, Option } from "effect"
import {
  Approval,
  CheckpointStore,
  ConversationHistory,
  ExecutionRecord,
  ExecutionStore,
  type Hook,
  type Json,
  OfflineModel,
  Pipeline,
  PipelineHooks,
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

export const plan = (steps: ReadonlyArray<unknown>, terminal = true) => ({ steps, terminal })

export interface HarnessOptions {
  readonly hooks?: ReadonlyArray<Hook.Hook<never>>
  readonly script?: ScriptedModel.Script
  readonly offline?: boolean
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

/** Builds the harness; fails with the registration error if hooks are invalid. */
export const makeHarness = (options: HarnessOptions = {}) =>
  Effect.gen(function*() {
    const scripted = yield* ScriptedModel.make(options.script ?? { plans: [], synthesis: "draft answer" })
    const model = options.offline ? yield* OfflineModel.make : scripted.service
    const store = options.store ??
      (yield* ExecutionStore.makeMemory(options.retention ? { retention: options.retention } : undefined))
    const checkpoints = yield* CheckpointStore.makeMemory
    let services = Context.empty().pipe(
      Context.add(LanguageModel.LanguageModel, model),
      Context.add(ExecutionStore.ExecutionStore, store),
      Context.add(CheckpointStore.CheckpointStore, checkpoints)
    )
    if (options.approval) services = Context.add(services, Approval.ApprovalPolicy, options.approval)
    if (options.preparer) {
      services = Context.add(services, ConversationHistory.ConversationHistoryPreparer, options.preparer)
    }
    if (options.promptBuilder) services = Context.add(services, PromptBuilder.PromptBuilder, options.promptBuilder)
    if (options.gate) {
      const gate = options.gate
      services = Context.add(services, ShortCircuit.Gate, { forRequest: () => gate })
    }
    const layer = Pipeline.layer(options.options).pipe(
      Layer.provide(PipelineHooks.layer(options.hooks ?? [])),
      Layer.provide(ToolRegistry.layer(options.tools ?? allTools)),
      Layer.provide(Layer.succeedContext(services))
    )
    // These layers hold no resources, so the built context outlives the scope.
    const context = yield* Effect.scoped(Layer.build(layer))
    const pipeline = Context.get(context, Pipeline.Pipeline)
    return {
      pipeline,
      store,
      checkpoints,
      prompts: scripted.prompts,
      plansUsed: scripted.plansUsed,
      record: (requestId: string) =>
        Effect.flatMap(Effect.orDie(store.get(requestId)), (o) =>
          Option.isSome(o) ? Effect.succeed(o.value) : Effect.dieMessage(`no record for ${requestId}`))
    } satisfies Harness
  })

/** A hook that records the order in which its stages were called. */
export const tracer = (name: string, calls: Array<string>): Hook.Hook<never> => ({
  name,
  beforePlanning: () => Effect.sync(() => void calls.push(`before_planning:${name}`)),
  afterPlanning: (_ctx, p) => Effect.sync(() => (calls.push(`after_planning:${name}`), p)),
  afterExecution: () => Effect.sync(() => void calls.push(`after_execution:${name}`)),
  afterSynthesis: (_ctx, text) => Effect.sync(() => (calls.push(`after_synthesis:${name}`), text))
})
