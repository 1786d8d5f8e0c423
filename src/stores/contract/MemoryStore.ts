/**
 * The MemoryStore contract: the service tag, its error and the stored
 * record. Users reach it through the `MemoryStore` namespace
 * (`stores/MemoryStore.ts`), which adds the in-memory backend. Kept apart
 * from that namespace so the in-memory backend can import the contract
 * without an import cycle.
 */
import { Context, type Effect, Schema } from "effect"
import type { MemoryQuery, MemoryRecord } from "../../domain/Operation.js"

/**
 * The memory store failed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "effect-agent-pipeline"
 *
 * const recall = (scope: string, query: string) =>
 *   Effect.flatMap(MemoryStore.MemoryStore, (store) => store.load(scope, { query, limit: 5 })).pipe(
 *     Effect.catchTag("MemoryStoreError", () => Effect.succeed([]))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
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
 * @category models
 */
export interface StoredRecord extends MemoryRecord {
  readonly id: string
}

/**
 * The memory store service: an agent's long-term memory, by scope. Hooks
 * and agents use it through `Memory.load` / `Memory.store`, which run each
 * access as one run of the `memory_load` / `memory_store` operation.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* MemoryStore.MemoryStore
 *   yield* store.store("user:42", { content: "prefers EUR" })
 *   return yield* store.load("user:42", { query: "eur", limit: 5 }) // [{ id: "mem-1", content: "prefers EUR" }]
 * }).pipe(Effect.provide(MemoryStore.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class MemoryStore extends Context.Tag("effect-agent-pipeline/MemoryStore")<MemoryStore, MemoryStore.Service>() {}

/**
 * The types that go with the {@link MemoryStore} tag.
 *
 * @since 0.1.0
 * @category services
 */
export declare namespace MemoryStore {
  /**
   * What every backend implements.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /**
     * At most `query.limit` records of `scope` that match `query.query`
     * (an empty query matches all). With `kinds`, only records whose
     * `metadata.kind` is one of them (an empty list matches none); with
     * `minScore`, only records the backend scores at least that (each
     * backend documents its score and order).
     */
    readonly load: (scope: string, query: MemoryQuery) => Effect.Effect<ReadonlyArray<StoredRecord>, MemoryStoreError>
    /**
     * Stores a record in `scope`; returns its id: `record.id` when given
     * (replacing the record stored under that id in `scope`), else one the
     * store assigns.
     */
    readonly store: (scope: string, record: MemoryRecord) => Effect.Effect<string, MemoryStoreError>
  }
}
