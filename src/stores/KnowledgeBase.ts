/**
 * Knowledge fragments (seed 000 §10 `KnowledgeExtraction`): short, reusable
 * statements the knowledge-extraction hook distilled from earlier answers,
 * embedded and filed by scope (an agent domain) in the {@link VectorStore}
 * collection `knowledge_fragments`. A typed facade like `EpisodicMemory`: a
 * stored item that does not decode is a `corrupt` error, and a fragment
 * filed for a user carries the `user` key so the user can be forgotten.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import * as TypedCollection from "./internal/typedCollection.js"
import type { VectorStore, VectorStoreError } from "./VectorStore.js"

/**
 * The vector store collection knowledge fragments live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const collection = "knowledge_fragments"

/**
 * One fragment: its text and the request it was extracted from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Fragment = Schema.Struct({
  text: Schema.String.pipe(Schema.minLength(1)),
  sourceRequestId: Schema.String
})

/**
 * A {@link Fragment}'s type.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fragment extends Schema.Schema.Type<typeof Fragment> {}

/**
 * A stored fragment.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredFragment {
  readonly id: string
  readonly scope: string
  readonly user?: string | undefined
  readonly fragment: Fragment
  readonly createdAt: number
}

const fragments = TypedCollection.make(collection, Fragment, (fragment) => fragment.text)

const toStored = (item: TypedCollection.Typed<Fragment>): StoredFragment => ({
  id: item.id,
  scope: item.partition,
  ...(item.keys.user === undefined ? {} : { user: item.keys.user }),
  fragment: item.value,
  createdAt: item.createdAt
})

/**
 * Files a fragment with its embedding (replacing one with the same id).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Embeddings, KnowledgeBase, VectorStore } from "effect-agent-pipeline"
 *
 * const text = "Lisbon forecasts are given in Celsius."
 * const program = KnowledgeBase.add({
 *   id: "k-1", scope: "travel", fragment: { text, sourceRequestId: "req-1" }, embedding: Embeddings.embedOffline(text)
 * }).pipe(Effect.provide(VectorStore.layerMemory()))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const add = (input: {
  readonly id: string
  readonly scope: string
  readonly fragment: Fragment
  readonly embedding: ReadonlyArray<number>
  readonly user?: string | undefined
  readonly ttlMillis?: number | undefined
}): Effect.Effect<StoredFragment, VectorStoreError, VectorStore> =>
  fragments.put({
    id: input.id,
    partition: input.scope,
    keys: input.user === undefined ? {} : { user: input.user },
    value: input.fragment,
    embedding: input.embedding,
    ttlMillis: input.ttlMillis
  }).pipe(Effect.map(toStored))

/**
 * The live fragments of a scope most similar to `vector`, best first.
 *
 * @example
 * ```ts
 * import { Embeddings, KnowledgeBase } from "effect-agent-pipeline"
 *
 * const hits = KnowledgeBase.search({ scope: "travel", vector: Embeddings.embedOffline("Lisbon units"), limit: 3 })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const search = (query: {
  readonly scope: string
  readonly vector: ReadonlyArray<number>
  readonly limit: number
  readonly minScore?: number | undefined
}): Effect.Effect<
  ReadonlyArray<{ readonly fragment: StoredFragment; readonly score: number }>,
  VectorStoreError,
  VectorStore
> =>
  fragments.search({ partition: query.scope, vector: query.vector, limit: query.limit, minScore: query.minScore })
    .pipe(Effect.map((hits) => hits.map((hit) => ({ fragment: toStored(hit.item), score: hit.score }))))

/**
 * The newest live fragments of a scope, newest first.
 *
 * @example
 * ```ts
 * import { KnowledgeBase } from "effect-agent-pipeline"
 *
 * const latest = KnowledgeBase.recent({ scope: "travel", limit: 10 })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const recent = (query: {
  readonly scope: string
  readonly limit: number
}): Effect.Effect<ReadonlyArray<StoredFragment>, VectorStoreError, VectorStore> =>
  fragments.recent({ partition: query.scope, limit: query.limit }).pipe(Effect.map((items) => items.map(toStored)))

/**
 * Deletes every fragment filed for `user`; returns how many.
 *
 * @example
 * ```ts
 * import { KnowledgeBase } from "effect-agent-pipeline"
 *
 * const forgotten = KnowledgeBase.forgetUser("u-42")
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const forgetUser = (user: string): Effect.Effect<number, VectorStoreError, VectorStore> =>
  fragments.remove({ keys: { user } })

/**
 * Deletes every fragment of a scope; returns how many.
 *
 * @example
 * ```ts
 * import { KnowledgeBase } from "effect-agent-pipeline"
 *
 * const cleared = KnowledgeBase.forgetScope("travel")
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const forgetScope = (scope: string): Effect.Effect<number, VectorStoreError, VectorStore> =>
  fragments.remove({ partition: scope })
