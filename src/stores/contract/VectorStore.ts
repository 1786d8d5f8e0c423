/**
 * The VectorStore contract: the service tag, its error, the stored item and
 * the shapes of its calls. One store that episodic memory events, user facts,
 * knowledge fragments and semantic-cache entries are typed facades over
 * (issue 22): each kind is a `collection`, each owner (a user, a tenant, a
 * thread) a `partition`, and the exact-match dimensions an entry was written
 * under (tenant, user, locale, model, tool set) its `keys`.
 *
 * Users reach it through the `VectorStore` namespace (`stores/VectorStore.ts`),
 * which adds the in-memory backend. Kept apart from that namespace so the
 * backends can import the contract without an import cycle.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { JsonObject } from "../../domain/Json.js"

/**
 * A vector store call failed: its input was refused at the edge
 * (`invalid_input`: an empty id, a non-finite embedding value, a text over
 * the limit — nothing was written), the backend failed (`backend`), a stored
 * row does not decode (`corrupt`), or the vector extension a store was told
 * to require cannot load (`unavailable`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { VectorStore } from "effect-agent-pipeline"
 *
 * const remember = (item: VectorStore.PutInput) =>
 *   Effect.flatMap(VectorStore.VectorStore, (store) => store.put(item)).pipe(
 *     Effect.catchTag("VectorStoreError", (e) =>
 *       e.reason === "invalid_input" ? Effect.logWarning(e.message) : Effect.fail(e))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class VectorStoreError extends Schema.TaggedError<VectorStoreError>("effect-agent-pipeline/VectorStoreError")(
  "VectorStoreError",
  {
    operation: Schema.Literal("open", "put", "get", "search", "recent", "remove", "purgeExpired"),
    reason: Schema.Literal("invalid_input", "backend", "corrupt", "unavailable"),
    detail: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {
  override get message(): string {
    return `vector store ${this.operation} failed (${this.reason}): ${this.detail}`
  }
}

/**
 * What the store refuses at the edge (a typed `invalid_input` error, nothing
 * written): larger inputs are mistakes or abuse, not data to keep.
 *
 * - `maxDimensions`: embedding length, 1..4096 (every value finite)
 * - `maxIdLength`: characters of a collection, id or partition (non-empty)
 * - `maxKeys`, `maxKeyNameLength`, `maxKeyValueLength`: the exact-match keys
 *   (names are letters, digits, `_` and `-`)
 * - `maxTextBytes`: the text, in UTF-8 bytes (64 KiB)
 * - `maxPayloadBytes`: the payload's JSON text, in UTF-8 bytes (256 KiB)
 * - `maxLimit`: results of one `search` / `recent`, and ids of one `remove`
 *
 * Strings must be well-formed Unicode without NUL characters (PostgreSQL
 * cannot store NUL, and a lone surrogate would not round-trip).
 *
 * @example
 * ```ts
 * import { VectorStore } from "effect-agent-pipeline"
 *
 * const fits = (vector: ReadonlyArray<number>) => vector.length <= VectorStore.limits.maxDimensions
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const limits = {
  maxDimensions: 4096,
  maxIdLength: 256,
  maxKeys: 16,
  maxKeyNameLength: 64,
  maxKeyValueLength: 256,
  maxTextBytes: 65_536,
  maxPayloadBytes: 262_144,
  maxLimit: 1000
} as const

/**
 * A stored item. `keys` are exact-match dimensions (`{ tenant: "acme", user:
 * "u-1" }`); `embedding` is kept as 32-bit floats (what is read back is the
 * written vector rounded to float32); `createdAt` / `expiresAt` are epoch
 * milliseconds — an item is live while `now < expiresAt`, forever without one.
 *
 * @example
 * ```ts
 * import type { VectorStore } from "effect-agent-pipeline"
 *
 * const fact: VectorStore.Item = {
 *   collection: "user_facts",
 *   id: "u-1:currency",
 *   partition: "u-1",
 *   keys: { tenant: "acme" },
 *   text: "prefers EUR",
 *   payload: { confidence: 0.9 },
 *   embedding: [0.6, 0.8],
 *   createdAt: 1_700_000_000_000
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Item {
  readonly collection: string
  readonly id: string
  readonly partition: string
  readonly keys: Readonly<Record<string, string>>
  readonly text: string
  readonly payload: JsonObject
  readonly embedding?: ReadonlyArray<number> | undefined
  readonly createdAt: number
  readonly expiresAt?: number | undefined
}

/**
 * What `put` writes: an {@link Item} whose `keys` default to none and whose
 * `createdAt` defaults to now (the `Clock`).
 *
 * @example
 * ```ts
 * import type { VectorStore } from "effect-agent-pipeline"
 *
 * const entry: VectorStore.PutInput = {
 *   collection: "semantic_cache", id: "q-42", partition: "acme", keys: { model: "gpt-4o", locale: "en" },
 *   text: "weather in Paris", payload: { response: "Sunny, 21°C" }, embedding: [0.1, 0.7, 0.7],
 *   expiresAt: Date.now() + 60 * 60 * 1000
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface PutInput extends Omit<Item, "keys" | "createdAt"> {
  readonly keys?: Readonly<Record<string, string>> | undefined
  readonly createdAt?: number | undefined
}

/**
 * A search hit: the item and its cosine similarity to the query (−1..1).
 *
 * @example
 * ```ts
 * import type { VectorStore } from "effect-agent-pipeline"
 *
 * const describe = (hit: VectorStore.Scored) => `${hit.item.id}: ${hit.score.toFixed(3)}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Scored {
  readonly item: Item
  readonly score: number
}

/**
 * A similarity search in one partition of a collection: at most `limit`
 * (1..1000) live items whose embedding has the query's dimensions and whose
 * `keys` include every given key=value, scoring at least `minScore`, best
 * first (ties: newer first, then by id). A vector of L2 norm below 1e-12
 * (all zeros, say) has no direction: as a query it finds nothing, and a
 * stored one is never found.
 *
 * @example
 * ```ts
 * import type { VectorStore } from "effect-agent-pipeline"
 *
 * const lookup: VectorStore.SearchQuery = {
 *   collection: "semantic_cache",
 *   partition: "acme",
 *   vector: [0.1, 0.7, 0.7],
 *   limit: 1,
 *   minScore: 0.92,
 *   keys: { model: "gpt-4o" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchQuery {
  readonly collection: string
  readonly partition: string
  readonly vector: ReadonlyArray<number>
  readonly limit: number
  readonly minScore?: number | undefined
  readonly keys?: Readonly<Record<string, string>> | undefined
}

/**
 * The newest live items of a partition (created at or after `since`, when
 * given), newest first (ties by id), at most `limit` (1..1000).
 *
 * @example
 * ```ts
 * import type { VectorStore } from "effect-agent-pipeline"
 *
 * const lastHour: VectorStore.RecentQuery = {
 *   collection: "episodic",
 *   partition: "thread-7",
 *   since: Date.now() - 60 * 60 * 1000,
 *   limit: 20
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RecentQuery {
  readonly collection: string
  readonly partition: string
  readonly since?: number | undefined
  readonly limit: number
  readonly keys?: Readonly<Record<string, string>> | undefined
}

/**
 * Which items of a collection `remove` deletes — expired or not: those
 * matching every given filter (a partition, a set of ids — an empty set
 * matches nothing —, keys). A filter of the collection alone clears it.
 *
 * @example
 * ```ts
 * import type { VectorStore } from "effect-agent-pipeline"
 *
 * // A user is forgotten: every fact filed under them.
 * const forget: VectorStore.RemoveFilter = { collection: "user_facts", partition: "u-1" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RemoveFilter {
  readonly collection: string
  readonly partition?: string | undefined
  readonly ids?: ReadonlyArray<string> | undefined
  readonly keys?: Readonly<Record<string, string>> | undefined
}

/**
 * How a backend ranks: `memory` (in process), `sqlite-vec` (the extension's
 * `vec_distance_cosine` in SQLite), `pgvector` (PostgreSQL's `vector` type),
 * or `brute-force` (cosine over the partition's rows without an extension —
 * the same results, slower).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { VectorStore } from "effect-agent-pipeline"
 *
 * const logMode = Effect.flatMap(VectorStore.VectorStore, (store) => Effect.flatMap(store.mode, Effect.log))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type SearchMode = "memory" | "sqlite-vec" | "pgvector" | "brute-force"

/**
 * Which ranking a SQL backend uses: `auto` (the extension when it loads, else
 * brute force with one warning), `extension` (the extension or an
 * `unavailable` error), `bruteForce` (never the extension).
 *
 * @example
 * ```ts
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * // Fail at the first search rather than run without sqlite-vec.
 * const VectorsLive = Sqlite.layerVectorStore({ vectorSearch: "extension" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type SearchPreference = "auto" | "extension" | "bruteForce"

/**
 * The vector store service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { VectorStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* VectorStore.VectorStore
 *   yield* store.put({
 *     collection: "knowledge",
 *     id: "k-1",
 *     partition: "acme",
 *     text: "Refunds take 5 days",
 *     payload: {},
 *     embedding: [1, 0]
 *   })
 *   return yield* store.search({ collection: "knowledge", partition: "acme", vector: [0.9, 0.1], limit: 3 })
 * }).pipe(Effect.provide(VectorStore.layerMemory()))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class VectorStore extends Context.Tag("effect-agent-pipeline/VectorStore")<
  VectorStore,
  VectorStore.Service
>() {}

/**
 * The types that go with the {@link VectorStore} tag.
 *
 * @since 0.1.0
 * @category services
 */
export declare namespace VectorStore {
  /**
   * What every backend implements.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** How this store ranks (decided on first use for the SQL backends). */
    readonly mode: Effect.Effect<SearchMode, VectorStoreError>
    /** Writes the item, replacing the one with its collection and id; returns what is stored. */
    readonly put: (input: PutInput) => Effect.Effect<Item, VectorStoreError>
    /** The live item with this collection and id. */
    readonly get: (
      key: { readonly collection: string; readonly id: string }
    ) => Effect.Effect<Option.Option<Item>, VectorStoreError>
    /** The most similar live items (see {@link SearchQuery}). */
    readonly search: (query: SearchQuery) => Effect.Effect<ReadonlyArray<Scored>, VectorStoreError>
    /** The newest live items (see {@link RecentQuery}). */
    readonly recent: (query: RecentQuery) => Effect.Effect<ReadonlyArray<Item>, VectorStoreError>
    /** Deletes the matching items (see {@link RemoveFilter}); returns how many. */
    readonly remove: (filter: RemoveFilter) => Effect.Effect<number, VectorStoreError>
    /** Deletes every expired item; returns how many. */
    readonly purgeExpired: Effect.Effect<number, VectorStoreError>
  }
}
