/**
 * The in-memory VectorStore: one process's items, ranked by cosine in
 * JavaScript. Bounded — by default 10,000 items and 64 MiB of text,
 * payload, keys and embeddings — so a long-running process cannot grow
 * without end: when a write passes a bound, expired items go first, then
 * the least recently written. Reached as `VectorStore.layerMemory` /
 * `VectorStore.makeMemory`.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Either, Layer, Option } from "effect"
import { type Item, type Scored, VectorStore, VectorStoreError } from "../contract/VectorStore.js"
import {
  byRecentOrder,
  type CheckedPut,
  checkGet,
  checkPut,
  checkRecent,
  checkRemove,
  checkSearch,
  cosineOf,
  hasKeys,
  isLive,
  topK
} from "../internal/vectorInput.js"

/**
 * The memory store's bounds.
 *
 * @example
 * ```ts
 * import type { VectorStore } from "effect-agent-pipeline"
 *
 * const small: VectorStore.MemoryOptions = { maxItems: 1_000, maxBytes: 8 * 1024 * 1024 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /** The most items kept (default 10,000; 1..10,000,000). */
  readonly maxItems?: number | undefined
  /** The most bytes of text, payload JSON, keys and float32 embeddings kept (default 64 MiB; at least 1). */
  readonly maxBytes?: number | undefined
}

/**
 * The default bounds of the memory store: 10,000 items, 64 MiB.
 *
 * @example
 * ```ts
 * import { VectorStore } from "effect-agent-pipeline"
 *
 * const twice = VectorStore.layerMemory({ maxItems: 2 * VectorStore.defaultMemoryBounds.maxItems })
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMemoryBounds = { maxItems: 10_000, maxBytes: 64 * 1024 * 1024 } as const

const checkBound = (value: number | undefined, fallback: number, max: number, name: string) =>
  value === undefined
    ? Either.right(fallback)
    : Number.isSafeInteger(value) && value >= 1 && value <= max
    ? Either.right(value)
    : Either.left(
      new VectorStoreError({
        operation: "open",
        reason: "invalid_input",
        detail: `${name} must be an integer from 1 to ${max}`
      })
    )

const keyOf = (collection: string, id: string): string => `${collection}\u0000${id}`

/**
 * Builds an in-memory store. Bounds that are not positive integers fail
 * with an `invalid_input` error.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { VectorStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* VectorStore.makeMemory({ maxItems: 1_000 })
 *   yield* store.put({ collection: "facts", id: "f1", partition: "u-1", text: "likes tea", payload: {}, embedding: [1, 0] })
 *   return yield* store.recent({ collection: "facts", partition: "u-1", limit: 10 })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (options: MemoryOptions = {}): Effect.Effect<VectorStore.Service, VectorStoreError> =>
  Effect.gen(function*() {
    const maxItems = yield* checkBound(options.maxItems, defaultMemoryBounds.maxItems, 10_000_000, "maxItems")
    const maxBytes = yield* checkBound(
      options.maxBytes,
      defaultMemoryBounds.maxBytes,
      Number.MAX_SAFE_INTEGER,
      "maxBytes"
    )
    // Insertion order is write order (a rewrite moves its item to the end): the first entries are evicted first.
    const entries = new Map<string, CheckedPut>()
    let bytes = 0

    const drop = (key: string) => {
      const entry = entries.get(key)
      if (entry === undefined) return
      bytes -= entry.bytes
      entries.delete(key)
    }

    const purgeAt = (now: number): number => {
      let purged = 0
      for (const [key, entry] of entries) {
        if (!isLive(entry.item, now)) {
          drop(key)
          purged++
        }
      }
      return purged
    }

    const evict = (now: number) => {
      if (entries.size <= maxItems && bytes <= maxBytes) return
      purgeAt(now)
      for (const key of entries.keys()) {
        if (entries.size <= maxItems && bytes <= maxBytes) return
        drop(key)
      }
    }

    /** The live entries of one partition matching the keys. */
    const candidates = function*(
      collection: string,
      partition: string,
      keys: Readonly<Record<string, string>>,
      now: number
    ) {
      for (const entry of entries.values()) {
        const item = entry.item
        if (
          item.collection === collection && item.partition === partition && isLive(item, now) &&
          hasKeys(item.keys, keys)
        ) yield entry
      }
    }

    const put = Effect.fn("VectorStore.put")(function*(input: Parameters<VectorStore.Service["put"]>[0]) {
      const now = yield* Clock.currentTimeMillis
      const checked = yield* checkPut(input, now)
      const key = keyOf(checked.item.collection, checked.item.id)
      drop(key)
      entries.set(key, checked)
      bytes += checked.bytes
      evict(now)
      return checked.item
    })

    const get: VectorStore.Service["get"] = (key) =>
      Effect.flatMap(checkGet(key), () =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const entry = entries.get(keyOf(key.collection, key.id))
          return entry !== undefined && isLive(entry.item, now) ? Option.some(entry.item) : Option.none()
        }))

    const search = Effect.fn("VectorStore.search")(function*(query: Parameters<VectorStore.Service["search"]>[0]) {
      yield* Effect.annotateCurrentSpan("vector.mode", "memory")
      const checked = yield* checkSearch(query)
      if (checked.norm === 0) return []
      const now = yield* Clock.currentTimeMillis
      const hits = topK<
        { readonly score: number; readonly createdAt: number; readonly id: string; readonly item: Item }
      >(
        query.limit
      )
      for (const entry of candidates(query.collection, query.partition, checked.keys, now)) {
        const vector = entry.vector
        if (vector === undefined || vector.length !== checked.vector.length || entry.norm === 0) continue
        const score = cosineOf(checked.vector, checked.norm, vector, entry.norm)
        if (query.minScore !== undefined && score < query.minScore) continue
        hits.offer({ score, createdAt: entry.item.createdAt, id: entry.item.id, item: entry.item })
      }
      return hits.result().map(({ item, score }): Scored => ({ item, score }))
    })

    const recent = Effect.fn("VectorStore.recent")(function*(query: Parameters<VectorStore.Service["recent"]>[0]) {
      const keys = yield* checkRecent(query)
      const now = yield* Clock.currentTimeMillis
      const items: Array<Item> = []
      for (const entry of candidates(query.collection, query.partition, keys, now)) {
        if (query.since === undefined || entry.item.createdAt >= query.since) items.push(entry.item)
      }
      return items.sort(byRecentOrder).slice(0, query.limit)
    })

    const remove = Effect.fn("VectorStore.remove")(function*(filter: Parameters<VectorStore.Service["remove"]>[0]) {
      const keys = yield* checkRemove(filter)
      const ids = filter.ids === undefined ? undefined : new Set(filter.ids)
      let removed = 0
      for (const [key, { item }] of entries) {
        if (
          item.collection === filter.collection &&
          (filter.partition === undefined || item.partition === filter.partition) &&
          (ids === undefined || ids.has(item.id)) && hasKeys(item.keys, keys)
        ) {
          drop(key)
          removed++
        }
      }
      return removed
    })

    return VectorStore.of({
      mode: Effect.succeed("memory"),
      put,
      get,
      search,
      recent,
      remove,
      purgeExpired: Effect.map(Clock.currentTimeMillis, purgeAt)
    })
  })

/**
 * The in-memory store as a Layer.
 *
 * @example
 * ```ts
 * import { VectorStore } from "effect-agent-pipeline"
 *
 * const VectorsLive = VectorStore.layerMemory({ maxItems: 50_000 })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (options: MemoryOptions = {}): Layer.Layer<VectorStore, VectorStoreError> =>
  Layer.effect(VectorStore, makeMemory(options))
