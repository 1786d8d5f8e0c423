/**
 * The ActivityStore contract: the front service hooks use, the small
 * backend service (`ActivitySignalStore`) every backend — `memory/`,
 * `sql/`, `redis/` — implements, the signal model and the error. Users
 * reach it through the `ActivityStore` namespace (`stores/ActivityStore.ts`),
 * which adds the in-memory backend. Kept apart from that namespace so the
 * in-memory backend can import the contract without an import cycle.
 */
import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { findNotJson, Json } from "../../domain/Json.js"

/**
 * An activity store backend failed (unreachable, a failed statement, a
 * reply it cannot read), or a call was invalid (`operation` names the call).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 *
 * const othersIn = (domain: string) =>
 *   Effect.flatMap(ActivityStore.ActivityStore, (store) => store.listActive(domain)).pipe(
 *     Effect.catchTag("ActivityStoreError", () => Effect.succeed([]))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ActivityStoreError extends Schema.TaggedError<ActivityStoreError>(
  "effect-agent-pipeline/ActivityStoreError"
)("ActivityStoreError", {
  operation: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `activity store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * A stored signal: who (`agent`, `requestId`) does what (`summary`, `data`)
 * in which `domain`; announced at `announcedAt`, live while
 * `expiresAt > now` (epoch milliseconds).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ActivitySignal = Schema.Struct({
  signalId: Schema.String,
  domain: Schema.String,
  agent: Schema.String,
  requestId: Schema.String,
  summary: Schema.String,
  data: Schema.optionalWith(Json, { exact: true }),
  announcedAt: Schema.Number,
  expiresAt: Schema.Number
}).annotations({ identifier: "ActivitySignal" })

/**
 * A decoded {@link ActivitySignal}.
 *
 * @since 0.1.0
 * @category models
 */
export type ActivitySignal = typeof ActivitySignal.Type

/**
 * What `announce` takes: the signal without its times.
 *
 * @since 0.1.0
 * @category models
 */
export interface Announcement {
  readonly signalId: string
  readonly domain: string
  readonly agent: string
  readonly requestId: string
  readonly summary: string
  readonly data?: Json | undefined
}

/**
 * Options of `listActive`: leave out one signal (usually the caller's own),
 * return at most `limit` signals.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions {
  readonly excludeSignalId?: string | undefined
  readonly limit?: number | undefined
}

/**
 * The activity store hooks use: it reads the `Clock`, validates, and turns
 * TTLs into absolute expiry times for the backend.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* ActivityStore.ActivityStore
 *   yield* store.announce(
 *     { signalId: "bot-a/r1", domain: "payments", agent: "bot-a", requestId: "r1", summary: "restarting the gateway" },
 *     "30 seconds"
 *   )
 *   return yield* store.listActive("payments", { excludeSignalId: "bot-a/r1" })
 * }).pipe(Effect.provide(ActivityStore.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ActivityStore extends Context.Tag("effect-agent-pipeline/ActivityStore")<
  ActivityStore,
  ActivityStore.Service
>() {}

/**
 * The types that go with the {@link ActivityStore} tag.
 *
 * @since 0.1.0
 * @category services
 */
export declare namespace ActivityStore {
  /**
   * What hooks call.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** Stores (or replaces) a signal that lives `ttl` from now; returns it as stored. */
    readonly announce: (
      signal: Announcement,
      ttl: Duration.DurationInput
    ) => Effect.Effect<ActivitySignal, ActivityStoreError>
    /** Extends a live signal to `ttl` from now; `false` when it is gone (removed or expired). */
    readonly renew: (signalId: string, ttl: Duration.DurationInput) => Effect.Effect<boolean, ActivityStoreError>
    /** Removes a signal; `false` when there was none. */
    readonly remove: (signalId: string) => Effect.Effect<boolean, ActivityStoreError>
    /** The live signals of `domain`, oldest announcement first (ties by signal id). */
    readonly listActive: (
      domain: string,
      options?: ListOptions
    ) => Effect.Effect<ReadonlyArray<ActivitySignal>, ActivityStoreError>
  }
}

/**
 * What a backend implements. Every time is given (epoch milliseconds): a
 * backend never reads a clock of its own.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 *
 * // A backend that keeps nothing: every signal is gone at once.
 * const Forgetful = Layer.succeed(ActivityStore.ActivitySignalStore, {
 *   put: () => Effect.void,
 *   extend: () => Effect.succeed(false),
 *   delete: () => Effect.succeed(false),
 *   list: () => Effect.succeed([])
 * })
 * const StoreLive = ActivityStore.layer.pipe(Layer.provide(Forgetful))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ActivitySignalStore extends Context.Tag("effect-agent-pipeline/ActivitySignalStore")<
  ActivitySignalStore,
  ActivitySignalStore.Service
>() {}

/**
 * The types that go with the {@link ActivitySignalStore} tag.
 *
 * @since 0.1.0
 * @category services
 */
export declare namespace ActivitySignalStore {
  /**
   * What every backend implements.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** Stores or replaces `signal` (it may leave its old domain); signals expired at `now` may be dropped. */
    readonly put: (signal: ActivitySignal, now: number) => Effect.Effect<void, ActivityStoreError>
    /** Sets a signal's expiry if it is live at `now` (`expiresAt > now`); whether it was. */
    readonly extend: (signalId: string, expiresAt: number, now: number) => Effect.Effect<boolean, ActivityStoreError>
    /** Deletes a signal; whether one was stored. */
    readonly delete: (signalId: string) => Effect.Effect<boolean, ActivityStoreError>
    /** The signals of `domain` live at `now`, in any order. */
    readonly list: (domain: string, now: number) => Effect.Effect<ReadonlyArray<ActivitySignal>, ActivityStoreError>
  }
}

const invalid = (operation: string, detail: string) => new ActivityStoreError({ operation, detail })

const ttlMillis = (operation: string, ttl: Duration.DurationInput): Effect.Effect<number, ActivityStoreError> => {
  const decoded = Duration.decodeUnknown(ttl)
  if (decoded._tag === "None") return Effect.fail(invalid(operation, `ttl is not a duration: ${String(ttl)}`))
  const millis = Math.ceil(Duration.toMillis(decoded.value))
  return Number.isFinite(millis) && millis > 0
    ? Effect.succeed(millis)
    : Effect.fail(invalid(operation, `ttl must be positive and finite, got ${Duration.format(decoded.value)}`))
}

const checkAnnouncement = (signal: Announcement): string | undefined => {
  for (const key of ["signalId", "domain", "agent", "requestId"] as const) {
    const value: unknown = signal[key]
    if (typeof value !== "string" || value.length === 0) return `${key} must be a non-empty string`
  }
  if (typeof signal.summary !== "string") return "summary must be a string"
  if (signal.data !== undefined) {
    const notJson = findNotJson(signal.data)
    if (notJson !== undefined) return `data is not JSON at [${notJson.path.join(", ")}]: ${notJson.reason}`
  }
  return undefined
}

/** Oldest announcement first, ties by signal id: the same order on every backend. */
const byAnnouncement = (a: ActivitySignal, b: ActivitySignal): number =>
  a.announcedAt - b.announcedAt || (a.signalId < b.signalId ? -1 : a.signalId > b.signalId ? 1 : 0)

/**
 * Builds the front service over the backend in context.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 *
 * const store = ActivityStore.make.pipe(Effect.provideServiceEffect(
 *   ActivityStore.ActivitySignalStore,
 *   ActivityStore.makeStoreMemory
 * ))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ActivityStore.Service, never, ActivitySignalStore> = Effect.map(
  ActivitySignalStore,
  (backend) =>
    ActivityStore.of({
      announce: (signal, ttl) =>
        Effect.gen(function*() {
          const problem = checkAnnouncement(signal)
          if (problem !== undefined) return yield* invalid("announce", problem)
          const millis = yield* ttlMillis("announce", ttl)
          const now = yield* Clock.currentTimeMillis
          const stored: ActivitySignal = {
            signalId: signal.signalId,
            domain: signal.domain,
            agent: signal.agent,
            requestId: signal.requestId,
            summary: signal.summary,
            ...(signal.data === undefined ? {} : { data: signal.data }),
            announcedAt: now,
            expiresAt: now + millis
          }
          yield* backend.put(stored, now)
          return stored
        }),
      renew: (signalId, ttl) =>
        Effect.gen(function*() {
          const millis = yield* ttlMillis("renew", ttl)
          const now = yield* Clock.currentTimeMillis
          return yield* backend.extend(signalId, now + millis, now)
        }),
      remove: (signalId) => backend.delete(signalId),
      listActive: (domain, options) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const signals = yield* backend.list(domain, now)
          const live = signals
            .filter((s) => s.domain === domain && s.expiresAt > now && s.signalId !== options?.excludeSignalId)
            .sort(byAnnouncement)
          const limit = options?.limit
          return limit === undefined ? live : live.slice(0, Math.max(0, Math.floor(limit)))
        })
    })
)

/**
 * The front service over whichever backend is provided.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 * import * as Redis from "effect-agent-pipeline/redis"
 *
 * const ActivityLive = ActivityStore.layer.pipe(Layer.provide(Redis.layerStore({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ActivityStore, never, ActivitySignalStore> = Layer.effect(ActivityStore, make)
