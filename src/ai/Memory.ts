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
import { Effect, Option } from "effect"
import type { MemoryRecord } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import * as RequestScope from "../runtime/RequestScope.js"
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
 */
export const load = (
  scope: string,
  query: string,
  options?: { readonly limit?: number | undefined }
): Effect.Effect<ReadonlyArray<MemoryRecord>, MemoryStoreError | HookDenied | HookFailed, MemoryStore> =>
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const limit = options?.limit ?? 10
    const request = yield* RequestScope.current
    if (Option.isNone(request) || !request.value.operations.observes("memory_load")) {
      return yield* store.load(scope, query, limit)
    }
    const { call: parent, operations, recorder, requestId } = request.value
    const call = yield* operations.call("memory_load", {
      coordinates: { requestId },
      parent,
      payload: { scope, query, limit }
    })
    return yield* operations.run(
      call,
      recorder,
      Effect.gen(function*() {
        const rewritten = yield* operations.transform("before_memory_load", call, query, recorder)
        const records = yield* store.load(scope, rewritten, limit)
        return yield* operations.transform("after_memory_load", call, records, recorder)
      })
    )
  })

/**
 * Stores a record in `scope`; returns its id.
 *
 * @since 0.1.0
 */
export const store = (
  scope: string,
  record: MemoryRecord
): Effect.Effect<string, MemoryStoreError | HookDenied | HookFailed, MemoryStore> =>
  Effect.gen(function*() {
    const memory = yield* MemoryStore
    const request = yield* RequestScope.current
    if (Option.isNone(request) || !request.value.operations.observes("memory_store")) {
      return yield* memory.store(scope, record)
    }
    const { call: parent, operations, recorder, requestId } = request.value
    const call = yield* operations.call("memory_store", {
      coordinates: { requestId },
      parent,
      payload: { scope, record }
    })
    return yield* operations.run(
      call,
      recorder,
      Effect.gen(function*() {
        const scrubbed = yield* operations.transform("before_memory_store", call, record, recorder)
        const id = yield* memory.store(scope, scrubbed)
        return yield* operations.transform("after_memory_store", call, id, recorder)
      })
    )
  })
