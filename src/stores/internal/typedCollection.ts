/**
 * A typed collection of the vector store: the pattern the memory facades
 * (episodic events, knowledge fragments) share. Payloads are checked by
 * their Schema on the way in (an invalid one is `invalid_input`, nothing
 * written) and on the way out (a stored item that does not decode is
 * `corrupt` — never a crash, never silently dropped).
 */
import { Effect, Schema } from "effect"
import { isJsonObject } from "../../domain/Json.js"
import { type Item, VectorStore, VectorStoreError } from "../contract/VectorStore.js"

/** A decoded item: its id, partition, keys and typed value. */
export interface Typed<A> {
  readonly id: string
  readonly partition: string
  readonly keys: Readonly<Record<string, string>>
  readonly value: A
  readonly createdAt: number
}

/** What a typed put writes. */
export interface TypedPut<A> {
  readonly id: string
  readonly partition: string
  readonly keys?: Readonly<Record<string, string>> | undefined
  readonly value: A
  readonly embedding?: ReadonlyArray<number> | undefined
  readonly ttlMillis?: number | undefined
}

/** The typed operations over one collection. */
export interface TypedCollection<A> {
  readonly put: (input: TypedPut<A>) => Effect.Effect<Typed<A>, VectorStoreError, VectorStore>
  readonly recent: (query: {
    readonly partition: string
    readonly since?: number | undefined
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Typed<A>>, VectorStoreError, VectorStore>
  readonly search: (query: {
    readonly partition: string
    readonly vector: ReadonlyArray<number>
    readonly limit: number
    readonly minScore?: number | undefined
  }) => Effect.Effect<ReadonlyArray<{ readonly item: Typed<A>; readonly score: number }>, VectorStoreError, VectorStore>
  readonly remove: (filter: {
    readonly partition?: string | undefined
    readonly keys?: Readonly<Record<string, string>> | undefined
  }) => Effect.Effect<number, VectorStoreError, VectorStore>
}

/**
 * The typed operations over `collection`: values encode with `schema` to the
 * item's payload (an encoded value that is not a JSON object is refused),
 * `textOf` is the item's text.
 */
export const make = <A, I>(
  collection: string,
  schema: Schema.Schema<A, I>,
  textOf: (value: A) => string
): TypedCollection<A> => {
  const encode = Schema.encodeEither(schema)
  const decode = Schema.decodeUnknownEither(schema)

  const typed = (operation: "put" | "recent" | "search", item: Item): Effect.Effect<Typed<A>, VectorStoreError> => {
    const decoded = decode(item.payload)
    return decoded._tag === "Left"
      ? Effect.fail(
        new VectorStoreError({
          operation,
          reason: "corrupt",
          detail: `${collection} item ${item.id} does not decode: ${decoded.left.message}`
        })
      )
      : Effect.succeed({
        id: item.id,
        partition: item.partition,
        keys: item.keys,
        value: decoded.right,
        createdAt: item.createdAt
      })
  }

  const put = (input: TypedPut<A>) =>
    Effect.gen(function*() {
      // Round-trip the value before writing: what cannot be read back is refused now.
      const encoded = encode(input.value)
      const payload = encoded._tag === "Right" ? encoded.right : undefined
      if (encoded._tag === "Left" || !isJsonObject(payload) || decode(payload)._tag === "Left") {
        return yield* new VectorStoreError({
          operation: "put",
          reason: "invalid_input",
          detail: `${collection} value is invalid: ${
            encoded._tag === "Left" ? encoded.left.message : "it is not a JSON object that decodes back"
          }`
        })
      }
      const store = yield* VectorStore
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const item = yield* store.put({
        collection,
        id: input.id,
        partition: input.partition,
        keys: input.keys ?? {},
        text: textOf(input.value),
        payload,
        ...(input.embedding === undefined ? {} : { embedding: input.embedding }),
        ...(input.ttlMillis === undefined ? {} : { expiresAt: now + input.ttlMillis })
      })
      return yield* typed("put", item)
    })

  return {
    put,
    recent: (query) =>
      Effect.flatMap(VectorStore, (store) =>
        store.recent({
          collection,
          partition: query.partition,
          limit: query.limit,
          ...(query.since === undefined ? {} : { since: query.since })
        })).pipe(Effect.flatMap((items) => Effect.forEach(items, (item) => typed("recent", item)))),
    search: (query) =>
      Effect.flatMap(VectorStore, (store) =>
        store.search({
          collection,
          partition: query.partition,
          vector: query.vector,
          limit: query.limit,
          ...(query.minScore === undefined ? {} : { minScore: query.minScore })
        })).pipe(
          Effect.flatMap((hits) =>
            Effect.forEach(hits, (hit) => Effect.map(typed("search", hit.item), (item) => ({ item, score: hit.score })))
          )
        ),
    remove: (filter) =>
      Effect.flatMap(VectorStore, (store) =>
        store.remove({
          collection,
          ...(filter.partition === undefined ? {} : { partition: filter.partition }),
          ...(filter.keys === undefined ? {} : { keys: filter.keys })
        }))
  }
}
