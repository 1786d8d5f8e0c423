/**
 * What a test reads back from an agent built by `Agent.layerTest`: the
 * prompts its scripted model received and the records it stored.
 *
 * @since 0.1.0
 */
import { Cause, Context, Effect, Layer, Option } from "effect"
import type * as ScriptedModel from "../ai/ScriptedModel.js"
import type { ExecutionRecord } from "../domain/ExecutionRecord.js"
import * as ExecutionStore from "../stores/ExecutionStore.js"

/**
 * What a test sees of an agent built by `Agent.layerTest`: the prompts the
 * scripted model received and the records the agent stored.
 *
 * @since 0.1.0
 * @category services
 */
export class TestAgent extends Context.Tag("effect-agent-pipeline/TestAgent")<TestAgent, TestAgent.Service>() {}

/**
 * The types of the {@link TestAgent} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace TestAgent {
  /**
   * What a test reads: the prompts the scripted model received, the plans it used, and the stored records.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Every prompt the scripted model received, in order (a live view). */
    readonly prompts: ReadonlyArray<ScriptedModel.RecordedPrompt>
    /** How many scripted plans have been consumed. */
    readonly plansUsed: () => number
    /** The stored record of a request; `NoSuchElementException` when there is none. */
    readonly record: (requestId: string) => Effect.Effect<ExecutionRecord, Cause.NoSuchElementException>
    /** Every stored record, most recently written first. */
    readonly records: Effect.Effect<ReadonlyArray<ExecutionRecord>>
  }
}

/**
 * The {@link TestAgent} service over a scripted model and the agent's execution store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerProbe = (
  scripted: ScriptedModel.Handle
): Layer.Layer<TestAgent, never, ExecutionStore.ExecutionStore> =>
  Layer.effect(
    TestAgent,
    Effect.map(ExecutionStore.ExecutionStore, (store): TestAgent.Service => ({
      prompts: scripted.prompts,
      plansUsed: scripted.plansUsed,
      record: (requestId) =>
        store.get(requestId).pipe(
          Effect.orDie,
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new Cause.NoSuchElementException(`no execution record for request ${requestId}`)),
            onSome: Effect.succeed
          }))
        ),
      records: Effect.orDie(Effect.map(store.list({ limit: ExecutionStore.maxPageSize }), (page) => page.records))
    }))
  )
