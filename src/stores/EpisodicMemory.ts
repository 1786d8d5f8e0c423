/**
 * Episodic memory (seed 000 §10 `MemoryEnrichment` / `MemoryRecord`): what
 * happened in earlier requests, one event per executed step, filed by scope
 * (an agent domain) in the {@link VectorStore} collection `episodic_events`.
 * A typed facade: events are written and read as {@link EpisodicEvent}s, a
 * stored item that does not decode is a `corrupt` error (never a crash, never
 * silently dropped), and an event filed for a user carries the `user` key so
 * the user can be forgotten ({@link forgetUser}).
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import * as TypedCollection from "./internal/typedCollection.js"
import type { VectorStore, VectorStoreError } from "./VectorStore.js"

/**
 * The vector store collection episodic events live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const collection = "episodic_events"

/**
 * One recorded event: a plan step's outcome. `occurredAt` is when the step
 * ran, `recordedAt` when the event was recorded (epoch ms); `summarySource`
 * says whether the summarizer model or the heuristic wrote `summary`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EpisodicEvent = Schema.Struct({
  requestId: Schema.String,
  stepId: Schema.String,
  capability: Schema.String,
  outcome: Schema.Literal("succeeded", "failed", "skipped", "denied"),
  entities: Schema.Array(Schema.String),
  importance: Schema.Number.pipe(Schema.between(0, 1)),
  summary: Schema.String,
  summarySource: Schema.Literal("model", "heuristic"),
  summaryShortened: Schema.optionalWith(Schema.Boolean, { exact: true }),
  errorFacts: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  occurredAt: Schema.Finite,
  recordedAt: Schema.Finite
})

/**
 * An {@link EpisodicEvent}'s type.
 *
 * @since 0.1.0
 * @category models
 */
export interface EpisodicEvent extends Schema.Schema.Type<typeof EpisodicEvent> {}

/**
 * A stored event: its id, scope and (when filed for one) user.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredEvent {
  readonly id: string
  readonly scope: string
  readonly user?: string | undefined
  readonly event: EpisodicEvent
  readonly createdAt: number
}

/**
 * What {@link append} writes. `ttlMillis` sets the event's retention (kept
 * forever without one); `embedding` makes it findable by {@link related}.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendInput {
  readonly id: string
  readonly scope: string
  readonly event: EpisodicEvent
  readonly user?: string | undefined
  readonly embedding?: ReadonlyArray<number> | undefined
  readonly ttlMillis?: number | undefined
}

const events = TypedCollection.make(
  collection,
  EpisodicEvent,
  (event) => event.entities.length === 0 ? event.summary : `${event.summary} [${event.entities.join(", ")}]`
)

const toStored = (item: TypedCollection.Typed<EpisodicEvent>): StoredEvent => ({
  id: item.id,
  scope: item.partition,
  ...(item.keys.user === undefined ? {} : { user: item.keys.user }),
  event: item.value,
  createdAt: item.createdAt
})

/**
 * Files an event (replacing one with the same id).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { EpisodicMemory, VectorStore } from "effect-agent-pipeline"
 *
 * const program = EpisodicMemory.append({
 *   id: "req-1:s1",
 *   scope: "travel",
 *   event: {
 *     requestId: "req-1", stepId: "s1", capability: "weather_forecast", outcome: "succeeded",
 *     entities: ["Lisbon"], importance: 0.5, summary: "weather_forecast(Lisbon): 21°C, sunny",
 *     summarySource: "heuristic", occurredAt: 1_700_000_000_000, recordedAt: 1_700_000_000_100
 *   }
 * }).pipe(Effect.provide(VectorStore.layerMemory()))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const append = (input: AppendInput): Effect.Effect<StoredEvent, VectorStoreError, VectorStore> =>
  Effect.map(
    events.put({
      id: input.id,
      partition: input.scope,
      keys: input.user === undefined ? {} : { user: input.user },
      value: input.event,
      embedding: input.embedding,
      ttlMillis: input.ttlMillis
    }),
    toStored
  )

/**
 * The newest live events of a scope (created at or after `since`), newest
 * first.
 *
 * @example
 * ```ts
 * import { EpisodicMemory } from "effect-agent-pipeline"
 *
 * const lastDay = EpisodicMemory.recent({ scope: "travel", since: Date.now() - 86_400_000, limit: 20 })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const recent = (query: {
  readonly scope: string
  readonly since?: number | undefined
  readonly limit: number
}): Effect.Effect<ReadonlyArray<StoredEvent>, VectorStoreError, VectorStore> =>
  Effect.map(
    events.recent({ partition: query.scope, since: query.since, limit: query.limit }),
    (items) => items.map(toStored)
  )

/**
 * The live events of a scope most similar to `vector` (scoring at least
 * `minScore`), best first, with their cosine similarity.
 *
 * @example
 * ```ts
 * import { Embeddings, EpisodicMemory } from "effect-agent-pipeline"
 *
 * const similar = EpisodicMemory.related({
 *   scope: "travel", vector: Embeddings.embedOffline("weather in Lisbon"), limit: 5, minScore: 0.3
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const related = (query: {
  readonly scope: string
  readonly vector: ReadonlyArray<number>
  readonly limit: number
  readonly minScore?: number | undefined
}): Effect.Effect<
  ReadonlyArray<{ readonly event: StoredEvent; readonly score: number }>,
  VectorStoreError,
  VectorStore
> =>
  Effect.map(
    events.search({ partition: query.scope, vector: query.vector, limit: query.limit, minScore: query.minScore }),
    (hits) => hits.map((hit) => ({ event: toStored(hit.item), score: hit.score }))
  )

/**
 * Deletes every event filed for `user`, in every scope; returns how many.
 *
 * @example
 * ```ts
 * import { EpisodicMemory } from "effect-agent-pipeline"
 *
 * const forgotten = EpisodicMemory.forgetUser("u-42")
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const forgetUser = (user: string): Effect.Effect<number, VectorStoreError, VectorStore> =>
  events.remove({ keys: { user } })

/**
 * Deletes every event of a scope; returns how many.
 *
 * @example
 * ```ts
 * import { EpisodicMemory } from "effect-agent-pipeline"
 *
 * const cleared = EpisodicMemory.forgetScope("travel")
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const forgetScope = (scope: string): Effect.Effect<number, VectorStoreError, VectorStore> =>
  events.remove({ partition: scope })
