/**
 * Assembling an agent: one call takes every part — the model (required),
 * tools, hooks, stores, policies and options — and returns the Layer that
 * provides the `Pipeline` and the stores its evidence lives in. Each part is
 * named, so a part cannot be swapped by providing a Layer from outside and
 * silently be ignored. `layerOffline` and `layerTest` are presets over
 * {@link layer}.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@effect/ai"
import { type ConfigError, Context, Effect, Either, Layer, type Scope } from "effect"
import * as Inference from "../ai/Inference.js"
import * as ModelConfig from "../ai/ModelConfig.js"
import * as ModelPolicy from "../ai/ModelPolicy.js"
import * as OfflineModel from "../ai/OfflineModel.js"
import * as ScriptedModel from "../ai/ScriptedModel.js"
import * as ToolRegistry from "../ai/ToolRegistry.js"
import type { AgentConfigError } from "../domain/PipelineError.js"
import * as CheckpointKey from "../stores/CheckpointKey.js"
import * as CheckpointStore from "../stores/CheckpointStore.js"
import * as ExecutionStore from "../stores/ExecutionStore.js"
import * as StoreConfig from "../stores/StoreConfig.js"
import type { AgentConfig } from "./AgentConfig.js"
import { ApprovalPolicy } from "./Approval.js"
import { ConversationHistoryPreparer } from "./ConversationHistory.js"
import type * as Hook from "./Hook.js"
import * as PipelineHooks from "./internal/pipelineHooks.js"
import { layer as pipelineLayer, Pipeline } from "./Pipeline.js"
import * as Options from "./PipelineOptions.js"
import { PromptBuilder } from "./PromptBuilder.js"
import { PromptValuePreparer } from "./PromptPreparation.js"
import { Gate } from "./ShortCircuit.js"
import * as TestAgentModule from "./TestAgent.js"

/**
 * The parts of an agent: its model, tools, hooks, stores and options.
 *
 * @since 0.1.0
 * @category models
 */
export type { AgentConfig } from "./AgentConfig.js"

/**
 * What an assembled agent provides: the pipeline, and the stores so callers
 * can read records and checkpoints.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Pipeline | ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore

const optionalServices = (
  config: Pick<
    AgentConfig<unknown, unknown, never, unknown, unknown, never, unknown, unknown, unknown, unknown, unknown, unknown>,
    "approval" | "gate" | "promptBuilder" | "conversationHistory" | "promptValues"
  >
) => {
  let services = Context.empty()
  if (config.approval !== undefined) services = Context.add(services, ApprovalPolicy, config.approval)
  if (config.gate !== undefined) services = Context.add(services, Gate, config.gate)
  if (config.promptBuilder !== undefined) services = Context.add(services, PromptBuilder, config.promptBuilder)
  if (config.conversationHistory !== undefined) {
    services = Context.add(services, ConversationHistoryPreparer, config.conversationHistory)
  }
  if (config.promptValues !== undefined) services = Context.add(services, PromptValuePreparer, config.promptValues)
  return services
}

/**
 * Assembles an agent from its parts.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, OfflineModel, Pipeline } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layer({ model: OfflineModel.layer, tools: [], options: { maxPhases: 2 } })
 *
 * const program = Effect.gen(function*() {
 *   const pipeline = yield* Pipeline.Pipeline
 *   return yield* pipeline.process({ request: "What is the stock quote for ACME?" })
 * }).pipe(Effect.provide(AgentLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <
  EM,
  RM,
  H extends Hook.Any = never,
  EH = never,
  RB = never,
  T extends ToolRegistry.Any = never,
  ES = never,
  RS = never,
  EC = never,
  RC = never,
  EK = never,
  RK = never
>(
  config: AgentConfig<EM, RM, H, EH, RB, T, ES, RS, EC, RC, EK, RK>
): Layer.Layer<
  Services,
  AgentConfigError | EM | EH | ES | EC | EK,
  RM | Hook.Requirements<H> | Exclude<RB, Scope.Scope> | ToolRegistry.Requirements<T> | RS | RC | RK
> => {
  // Invalid options fail the pipeline Layer below; nothing built from them runs then.
  const options = Options.resolve(config.options)
  // Every hook run is bounded by the options' hook timeout unless the hook sets its own.
  const runtimeOptions: PipelineHooks.Options = Either.isRight(options)
    ? { ...config.background, hookTimeout: options.right.hookTimeout, hookGracePeriod: options.right.hookGracePeriod }
    : { ...config.background }
  // A list of different hooks has the union of their requirements.
  type Hooks = ReadonlyArray<Hook.Hook<Hook.Requirements<H>>>
  const hooks = config.hooks === undefined
    ? PipelineHooks.layer<never>([], runtimeOptions)
    : Effect.isEffect(config.hooks)
    ? PipelineHooks.layerEffect(config.hooks as Effect.Effect<Hooks, EH, RB>, runtimeOptions)
    : PipelineHooks.layer(config.hooks as Hooks, runtimeOptions)
  // The model is reached only through the inference seam, decorated with
  // the hooks' inference operations (the hooks Layer is built once: Layers
  // are memoized by reference).
  const policy = Either.isRight(options) ? Options.modelPolicy(options.right) : ModelPolicy.defaults
  const fallback = config.fallbackModel === undefined ? Layer.empty : Inference.layerFallback(config.fallbackModel)
  const inference = Inference.layerWith(policy).pipe(Layer.provide(Layer.mergeAll(config.model, hooks, fallback)))
  const parts = Layer.mergeAll(
    hooks,
    inference,
    ToolRegistry.layer(config.tools as ReadonlyArray<ToolRegistry.ToolEntry<ToolRegistry.Requirements<T>>>),
    Layer.succeedContext(optionalServices(config)),
    config.checkpointKey ?? CheckpointKey.layerRandom
  )
  const stores = Layer.merge(
    config.executionStore ?? ExecutionStore.layerMemory(),
    config.checkpointStore ?? CheckpointStore.layerMemory
  )
  return pipelineLayer(config.options).pipe(Layer.provide(parts), Layer.provideMerge(stores))
}

/**
 * An agent on the embedded defaults: the offline model (deterministic, no
 * network) and in-memory stores. Every other part as in {@link layer}.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { Agent, Pipeline } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const pipeline = yield* Pipeline.Pipeline
 *   const result = yield* pipeline.process({ request: "weather in Paris" })
 *   console.log(result)
 * })
 * NodeRuntime.runMain(program.pipe(Effect.provide(Agent.layerOffline({ tools: [] }))))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOffline = <
  H extends Hook.Any = never,
  EH = never,
  RB = never,
  T extends ToolRegistry.Any = never,
  ES = never,
  RS = never,
  EC = never,
  RC = never,
  EK = never,
  RK = never
>(
  config: Omit<AgentConfig<never, never, H, EH, RB, T, ES, RS, EC, RC, EK, RK>, "model">
): Layer.Layer<
  Services,
  AgentConfigError | EH | ES | EC | EK,
  Hook.Requirements<H> | Exclude<RB, Scope.Scope> | ToolRegistry.Requirements<T> | RS | RC | RK
> => layer({ ...config, model: OfflineModel.layer })

/**
 * An agent whose stores come from configuration ({@link StoreConfig}:
 * `AGENT_STORE=memory|sqlite|postgres`, `SQLITE_PATH`, `DATABASE_URL`) —
 * by default the SQLite file `./data/agent.db`, so records survive a
 * restart — and so does its checkpoint key: `AGENT_CHECKPOINT_KEY` when
 * set; otherwise, with SQLite, a key file beside the database (created on
 * first use, owner-only), with memory a random key, and with PostgreSQL
 * `AGENT_CHECKPOINT_KEY` is required. Unless `model` is given, so does the
 * model ({@link ModelConfig}:
 * `AGENT_MODEL=offline|openai:<model>|anthropic:<model>`, `OPENAI_BASE_URL`,
 * `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) — by default the offline model.
 * Every other part as in {@link layer}.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { Agent, Pipeline } from "effect-agent-pipeline"
 *
 * // AGENT_STORE=postgres DATABASE_URL=postgres://… node main.js
 * // AGENT_MODEL=openai:gpt-4.1-mini OPENAI_API_KEY=sk-… node main.js
 * const program = Effect.flatMap(Pipeline.Pipeline, (pipeline) => pipeline.process({ request: "weather in Paris" }))
 * NodeRuntime.runMain(program.pipe(Effect.provide(Agent.layerConfig({ tools: [] }))))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = <
  EM = never,
  RM = never,
  H extends Hook.Any = never,
  EH = never,
  RB = never,
  T extends ToolRegistry.Any = never
>(
  config:
    & Omit<
      AgentConfig<EM, RM, H, EH, RB, T, never, never, never, never>,
      "model" | "executionStore" | "checkpointStore" | "checkpointKey"
    >
    & { readonly model?: Layer.Layer<LanguageModel.LanguageModel, EM, RM> | undefined }
): Layer.Layer<
  Services,
  AgentConfigError | ConfigError.ConfigError | ExecutionStore.ExecutionStoreError | EM | EH,
  RM | Hook.Requirements<H> | Exclude<RB, Scope.Scope> | ToolRegistry.Requirements<T>
> =>
  Layer.unwrapEffect(
    Effect.map(Effect.flatMap(StoreConfig.settings, StoreConfig.layers), (stores) => {
      const model: Layer.Layer<LanguageModel.LanguageModel, EM | ConfigError.ConfigError, RM> = config.model ??
        ModelConfig.layerLanguageModel
      return layer({
        ...config,
        model,
        executionStore: stores.executionStore,
        checkpointStore: stores.checkpointStore,
        checkpointKey: stores.checkpointKey
      })
    })
  )

/**
 * What a test sees of an agent built by {@link layerTest}: the prompts the
 * scripted model received and the records the agent stored.
 *
 * @since 0.1.0
 * @category services
 */
export { TestAgent } from "./TestAgent.js"

/**
 * An agent for tests: the {@link ScriptedModel} answers from `script` and
 * records every prompt, stores are in memory (unless given), and the
 * {@link TestAgent} service reads prompts and records back. Every other part
 * as in {@link layer}.
 *
 * @example
 * ```ts
 * import { expect, it } from "@effect/vitest"
 * import { Effect } from "effect"
 * import { Agent, Pipeline } from "effect-agent-pipeline"
 *
 * it.effect("answers from the script", () =>
 *   Effect.gen(function*() {
 *     const pipeline = yield* Pipeline.Pipeline
 *     const result = yield* pipeline.process({ request: "hello", requestId: "t-1" })
 *     expect(result._tag).toBe("Completed")
 *     const test = yield* Agent.TestAgent
 *     expect(test.prompts.map((p) => p.kind)).toEqual(["plan", "text"])
 *     expect((yield* test.record("t-1")).lifecycle?.status).toBe("succeeded")
 *   }).pipe(Effect.provide(Agent.layerTest({ tools: [], script: { plans: [{ steps: [] }], synthesis: "hi" } }))))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = <
  H extends Hook.Any = never,
  EH = never,
  RB = never,
  T extends ToolRegistry.Any = never,
  ES = never,
  RS = never,
  EC = never,
  RC = never,
  EK = never,
  RK = never
>(
  config: Omit<AgentConfig<never, never, H, EH, RB, T, ES, RS, EC, RC, EK, RK>, "model"> & {
    readonly script: ScriptedModel.Script
  }
): Layer.Layer<
  Services | TestAgentModule.TestAgent,
  AgentConfigError | EH | ES | EC | EK,
  Hook.Requirements<H> | Exclude<RB, Scope.Scope> | ToolRegistry.Requirements<T> | RS | RC | RK
> =>
  Layer.unwrapEffect(
    Effect.map(ScriptedModel.make(config.script), (scripted) => {
      const { script: _script, ...parts } = config
      const agent = layer({ ...parts, model: scripted.layer })
      const probe = TestAgentModule.layerProbe(scripted)
      return Layer.provideMerge(probe, agent)
    })
  )
