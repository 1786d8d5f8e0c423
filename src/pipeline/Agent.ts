/**
 * One-call assembly of a runnable agent: hooks + tools + pipeline options,
 * with the embedded defaults (offline model, in-memory execution and
 * checkpoint stores) that any Layer can replace.
 *
 * @since 0.1.0
 */
import type { LanguageModel } from "@effect/ai"
import { Layer } from "effect"
import * as OfflineModel from "../ai/OfflineModel.js"
import * as ToolRegistry from "../ai/ToolRegistry.js"
import * as CheckpointStore from "../stores/CheckpointStore.js"
import * as ExecutionStore from "../stores/ExecutionStore.js"
import type * as Hook from "./Hook.js"
import { Pipeline, type PipelineOptions, layer as pipelineLayer } from "./Pipeline.js"
import type { HookConfigError } from "./PipelineError.js"
import * as PipelineHooks from "./PipelineHooks.js"

/**
 * What an agent is made of.
 *
 * @since 0.1.0
 */
export interface AgentConfig<RH, RT> {
  readonly hooks?: ReadonlyArray<Hook.Hook<RH>> | undefined
  readonly tools: ReadonlyArray<ToolRegistry.ToolEntry<RT>>
  readonly options?: PipelineOptions | undefined
}

/**
 * The pipeline over hooks and tools; the model and stores come from context.
 *
 * @since 0.1.0
 */
export const layer = <RH = never, RT = never>(
  config: AgentConfig<RH, RT>
): Layer.Layer<
  Pipeline,
  HookConfigError,
  RH | RT | LanguageModel.LanguageModel | ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore
> =>
  pipelineLayer(config.options).pipe(
    Layer.provide(PipelineHooks.layer(config.hooks ?? [])),
    Layer.provide(ToolRegistry.layer(config.tools))
  )

/**
 * The embedded defaults: offline model, in-memory stores.
 *
 * @since 0.1.0
 */
export const layerDefaults: Layer.Layer<
  LanguageModel.LanguageModel | ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore
> = Layer.mergeAll(OfflineModel.layer, ExecutionStore.layerMemory(), CheckpointStore.layerMemory)

/**
 * A complete agent on the embedded defaults.
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
 */
export const layerOffline = <RH = never, RT = never>(
  config: AgentConfig<RH, RT>
): Layer.Layer<Pipeline | ExecutionStore.ExecutionStore, HookConfigError, RH | RT> =>
  Layer.provideMerge(layer(config), layerDefaults)
