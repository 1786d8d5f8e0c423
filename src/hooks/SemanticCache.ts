/**
 * The built-in semantic cache (seed 000 §6, §8.2; C5): answers a request
 * from an earlier answer to a request that means the same, without a model
 * round trip — written only with the public hook API.
 *
 * - The **lookup** hook (BeforePlanning) embeds the request with the
 *   `EmbeddingModel`, searches the `semantic_cache` collection of the
 *   `VectorStore` in the request's tenant partition with its dimensions as
 *   exact-match keys, and on a hit at or above `minScore` whose salient
 *   tokens (numbers, names, time words, negations, direction) are the
 *   request's — the guard, `guard: "none"` turns it off — returns a `cache`
 *   decision whose `cachedAgainst` is the gate's `cacheVary` **stored with
 *   the entry** — never the current one — so the pipeline's C5 gate serves
 *   it only when every reserved dimension matches symmetrically.
 * - Write-through: the **capture** hook (AfterSynthesis, runs first)
 *   remembers the synthesized draft; the **write** hook (AfterSynthesis,
 *   runs last) stores it only when the final response is that draft — a
 *   redaction hook that changed it means no write. Both pass the response
 *   through unchanged.
 *
 * Effects: `semantic_cache_lookup` (outcome hit / miss / skipped / failed,
 * score, entry id, dimensions — never the cached text) and
 * `semantic_cache_write` (written / skipped with its reason / failed).
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, Schema } from "effect"
import { id } from "../domain/ErrorId.js"
import type { Hook } from "../pipeline/Hook.js"
import { VectorStore, type VectorStoreError } from "../stores/VectorStore.js"
import { partitionFor, resolveDimensions } from "./internal/semanticCacheDimensions.js"
import { makeHandlers } from "./internal/semanticCacheHandlers.js"
import type { InvalidateFilter, Options, Requirements, SemanticCacheHooks } from "./internal/semanticCacheOptions.js"
import { makePending } from "./internal/semanticCachePending.js"

/**
 * Effect ids of the lookup and the write.
 *
 * @since 0.1.0
 * @category constants
 */
export { lookupEffectId, writeEffectId } from "./internal/semanticCacheEntry.js"

/**
 * The `tools` key of a tool set (for `invalidate`), and a dimension read from request metadata.
 *
 * @since 0.1.0
 * @category utils
 */
export { fromMetadata, toolSetKey } from "./internal/semanticCacheDimensions.js"

/**
 * The options, the dimensions, the hooks `make` returns and what `invalidate` matches.
 *
 * @since 0.1.0
 * @category models
 */
export type {
  Dimension,
  Dimensions,
  Guard,
  InvalidateFilter,
  Options,
  Requirements,
  SemanticCacheHooks
} from "./internal/semanticCacheOptions.js"

/**
 * The vector store collection entries live in unless `collection` says otherwise.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultCollection = "semantic_cache"

/**
 * The default `minScore`: on the recorded paraphrase fixture (USE-Lite, 512
 * dimensions), with the salient-token guard, the lowest threshold with no
 * cross-group hit (docs/semantic-cache.md).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMinScore = 0.82

/**
 * The capture hook's priority (runs before every other AfterSynthesis hook)
 * and the write hook's (runs after them).
 *
 * @since 0.1.0
 * @category constants
 */
export const capturePriority = 1_000_000_000
/**
 * @since 0.1.0
 * @category constants
 */
export const writePriority = -1_000_000_000

/**
 * The semantic cache's options are out of range.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSemanticCacheOptions
  extends Schema.TaggedError<InvalidSemanticCacheOptions>(id("InvalidSemanticCacheOptions"))(
    "InvalidSemanticCacheOptions",
    { option: Schema.String, detail: Schema.String }
  )
{
  override get message(): string {
    return `invalid semantic cache option ${this.option}: ${this.detail}`
  }
}

const invalid = (option: string, detail: string) => new InvalidSemanticCacheOptions({ option, detail })

const whole = (option: string, value: number | undefined, fallback: number, max: number) =>
  value === undefined
    ? Effect.succeed(fallback)
    : Number.isInteger(value) && value >= 1 && value <= max
    ? Effect.succeed(value)
    : Effect.fail(invalid(option, `must be a whole number in 1..${max}`))

const nonEmpty = (option: string, value: string | undefined, fallback: string) =>
  value === undefined
    ? Effect.succeed(fallback)
    : typeof value === "string" && value.length > 0 && value.length <= 200
    ? Effect.succeed(value)
    : Effect.fail(invalid(option, "must be a string of 1..200 characters"))

const checkDimensions = (options: Options) =>
  Effect.gen(function*() {
    const dimensions = options.dimensions ?? {}
    for (const name of ["tenant", "user", "locale", "model"] as const) {
      const value = dimensions[name]
      if (typeof value === "string" && (value.length === 0 || value.length > 256)) {
        return yield* invalid(`dimensions.${name}`, "a fixed value must be a string of 1..256 characters")
      }
    }
    const tools = dimensions.tools
    if (Array.isArray(tools) && !tools.every((t) => typeof t === "string")) {
      return yield* invalid("dimensions.tools", "must list tool names")
    }
    return resolveDimensions(dimensions)
  })

/**
 * Builds the lookup, capture and write hooks (they share per-request state).
 * Register `hooks` — the lookup early among BeforePlanning hooks, so a hit
 * pre-empts expensive enrichment — and provide a `VectorStore` and an
 * `EmbeddingModel` to the agent.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, Embeddings, SemanticCache, VectorStore } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   hooks: Effect.map(SemanticCache.make({ ttl: "1 hour", dimensions: { model: "offline" } }), (c) => c.hooks)
 * }).pipe(Layer.provide(Layer.merge(VectorStore.layerMemory(), Embeddings.layerOffline())))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<SemanticCacheHooks, InvalidSemanticCacheOptions> =>
  Effect.gen(function*() {
    const minScore = options.minScore ?? defaultMinScore
    if (!(typeof minScore === "number" && minScore > 0 && minScore <= 1)) {
      return yield* invalid("minScore", "must be a number in (0, 1]")
    }
    const guard = options.guard ?? "salientTokens"
    if (guard !== "salientTokens" && guard !== "none") {
      return yield* invalid("guard", "must be \"salientTokens\" or \"none\"")
    }
    const ttl = Option.map(Duration.decodeUnknown(options.ttl ?? Duration.hours(1)), Duration.toMillis)
    if (Option.isNone(ttl) || !Number.isFinite(ttl.value) || ttl.value < 1) {
      return yield* invalid("ttl", "must be a finite duration of at least 1 ms")
    }
    const ttlMillis = Math.ceil(ttl.value)
    const maxResponseBytes = yield* whole("maxResponseBytes", options.maxResponseBytes, 16_384, 196_608)
    const maxRequestBytes = yield* whole("maxRequestBytes", options.maxRequestBytes, 4_096, 65_536)
    const maxPending = yield* whole("maxPending", options.maxPending, 10_000, 10_000_000)
    const collection = yield* nonEmpty("collection", options.collection, defaultCollection)
    const name = yield* nonEmpty("name", options.name, "semantic-cache")
    const dimensions = yield* checkDimensions(options)
    const pending = makePending(maxPending)

    const { capture, lookup, write } = makeHandlers({
      dimensions,
      pending,
      collection,
      minScore,
      guard,
      ttlMillis,
      maxRequestBytes,
      maxResponseBytes
    })
    const lookupHook: Hook<Requirements> = {
      name: `${name}-lookup`,
      capabilities: ["short_circuit"],
      beforePlanning: lookup
    }
    const captureHook: Hook<Requirements> = {
      name: `${name}-capture`,
      priority: capturePriority,
      afterSynthesis: capture
    }
    const writeHook: Hook<Requirements> = { name: `${name}-write`, priority: writePriority, afterSynthesis: write }
    return {
      lookup: lookupHook,
      capture: captureHook,
      write: writeHook,
      hooks: [lookupHook, captureHook, writeHook] as const,
      pending: pending.size
    }
  })

/**
 * Removes the entries matching `filter` (see `InvalidateFilter`; `{}`:
 * all of them), expired or not; returns how many.
 *
 * @example
 * ```ts
 * import { SemanticCache } from "effect-agent-pipeline"
 *
 * // The model changed for tenant acme: its old answers go.
 * const removed = SemanticCache.invalidate({ tenant: "acme", keys: { model: "gpt-4o" } })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const invalidate: (filter?: InvalidateFilter) => Effect.Effect<number, VectorStoreError, VectorStore> = Effect
  .fn("SemanticCache.invalidate")(function*(filter: InvalidateFilter = {}) {
    const store = yield* VectorStore
    return yield* store.remove({
      collection: filter.collection ?? defaultCollection,
      ...(filter.tenant === undefined ? {} : { partition: partitionFor(filter.tenant) }),
      ...(filter.keys === undefined ? {} : { keys: filter.keys }),
      ...(filter.ids === undefined ? {} : { ids: filter.ids })
    })
  })

/**
 * Deletes every expired item of the vector store (of every collection: the
 * store's own sweep); returns how many. Expired entries are never served
 * even before this runs.
 *
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { SemanticCache } from "effect-agent-pipeline"
 *
 * const sweeper = Effect.repeat(SemanticCache.purgeExpired, Schedule.spaced("10 minutes"))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const purgeExpired: Effect.Effect<number, VectorStoreError, VectorStore> = Effect.flatMap(
  VectorStore,
  (store) => store.purgeExpired
).pipe(Effect.withSpan("SemanticCache.purgeExpired"))
