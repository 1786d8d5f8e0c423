/**
 * Where HITL checkpoints wait for a decision. `take` removes atomically, so a
 * checkpoint can be resumed once.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Checkpoint } from "../domain/Checkpoint.js"
import { ExecutionStoreError } from "./ExecutionStore.js"

/**
 * The checkpoint store service.
 *
 * @since 0.1.0
 */
export class CheckpointStore extends Context.Tag("effect-agent-pipeline/CheckpointStore")<
  CheckpointStore,
  {
    readonly save: (checkpoint: Checkpoint) => Effect.Effect<void, ExecutionStoreError>
    readonly get: (checkpointId: string) => Effect.Effect<Option.Option<Checkpoint>, ExecutionStoreError>
    /** Removes and returns the checkpoint (resume happens at most once). */
    readonly take: (checkpointId: string) => Effect.Effect<Option.Option<Checkpoint>, ExecutionStoreError>
  }
>() {}

/**
 * An in-memory checkpoint store.
 *
 * @since 0.1.0
 */
export const makeMemory: Effect.Effect<CheckpointStore["Type"]> = Effect.sync(() => {
  const checkpoints = new Map<string, Checkpoint>()
  return {
    save: (checkpoint) => Effect.sync(() => void checkpoints.set(checkpoint.checkpointId, checkpoint)),
    get: (id) => Effect.sync(() => Option.fromNullable(checkpoints.get(id))),
    take: (id) =>
      Effect.sync(() => {
        const found = checkpoints.get(id)
        checkpoints.delete(id)
        return Option.fromNullable(found)
      })
  }
})

/**
 * The in-memory store as a Layer.
 *
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<CheckpointStore> = Layer.effect(CheckpointStore, makeMemory)

