/**
 * The memory seam (seed 002 memory hooks): where an agent's long-term
 * memory lives, by scope (a user, a tenant, a thread). Hooks and agents use
 * it through `Memory.load` / `Memory.store`, which run each access as one
 * run of the `memory_load` / `memory_store` operation (guards, transforms,
 * observers). The in-memory store keeps records in process; durable
 * backends follow with the SQL stores.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { MemoryRecord } from "../domain/Operation.js"

/**
 * The memory store failed.
 *
 * @since 0.1.0
 */
export class MemoryStoreError extends Schema.TaggedError<MemoryStoreError>("effect-agent-pipeline/MemoryStoreError")(
  "MemoryStoreError",
  { operation: Schema.Literal("load", "store"), detail: Schema.String, cause: Schema.optional(Schema.Defect) }
) {
  override get message(): string {
    return `memory store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * A stored record and its id.
 *
 * @since 0.1.0
 */
export interface StoredRecord extends MemoryRecord {
  readonly id: string
}

/**
 * The memory store service.
 *
 * @since 0.1.0
 */
export class MemoryStore extends Context.Tag("effect-agent-pipeline/MemoryStore")<MemoryStore, MemoryStore.Service>() {}

/** @since 0.1.0 */
export declare namespace MemoryStore {
  /** @since 0.1.0 */
  export interface Service {
    /** At most `limit` records of `scope` that match `query` (all words), newest first; an empty query matches all. */
    readonly load: (
      scope: string,
      query: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<StoredRecord>, MemoryStoreError>
    /** Stores a record in `scope`; returns its id. */
    readonly store: (scope: string, record: MemoryRecord) => Effect.Effect<string, MemoryStoreError>
  }
}

const words = (text: string): ReadonlyArray<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/**
 * An in-memory store.
 *
 * @since 0.1.0
 */
export const makeMemory: Effect.Effect<MemoryStore.Service> = Effect.sync(() => {
  const scopes = new Map<string, Array<StoredRecord>>()
  let next = 0
  return {
    load: (scope, query, limit) =>
      Effect.sync(() => {
        const terms = words(query)
        const records = scopes.get(scope) ?? []
        const matching = records.filter((r) => {
          const content = new Set(words(r.content))
          return terms.every((t) => content.has(t))
        })
        return matching.slice().reverse().slice(0, Math.max(0, limit))
      }),
    store: (scope, record) =>
      Effect.sync(() => {
        const id = `mem-${++next}`
        const records = scopes.get(scope)
        const stored: StoredRecord = { ...record, id }
        if (records === undefined) scopes.set(scope, [stored])
        else records.push(stored)
        return id
      })
  }
})

/**
 * The in-memory store as a Layer.
 *
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<MemoryStore> = Layer.effect(MemoryStore, makeMemory)
