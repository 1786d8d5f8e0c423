/**
 * Memory through the hook runtime (seed 002 memory hooks, seed 003
 * operations): inside a request, each load and store is one run of the
 * `memory_load` / `memory_store` operation — guards may deny it (tenant
 * isolation), transforms rewrite the query, the loaded records, or the
 * record to store (PII scrubbing), `after_memory_store` hooks audit the
 * stored id, observers see it, and every hook run is recorded on the
 * request. Outside a request it is a plain call to the `MemoryStore`.
 *
 * @since 0.1.0
 */
import { Effect, FiberRef } from "effect"
import type { MemoryRecord } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import { currentRequest } from "../runtime/Operations.js"
import { MemoryStore, type MemoryStoreError } from "../stores/MemoryStore.js"

/**
 * Loads at most `limit` (default 10) records of `scope` matching `query`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, Memory } from "effect-agent-pipeline"
 *
 * const recall = Hook.make({
 *   name: "recall",
 *   beforePlanning: (ctx) =>
 *     Memory.load(String(ctx.metadata.user_id ?? "anonymous"), "").pipe(
 *       Effect.map((records) => ({ enrichments: { rag_context: records.map((r) => `- ${r.content}`).join("\n") } }))
 *     )
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const load: (
  scope: string,
  query: string,
  options?: { readonly limit?: number | undefined }
) => Effect.Effect<ReadonlyArray<MemoryRecord>, MemoryStoreError | HookDenied | HookFailed, MemoryStore> = Effect.fn(
  "Memory.load"
)(function*(scope: string, query: string, options?: { readonly limit?: number | undefined }) {
  const store = yield* MemoryStore
  const limit = options?.limit ?? 10
  const request = yield* FiberRef.get(currentRequest)
  if (request === undefined) return yield* store.load(scope, query, limit)
  return yield* request.operations.withOperation({
    operation: "memory_load",
    coordinates: { requestId: request.requestId },
    parent: request.call,
    payload: { scope, query, limit }
  })((query) => store.load(scope, query, limit))
})

/**
 * Stores a record in `scope`; returns its id.
 *
 * @since 0.1.0
 * @category utils
 */
export const store: (
  scope: string,
  record: MemoryRecord
) => Effect.Effect<string, MemoryStoreError | HookDenied | HookFailed, MemoryStore> = Effect.fn("Memory.store")(
  function*(scope: string, record: MemoryRecord) {
    const memory = yield* MemoryStore
    const request = yield* FiberRef.get(currentRequest)
    if (request === undefined) return yield* memory.store(scope, record)
    return yield* request.operations.withOperation({
      operation: "memory_store",
      coordinates: { requestId: request.requestId },
      parent: request.call,
      payload: { scope, record }
    })((record) => memory.store(scope, record))
  }
)
