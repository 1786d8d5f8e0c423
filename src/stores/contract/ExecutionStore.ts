/**
 * The ExecutionStore contract: the service tag, its errors and the shapes
 * of its calls. Every backend — `memory/`, `sql/` — implements it; users
 * reach it through the `ExecutionStore` namespace (`stores/ExecutionStore.ts`),
 * which adds the in-memory backend. Kept apart from that namespace so the
 * in-memory backend can import the contract without an import cycle.
 */
import { Context, Duration, Effect, type Option, Schedule, Schema, type Scope } from "effect"
import { id, TypeId } from "../../domain/ErrorId.js"
import { type ExecutionRecord, isErrorRecord, type LifecycleStatus } from "../../domain/ExecutionRecord.js"

/**
 * A store backend failed (unreachable, locked, a failed statement), or a
 * `list` cursor was not one the store handed out. `operation` names the
 * call (`open` and `migrate` for a store that could not be built).
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { ExecutionStore } from "effect-agent-pipeline"
 *
 * const recordOf = (requestId: string) =>
 *   Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get(requestId)).pipe(
 *     Effect.catchTag("ExecutionStoreError", (e) => Effect.as(Effect.logWarning(e.message), Option.none()))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecutionStoreError extends Schema.TaggedError<ExecutionStoreError>(
  "effect-agent-pipeline/ExecutionStoreError"
)("ExecutionStoreError", {
  operation: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `execution store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * A stored record that does not decode: its row is corrupt, or it was
 * written by a newer version of this library (`future_version`). Only that
 * record is affected: `get` fails with this error, `list` reports it in
 * `undecodable` and goes on.
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordDecodeError extends Schema.TaggedError<RecordDecodeError>(id("RecordDecodeError"))(
  "RecordDecodeError",
  {
    requestId: Schema.String,
    reason: Schema.Literal("corrupt", "future_version"),
    detail: Schema.String
  }
) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `execution record ${this.requestId} does not decode (${this.reason}): ${this.detail}`
  }
}

/**
 * How long records are kept: successful / suspended / running records use
 * `normal`; failed, interrupted and abandoned ones use `error`. Legacy
 * records (no lifecycle) use `normal`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetentionSettings {
  readonly normal: Duration.DurationInput
  readonly error: Duration.DurationInput
}

/**
 * The default retention: 24 hours for normal records, 7 days for errors.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRetention: RetentionSettings = { normal: Duration.hours(24), error: Duration.days(7) }

/**
 * The retention deadline (epoch milliseconds) of a record saved at `now`.
 *
 * @since 0.1.0
 * @category utils
 */
export const expiresAt = (record: ExecutionRecord, now: number, retention: RetentionSettings): number =>
  now + Duration.toMillis(isErrorRecord(record) ? retention.error : retention.normal)

/**
 * Whether a save was written or refused because a newer (or equal) revision
 * is already stored.
 *
 * @since 0.1.0
 * @category models
 */
export type SaveResult = "written" | "stale"

/**
 * What `update` did: wrote the next revision, had nothing to change, or
 * found no live record.
 *
 * @since 0.1.0
 * @category models
 */
export type UpdateResult = "written" | "unchanged" | "missing"

/**
 * Whether `create` made the record, or a live record already has its id.
 *
 * @since 0.1.0
 * @category models
 */
export type CreateResult = "created" | "exists"

/**
 * A record's completion as `list` filters it: a lifecycle status, or
 * `unknown` for a legacy record without one.
 *
 * @since 0.1.0
 * @category models
 */
export type ListedStatus = LifecycleStatus | "unknown"

/**
 * What `list` returns, newest request first (by when its record was
 * created). All fields are optional.
 *
 * - `limit`: records per page (default 100, at most 1000; below 0 counts as 0)
 * - `status`: only records with one of these completions
 * - `startedFrom` / `startedBefore`: the request's start time (epoch ms),
 *   `startedFrom <= startedAt < startedBefore`
 * - `hook`: only records with an invocation of the hook with this name
 * - `cursor`: the `next` of the previous page
 *
 * @example
 * ```ts
 * import type { ExecutionStore } from "effect-agent-pipeline"
 *
 * const failedToday: ExecutionStore.ListQuery = {
 *   status: ["failed", "abandoned"],
 *   startedFrom: Date.now() - 24 * 60 * 60 * 1000,
 *   limit: 50
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ListQuery {
  readonly limit?: number | undefined
  readonly status?: ReadonlyArray<ListedStatus> | undefined
  readonly startedFrom?: number | undefined
  readonly startedBefore?: number | undefined
  readonly hook?: string | undefined
  readonly cursor?: string | undefined
}

/**
 * One page of `list`: the records that decoded, one error per stored record
 * that did not, and the cursor of the next page (absent on the last one).
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordPage {
  readonly records: ReadonlyArray<ExecutionRecord>
  readonly undecodable: ReadonlyArray<RecordDecodeError>
  readonly next?: string | undefined
}

/**
 * The page size of `list` when the query gives no `limit`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPageSize = 100

/**
 * The largest page size of `list`: a larger `limit` is lowered to it.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPageSize = 1000

/**
 * The store service: where execution records live, revision-gated.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ExecutionStore } from "effect-agent-pipeline"
 *
 * // The newest failed requests, with the hook runs that ended them.
 * const recentFailures = Effect.gen(function*() {
 *   const store = yield* ExecutionStore.ExecutionStore
 *   const page = yield* store.list({ status: ["failed"], limit: 10 })
 *   return page.records.map((record) => ({ requestId: record.requestId, runs: record.hookInvocations.length }))
 * }).pipe(Effect.provide(ExecutionStore.layerMemory()))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ExecutionStore extends Context.Tag("effect-agent-pipeline/ExecutionStore")<
  ExecutionStore,
  ExecutionStore.Service
>() {}

/**
 * The types that go with the {@link ExecutionStore} tag.
 *
 * @since 0.1.0
 * @category services
 */
export declare namespace ExecutionStore {
  /**
   * What every backend implements.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /**
     * Creates the record of a request that begins, atomically: `exists` when
     * a live record already has its request id (an expired one is replaced).
     */
    readonly create: (record: ExecutionRecord) => Effect.Effect<CreateResult, ExecutionStoreError>
    /**
     * Writes the snapshot if its revision is newer than the stored one (a
     * conditional write). Hook runs it shares with the stored record keep
     * what the stored one has further along (effects, ended runs): late
     * evidence from another writer is never lost.
     */
    readonly save: (record: ExecutionRecord) => Effect.Effect<SaveResult, ExecutionStoreError>
    /**
     * Applies `f` to the newest stored record and writes what it returns as
     * the next revision — one past the stored one, or the revision `f` gave
     * if that is higher — atomically (retried if another writer got there
     * first); `f` returning `undefined` writes nothing. How a finished
     * request's late effect updates reach the newest snapshot, whoever
     * wrote it.
     */
    readonly update: (
      requestId: string,
      f: (record: ExecutionRecord) => ExecutionRecord | undefined
    ) => Effect.Effect<UpdateResult, ExecutionStoreError | RecordDecodeError>
    /** The record, unless absent or past its retention. */
    readonly get: (
      requestId: string
    ) => Effect.Effect<Option.Option<ExecutionRecord>, ExecutionStoreError | RecordDecodeError>
    /** A page of live records, newest request first, filtered by `query`. */
    readonly list: (query?: ListQuery) => Effect.Effect<RecordPage, ExecutionStoreError>
    /** Deletes records past their retention; returns how many. */
    readonly purgeExpired: Effect.Effect<number, ExecutionStoreError>
    /**
     * Marks `running` records whose owner's lease expired as `abandoned`
     * (a new revision, ended now, error retention); returns how many.
     */
    readonly sweepAbandoned: Effect.Effect<number, ExecutionStoreError>
  }
}

/**
 * Runs a store's sweep — `purgeExpired`, then `sweepAbandoned` — every
 * `every` on the `Clock`, in the current Scope, for as long as it lasts.
 * Every backend's Layer starts one; a failed sweep is logged and the next
 * one runs on time.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ExecutionStore } from "effect-agent-pipeline"
 *
 * // A store built elsewhere, swept every 5 minutes while the Layer lives.
 * const SweptStore = Layer.scoped(
 *   ExecutionStore.ExecutionStore,
 *   Effect.tap(ExecutionStore.makeMemory({ sweepEvery: "24 hours" }), (store) =>
 *     ExecutionStore.sweepInBackground(store, "5 minutes"))
 * )
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const sweepInBackground = (
  store: ExecutionStore.Service,
  every: Duration.DurationInput = Duration.minutes(1)
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.zipRight(store.purgeExpired, store.sweepAbandoned).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("execution store sweep failed", cause)),
    Effect.schedule(Schedule.spaced(every)),
    Effect.interruptible,
    Effect.forkScoped,
    Effect.asVoid
  )
