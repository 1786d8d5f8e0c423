/**
 * Assembling an agent: one call takes every part — the model (required),
 * tools, hooks, stores, policies and options — and returns the Layer that
 * provides the `Pipeline` and the stores its evidence lives in. Each part is
 * named, so a part cannot be swapped by providing a Layer from outside and
 * silently be ignored. `layerOffline` and `layerTest` are presets over
 * {@link layer}. With `registry: true` the agent also provides a
 * `HookRegistry`: handlers registered by point while it runs, from the next
 * request on.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@effect/ai"
import { type ConfigError, Effect, Either, Layer, type Scope } from "effect"
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
import * as Guardrails from "./Guardrails.js"
import type * as Hook from "./Hook.js"
import type { RegistryConfig, RegistryServices } from "./HookRegistry.js"
import { guardrailLayer, optionalServices } from "./internal/agentParts.js"
import * as HookRegistryService from "./internal/hookRegistryService.js"
import * as PipelineHooks from "./internal/pipelineHooks.js"
import { layer as pipelineLayer, Pipeline } from "./Pipeline.js"
import * as Options from "./PipelineOptions.js"
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
  RK = never,
  G extends boolean = false
>(
  config: AgentConfig<EM, RM, H, EH, RB, T, ES, RS, EC, RC, EK, RK> & RegistryConfig<G>
): Layer.Layer<
  Services | RegistryServices<G>,
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
  const policy = Either.isRight(options) ? Options.modelPolicy(options.right) : ModelPolicy.defaults
  const fallback = config.fallbackModel === undefined ? Layer.empty : Inference.layerFallback(config.fallbackModel)
  // The redaction guardrail, when configured: the service the pipeline
  // enforces (streams, errors, records) and its hook, last in the list.
  // One Layer value, so it is built once for both.
  const guardrail = config.redaction === undefined ? undefined : guardrailLayer(config.redaction)
  const hookList: Effect.Effect<Hooks, EH, RB> = config.hooks === undefined
    ? Effect.succeed<Hooks>([])
    : Effect.isEffect(config.hooks)
    ? config.hooks as Effect.Effect<Hooks, EH, RB>
    : Effect.succeed(config.hooks as Hooks)
  const guardedList = Effect.zipWith(
    hookList,
    Guardrails.RedactionGuardrail,
    (list, service): Hooks => [...list, Guardrails.redactionHook(service)]
  )
  const shared = Layer.mergeAll(
    ToolRegistry.layer(config.tools as ReadonlyArray<ToolRegistry.ToolEntry<ToolRegistry.Requirements<T>>>),
    Layer.succeedContext(optionalServices(config)),
    config.checkpointKey ?? CheckpointKey.layerRandom,
    guardrail ?? Layer.empty
  )
  const stores = Layer.merge(
    config.executionStore ?? ExecutionStore.layerMemory(),
    config.checkpointStore ?? CheckpointStore.layerMemory
  )
  if (config.registry === true) {
    // The agent's hooks are built once; its pipeline, once per registry version.
    const statics = guardrail === undefined
      ? HookRegistryService.layerStatic(hookList)
      : HookRegistryService.layerStatic(guardedList).pipe(Layer.provide(guardrail))
    return HookRegistryService.layer({ runtimeOptions, policy, pipelineOptions: config.options }).pipe(
      Layer.provide(Layer.mergeAll(statics, config.model, fallback, shared)),
      Layer.provideMerge(stores)
    )
  }
  const hooks = guardrail !== undefined
    ? PipelineHooks.layerEffect(guardedList, runtimeOptions).pipe(Layer.provide(guardrail))
    : config.hooks === undefined
    ? PipelineHooks.layer<never>([], runtimeOptions)
    : Effect.isEffect(config.hooks)
    ? PipelineHooks.layerEffect(config.hooks as Effect.Effect<Hooks, EH, RB>, runtimeOptions)
    : PipelineHooks.layer(config.hooks as Hooks, runtimeOptions)
  // The model is reached only through the inference seam, decorated with
  // the hooks' inference operations (the hooks Layer is built once: Layers
  // are memoized by reference).
  const inference = Inference.layerWith(policy).pipe(Layer.provide(Layer.mergeAll(config.model, hooks, fallback)))
  const parts = Layer.mergeAll(hooks, inference, shared)
  // Without a registry there is no HookRegistry to provide: RegistryServices<G> is `never` here.
  return pipelineLayer(config.options).pipe(Layer.provide(parts), Layer.provideMerge(stores)) as Layer.Layer<
    Services | RegistryServices<G>,
    AgentConfigError | EM | EH | ES | EC | EK,
    RM | Hook.Requirements<H> | Exclude<RB, Scope.Scope> | ToolRegistry.Requirements<T> | RS | RC | RK
  >
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
  RK = never,
  G extends boolean = false
>(
  config: Omit<AgentConfig<never, never, H, EH, RB, T, ES, RS, EC, RC, EK, RK>, "model"> & RegistryConfig<G>
): Layer.Layer<
  Services | RegistryServices<G>,
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
  T extends ToolRegistry.Any = never,
  G extends boolean = false
>(
  config:
    & Omit<
      AgentConfig<EM, RM, H, EH, RB, T, never, never, never, never>,
      "model" | "executionStore" | "checkpointStore" | "checkpointKey"
    >
    & RegistryConfig<G>
    & { readonly model?: Layer.Layer<LanguageModel.LanguageModel, EM, RM> | undefined }
): Layer.Layer<
  Services | RegistryServices<G>,
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
  RK = never,
  G extends boolean = false
>(
  config: Omit<AgentConfig<never, never, H, EH, RB, T, ES, RS, EC, RC, EK, RK>, "model"> & RegistryConfig<G> & {
    readonly script: ScriptedModel.Script
  }
): Layer.Layer<
  Services | RegistryServices<G> | TestAgentModule.TestAgent,
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
