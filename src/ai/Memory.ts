/**
 * Memory through the hook runtime (seed 002 memory hooks, seed 003
 * operations): inside a request, each read and write is one run of the
 * `memory_load` / `memory_store` operation — guards may deny it (tenant
 * isolation), transforms rewrite the query (its text, limit, minimum score
 * and kinds), the loaded records, or the record to store (PII scrubbing,
 * the id it is stored under), `after_memory_store` hooks audit the stored
 * id, observers see it, and every hook run is recorded on the request.
 * Outside a request it is a plain call.
 *
 * `load` / `store` run over the `MemoryStore` service; `loadWith` /
 * `storeWith` run any backend's read or write (a vector store, a user-facts
 * table) as the same operation, so users' operation hooks see those too.
 *
 * @since 0.1.0
 */
import { type Context, Effect, FiberRef } from "effect"
import type { MemoryQuery, MemoryRecord } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import { currentRequest } from "../runtime/Operations.js"
import { MemoryStore, type MemoryStoreError } from "../stores/MemoryStore.js"

/** The query's members, without absent ones (the operation's payload is plain data). */
const payloadOf = (scope: string, { kinds, limit, minScore, query }: MemoryQuery) => ({
  scope,
  query,
  limit,
  ...(minScore === undefined ? {} : { minScore }),
  ...(kinds === undefined ? {} : { kinds })
})

// The body runs inside the operation combinator, which takes bodies that
// need nothing: the caller's context is captured and given back to it.
const runLoad = <E, R>(
  scope: string,
  query: MemoryQuery,
  body: (query: MemoryQuery) => Effect.Effect<ReadonlyArray<MemoryRecord>, E, R>
): Effect.Effect<ReadonlyArray<MemoryRecord>, E | HookDenied | HookFailed, R> =>
  Effect.flatMap(FiberRef.get(currentRequest), (request) =>
    request === undefined
      ? body(query)
      : Effect.contextWithEffect((context: Context.Context<R>) =>
        request.operations.withOperation({
          operation: "memory_load",
          coordinates: { requestId: request.requestId },
          parent: request.call,
          payload: payloadOf(scope, query)
        })((query) => Effect.provide(body(query), context))
      ))

const runStore = <E, R>(
  scope: string,
  record: MemoryRecord,
  body: (record: MemoryRecord) => Effect.Effect<string, E, R>
): Effect.Effect<string, E | HookDenied | HookFailed, R> =>
  Effect.flatMap(FiberRef.get(currentRequest), (request) =>
    request === undefined
      ? body(record)
      : Effect.contextWithEffect((context: Context.Context<R>) =>
        request.operations.withOperation({
          operation: "memory_store",
          coordinates: { requestId: request.requestId },
          parent: request.call,
          payload: { scope, record }
        })((record) => Effect.provide(body(record), context))
      ))

/**
 * Runs a memory read of `scope` by any backend as one run of the
 * `memory_load` operation: `body` gets the query as `before_memory_load`
 * transforms rewrote it (text, limit, minScore, kinds), and the records it
 * returns go through the `after_memory_load` transforms before the caller
 * gets them. Return records whose `content` is exactly the text that goes
 * into the prompt: that is how `after_memory_load` hooks see (and may
 * rewrite) the prompt context the results become. Outside a request it
 * calls `body(query)`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Memory, type Operation } from "effect-agent-pipeline"
 *
 * interface Fact { readonly key: string; readonly value: string; readonly score: number }
 * declare const searchFacts: (
 *   user: string,
 *   query: Operation.MemoryQuery
 * ) => Effect.Effect<ReadonlyArray<Fact>>
 *
 * // Each record's content is the line the prompt gets: `after_memory_load`
 * // hooks see exactly that context.
 * const userFacts = (user: string, query: string) =>
 *   Memory.loadWith(`user:${user}`, { query, limit: 5, minScore: 0.3, kinds: ["fact"] }, (query) =>
 *     Effect.map(searchFacts(user, query), (facts) =>
 *       facts.map((f) => ({ id: f.key, content: `- ${f.key}: ${f.value}`, metadata: { kind: "fact", score: f.score } }))))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const loadWith = <E, R>(
  scope: string,
  query: MemoryQuery,
  body: (query: MemoryQuery) => Effect.Effect<ReadonlyArray<MemoryRecord>, E, R>
): Effect.Effect<ReadonlyArray<MemoryRecord>, E | HookDenied | HookFailed, R> =>
  Effect.withSpan(runLoad(scope, query, body), "Memory.loadWith", { captureStackTrace: false })

/**
 * Runs a memory write to `scope` by any backend as one run of the
 * `memory_store` operation: `body` gets the record as `before_memory_store`
 * transforms rewrote it (scrubbed content, or the `id` to store it under),
 * and returns the stored id, which `after_memory_store` hooks see. Outside
 * a request it calls `body(record)`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Memory } from "effect-agent-pipeline"
 *
 * declare const upsertFact: (user: string, id: string, text: string) => Effect.Effect<void>
 *
 * const remember = (user: string, text: string) =>
 *   Memory.storeWith(`user:${user}`, { content: text, metadata: { kind: "fact" } }, (record) => {
 *     const id = record.id ?? crypto.randomUUID()
 *     return Effect.as(upsertFact(user, id, record.content), id)
 *   })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const storeWith = <E, R>(
  scope: string,
  record: MemoryRecord,
  body: (record: MemoryRecord) => Effect.Effect<string, E, R>
): Effect.Effect<string, E | HookDenied | HookFailed, R> =>
  Effect.withSpan(runStore(scope, record, body), "Memory.storeWith", { captureStackTrace: false })

/**
 * What {@link load} asks for besides the query text: at most `limit`
 * records (default 10), only those scoring at least `minScore`, only those
 * of the given `kinds` (`metadata.kind`).
 *
 * @example
 * ```ts
 * import type { Memory } from "effect-agent-pipeline"
 *
 * const preferences: Memory.MemoryLoadOptions = { limit: 5, kinds: ["preference"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryLoadOptions {
  readonly limit?: number | undefined
  readonly minScore?: number | undefined
  readonly kinds?: ReadonlyArray<string> | undefined
}

/**
 * Loads records of `scope` matching `query` from the `MemoryStore`: at
 * most `limit` (default 10), optionally only those scoring at least
 * `minScore` and of the given `kinds` (`metadata.kind`). {@link loadWith}
 * over the store.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, Memory } from "effect-agent-pipeline"
 *
 * const recall = Hook.make({
 *   name: "recall",
 *   beforePlanning: (ctx) =>
 *     Memory.load(String(ctx.metadata.user_id ?? "anonymous"), "", { limit: 5, kinds: ["preference"] }).pipe(
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
  options?: MemoryLoadOptions
) => Effect.Effect<ReadonlyArray<MemoryRecord>, MemoryStoreError | HookDenied | HookFailed, MemoryStore> = Effect.fn(
  "Memory.load"
)(function*(scope: string, query: string, options?: MemoryLoadOptions) {
  const store = yield* MemoryStore
  const { kinds, limit = 10, minScore } = options ?? {}
  return yield* runLoad(
    scope,
    { query, limit, ...(minScore === undefined ? {} : { minScore }), ...(kinds === undefined ? {} : { kinds }) },
    (query) => store.load(scope, query)
  )
})

/**
 * Stores a record in the `MemoryStore` under `scope`; returns its id (the
 * record's `id` when given, replacing what was stored under it).
 * {@link storeWith} over the store.
 *
 * @example
 * ```ts
 * import { Memory } from "effect-agent-pipeline"
 *
 * const remember = Memory.store("user:42", { id: "currency", content: "prefers EUR", metadata: { kind: "preference" } })
 * ```
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
    return yield* runStore(scope, record, (record) => memory.store(scope, record))
  }
)
