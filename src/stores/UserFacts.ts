/**
 * Per-user facts (seed 000 §10 `UserMemoryEnrichment` /
 * `UserMemoryExtraction`): durable things a user said about themselves —
 * who they are, what they prefer, what holds for them — filed per user in
 * the {@link VectorStore} collection `user_facts` (partition = user id,
 * exact-match keys `kind` and, when given, `tenant`).
 *
 * A typed facade: facts are written and read as {@link UserFact}s, and a
 * stored item whose payload does not decode is a `corrupt`
 * `VectorStoreError` — never a crash, never silently dropped. A fact's id
 * is derived from its user, tenant and normalized text ({@link factId}), so
 * extracting the same fact again replaces it. Retention: a `ttl` sets the
 * fact's `expiresAt`. A user can be forgotten ({@link forget}).
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, Schema } from "effect"
import { factId, normalize } from "./internal/userFactsId.js"
import { type Item, VectorStore, VectorStoreError } from "./VectorStore.js"

/**
 * The vector store collection user facts live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const collection = "user_facts"

/**
 * What a fact is about: who the user is (`identity`: name, role, home
 * city), what they like (`preference`), or anything else durable (`fact`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Kind = Schema.Literal("identity", "preference", "fact")

/**
 * One of the {@link Kind} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = typeof Kind.Type

/**
 * A stored fact. `confidence` is the extractor's (0..1); `sourceRequestId`
 * the request it was learned from; times are epoch milliseconds — a fact
 * is live while `now < expiresAt`, forever without one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserFact = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  tenant: Schema.optional(Schema.String),
  text: Schema.String,
  kind: Kind,
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  sourceRequestId: Schema.String,
  createdAt: Schema.Finite,
  expiresAt: Schema.optional(Schema.Finite)
})

/**
 * A {@link UserFact}'s type.
 *
 * @since 0.1.0
 * @category models
 */
export interface UserFact extends Schema.Schema.Type<typeof UserFact> {}

/** What the item's payload holds; the rest of a fact is the item's own fields. */
const Payload = Schema.Struct({
  kind: Kind,
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  sourceRequestId: Schema.String
})
const decodePayload = Schema.decodeUnknownEither(Payload)

/**
 * The deterministic id of a fact and the text normalization it uses.
 *
 * @since 0.1.0
 * @category utils
 */
export { factId, normalize }

/**
 * What {@link put} writes. `id` defaults to {@link factId} of the user,
 * tenant and text; `ttl` sets the fact's retention (kept forever without
 * one); `embedding` makes it findable by {@link relevant}.
 *
 * @since 0.1.0
 * @category models
 */
export interface PutInput {
  readonly userId: string
  readonly text: string
  readonly kind: Kind
  readonly confidence: number
  readonly sourceRequestId: string
  readonly id?: string | undefined
  readonly tenant?: string | undefined
  readonly embedding?: ReadonlyArray<number> | undefined
  readonly ttl?: Duration.DurationInput | undefined
}

/**
 * Narrows reads to one tenant's facts (without it: the user's facts of every tenant).
 *
 * @since 0.1.0
 * @category models
 */
export interface TenantOption {
  readonly tenant?: string | undefined
}

const invalid = (detail: string) => new VectorStoreError({ operation: "put", reason: "invalid_input", detail })

const toFact = (operation: "put" | "recent" | "search", item: Item): Effect.Effect<UserFact, VectorStoreError> => {
  const decoded = decodePayload(item.payload)
  if (decoded._tag === "Left") {
    return Effect.fail(
      new VectorStoreError({
        operation,
        reason: "corrupt",
        detail: `user fact ${item.id} does not decode: ${decoded.left.message}`
      })
    )
  }
  return Effect.succeed({
    id: item.id,
    userId: item.partition,
    ...(item.keys.tenant === undefined ? {} : { tenant: item.keys.tenant }),
    text: item.text,
    kind: decoded.right.kind,
    confidence: decoded.right.confidence,
    sourceRequestId: decoded.right.sourceRequestId,
    createdAt: item.createdAt,
    ...(item.expiresAt === undefined ? {} : { expiresAt: item.expiresAt })
  })
}

const keysOf = (tenant: string | undefined, kind?: Kind): Record<string, string> => ({
  ...(kind === undefined ? {} : { kind }),
  ...(tenant === undefined ? {} : { tenant })
})

const ttlMillis = (ttl: Duration.DurationInput | undefined): Effect.Effect<number | undefined, VectorStoreError> => {
  if (ttl === undefined) return Effect.succeed(undefined)
  const decoded = Duration.decodeUnknown(ttl)
  const millis = Option.isSome(decoded) ? Duration.toMillis(decoded.value) : Number.NaN
  return Number.isFinite(millis) && millis >= 1
    ? Effect.succeed(Math.ceil(millis))
    : Effect.fail(invalid("ttl must be a finite duration of at least 1 ms"))
}

/**
 * Files a fact for a user, replacing the one with the same id (by default:
 * the same user, tenant and normalized text). Refused with `invalid_input`
 * (nothing written): empty text, a confidence outside 0..1, a bad `ttl`,
 * and whatever the vector store refuses.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { UserFacts, VectorStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   yield* UserFacts.put({ userId: "u-1", text: "Prefers EUR", kind: "preference", confidence: 0.9, sourceRequestId: "r-1" })
 *   // The same fact again (case and spacing aside): replaced, not duplicated.
 *   yield* UserFacts.put({ userId: "u-1", text: "prefers  eur.", kind: "preference", confidence: 0.95, sourceRequestId: "r-2" })
 *   return yield* UserFacts.list("u-1") // one fact
 * }).pipe(Effect.provide(VectorStore.layerMemory()))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const put = (input: PutInput): Effect.Effect<UserFact, VectorStoreError, VectorStore> =>
  Effect.gen(function*() {
    const text = input.text.trim()
    if (text.length === 0) return yield* invalid("a fact's text must not be empty")
    if (!(Number.isFinite(input.confidence) && input.confidence >= 0 && input.confidence <= 1)) {
      return yield* invalid(`confidence must be in 0..1, got ${input.confidence}`)
    }
    if (!Kind.literals.includes(input.kind)) return yield* invalid(`unknown kind ${String(input.kind)}`)
    const ttl = yield* ttlMillis(input.ttl)
    const store = yield* VectorStore
    const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const item = yield* store.put({
      collection,
      id: input.id ?? factId(input.userId, text, input.tenant),
      partition: input.userId,
      keys: keysOf(input.tenant, input.kind),
      text,
      payload: { kind: input.kind, confidence: input.confidence, sourceRequestId: input.sourceRequestId },
      createdAt: now,
      ...(input.embedding === undefined ? {} : { embedding: input.embedding }),
      ...(ttl === undefined ? {} : { expiresAt: now + ttl })
    })
    return yield* toFact("put", item)
  })

/**
 * A user's live `identity` facts, newest first (at most `limit`, default 20).
 *
 * @example
 * ```ts
 * import { UserFacts } from "effect-agent-pipeline"
 *
 * const whoIs = UserFacts.identity("u-1", { tenant: "acme", limit: 5 })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const identity = (
  userId: string,
  options: TenantOption & { readonly limit?: number | undefined } = {}
): Effect.Effect<ReadonlyArray<UserFact>, VectorStoreError, VectorStore> =>
  Effect.flatMap(VectorStore, (store) =>
    store.recent({
      collection,
      partition: userId,
      limit: options.limit ?? 20,
      keys: keysOf(options.tenant, "identity")
    })).pipe(Effect.flatMap((items) => Effect.forEach(items, (item) => toFact("recent", item))))

/**
 * A user's live facts most similar to `vector` (scoring at least
 * `minScore`), best first, with their cosine similarity. Facts stored
 * without an embedding are never found here (see {@link list}).
 *
 * @example
 * ```ts
 * import { Embeddings, UserFacts } from "effect-agent-pipeline"
 *
 * const related = UserFacts.relevant("u-1", {
 *   vector: Embeddings.embedOffline("book a hotel in Lisbon"),
 *   limit: 5,
 *   minScore: 0.3
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const relevant = (
  userId: string,
  query: TenantOption & {
    readonly vector: ReadonlyArray<number>
    readonly limit: number
    readonly minScore?: number | undefined
  }
): Effect.Effect<ReadonlyArray<{ readonly fact: UserFact; readonly score: number }>, VectorStoreError, VectorStore> =>
  Effect.flatMap(VectorStore, (store) =>
    store.search({
      collection,
      partition: userId,
      vector: query.vector,
      limit: query.limit,
      keys: keysOf(query.tenant),
      ...(query.minScore === undefined ? {} : { minScore: query.minScore })
    })).pipe(
      Effect.flatMap((hits) =>
        Effect.forEach(hits, (hit) => Effect.map(toFact("search", hit.item), (fact) => ({ fact, score: hit.score })))
      )
    )

/**
 * A user's live facts, newest first (at most `limit`, default 1000 — the
 * store's maximum).
 *
 * @example
 * ```ts
 * import { UserFacts } from "effect-agent-pipeline"
 *
 * const everything = UserFacts.list("u-1")
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const list = (
  userId: string,
  options: TenantOption & { readonly limit?: number | undefined } = {}
): Effect.Effect<ReadonlyArray<UserFact>, VectorStoreError, VectorStore> =>
  Effect.flatMap(VectorStore, (store) =>
    store.recent({
      collection,
      partition: userId,
      limit: options.limit ?? 1000,
      keys: keysOf(options.tenant)
    })).pipe(Effect.flatMap((items) => Effect.forEach(items, (item) => toFact("recent", item))))

/**
 * Forgets a user: deletes every fact filed for them (expired or not; with
 * `tenant`, only that tenant's); returns how many. Other users' facts are
 * untouched.
 *
 * @example
 * ```ts
 * import { UserFacts } from "effect-agent-pipeline"
 *
 * const erased = UserFacts.forget("u-1")
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const forget = (
  userId: string,
  options: TenantOption = {}
): Effect.Effect<number, VectorStoreError, VectorStore> =>
  Effect.flatMap(VectorStore, (store) =>
    store.remove({
      collection,
      partition: userId,
      ...(options.tenant === undefined ? {} : { keys: { tenant: options.tenant } })
    }))
