/**
 * The stores over any `SqlClient` (SQLite or PostgreSQL) — execution
 * records, HITL checkpoints, activity signals and vector items: migrate,
 * then build.
 * `Sqlite.ts` and `Postgres.ts` provide the client; a program that already
 * has a `SqlClient` can use these Layers directly. Every Layer runs the
 * same migrations (serialized across processes), so any of them may be
 * built first, and several processes may start on one fresh database at
 * once.
 *
 * @since 0.1.0
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Layer, Schedule, type Scope } from "effect"
import { ActivitySignalStore, ActivityStore, ActivityStoreError, make as makeFront } from "../contract/ActivityStore.js"
import { CheckpointStore } from "../contract/CheckpointStore.js"
import {
  ExecutionStore,
  ExecutionStoreError,
  type RetentionSettings,
  sweepInBackground
} from "../contract/ExecutionStore.js"
import { type SearchPreference, VectorStore, VectorStoreError } from "../contract/VectorStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import * as ActivityStoreSql from "./ActivityStoreSql.js"
import * as CheckpointStoreSql from "./CheckpointStoreSql.js"
import * as ExecutionStoreSql from "./ExecutionStoreSql.js"
import { migrate, type Tables, tablesFor } from "./migrations.js"
import * as VectorStoreSql from "./VectorStoreSql.js"

/**
 * Options shared by the SQL stores.
 *
 * - `tablePrefix`: prefix of every table name (default `eap_`; letters, digits,
 *   `_`; folded to lower case, as PostgreSQL folds unquoted names) — use the
 *   same prefix for every store of one agent, so one migration table covers
 *   them all
 * - `retention`: record retention (default 24 hours / 7 days)
 * - `sweepEvery`: how often expired records are deleted and ownerless
 *   running ones marked abandoned (default 1 minute)
 * - `asyncCommit` (PostgreSQL; default `false`): execution record writes
 *   commit without waiting for PostgreSQL's WAL flush
 *   (`synchronous_commit = off` for those transactions only; checkpoints
 *   and everything else stay synchronous). Worth it where the disk's flush
 *   is slow: a batch of writes no longer waits for it (measured: 0.38× →
 *   0.52× the memory store's recorded requests per second, 16 requests in
 *   flight, a flush of about 3.5 ms). An agent process
 *   that crashes loses nothing more (the database has the writes); a
 *   PostgreSQL crash or power loss may lose the record writes of the last
 *   three `wal_writer_delay`s (600 ms by default) — the same class of
 *   guarantee as SQLite's default `synchronous = NORMAL`. SQLite ignores it.
 * - `vectorSearch`: how the vector store ranks — `auto` (default: `sqlite-vec`
 *   on SQLite, pgvector on PostgreSQL, brute force with one warning when the
 *   extension cannot be used), `extension` (the extension or an
 *   `unavailable` error), `bruteForce`
 *
 * @since 0.1.0
 * @category models
 */
export interface SqlStoreOptions {
  readonly tablePrefix?: string | undefined
  readonly retention?: RetentionSettings | undefined
  readonly sweepEvery?: Duration.DurationInput | undefined
  readonly asyncCommit?: boolean | undefined
  readonly vectorSearch?: SearchPreference | undefined
}

/** The tables of a prefix, brought up to date; a failure is the store's own error. */
const migrated = <E>(
  prefix: string | undefined,
  fail: (options: { readonly detail: string; readonly cause?: unknown }) => E
): Effect.Effect<Tables, E, SqlClient> =>
  Effect.try({
    try: () => tablesFor(prefix),
    catch: (error) => fail({ detail: String(error) })
  }).pipe(
    Effect.tap((tables) =>
      migrate(tables).pipe(Effect.mapError((error) => fail({ detail: errorDetail(error), cause: error })))
    )
  )

/** The execution store over the migrated tables. */
const makeExecutionStore = (tables: Tables, options: SqlStoreOptions) =>
  ExecutionStoreSql.make(tables, { retention: options.retention, asyncCommit: options.asyncCommit })

const executionStoreFailed = (options: { readonly detail: string; readonly cause?: unknown }) =>
  new ExecutionStoreError({ operation: "migrate", ...options })

const vectorStoreFailed = (options: { readonly detail: string; readonly cause?: unknown }) =>
  new VectorStoreError({ operation: "open", reason: "backend", ...options })

/**
 * The vector store over the migrated tables, its expired items deleted
 * every `sweepEvery` in the current Scope (a failed purge is logged; expired
 * items are never returned either way).
 */
const makeVectorStore = (
  tables: Tables,
  options: SqlStoreOptions
): Effect.Effect<VectorStore.Service, never, SqlClient | Scope.Scope> =>
  Effect.tap(VectorStoreSql.make(tables, { search: options.vectorSearch }), (store) =>
    store.purgeExpired.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("vector store purge failed", cause)),
      Effect.schedule(Schedule.spaced(options.sweepEvery ?? Duration.minutes(1))),
      Effect.interruptible,
      Effect.forkScoped
    ))

const activityStoreFailed = (options: { readonly detail: string; readonly cause?: unknown }) =>
  new ActivityStoreError({ operation: "migrate", ...options })

/**
 * Migrates the database, then builds the execution store over it (with its
 * sweep in the Layer's scope). Any number of processes may do this at once
 * on a fresh database: migrations are serialized across processes (SQLite:
 * `BEGIN IMMEDIATE` under the busy timeout; PostgreSQL: an advisory lock).
 * A database that cannot be reached or migrated fails the Layer with an
 * `ExecutionStoreError` (`operation: "migrate"`) whose detail carries the
 * driver's own message.
 *
 * @example
 * ```ts
 * import { SqlStores } from "effect-agent-pipeline/sqlite"
 *
 * // over a SqlClient the program already provides
 * const StoreLive = SqlStores.layerExecutionStore({ tablePrefix: "agent_" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerExecutionStore = (
  options: SqlStoreOptions = {}
): Layer.Layer<ExecutionStore, ExecutionStoreError, SqlClient> =>
  Layer.scoped(
    ExecutionStore,
    Effect.gen(function*() {
      const tables = yield* migrated(options.tablePrefix, executionStoreFailed)
      const store = yield* makeExecutionStore(tables, options)
      yield* sweepInBackground(store, options.sweepEvery ?? Duration.minutes(1))
      return store
    })
  )

/**
 * Migrates the database, then builds the checkpoint store over it: HITL
 * checkpoints another process can claim and resume.
 *
 * @example
 * ```ts
 * import { SqlStores } from "effect-agent-pipeline/postgres"
 *
 * const CheckpointsLive = SqlStores.layerCheckpointStore()
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCheckpointStore = (
  options: Pick<SqlStoreOptions, "tablePrefix"> = {}
): Layer.Layer<CheckpointStore, ExecutionStoreError, SqlClient> =>
  Layer.effect(
    CheckpointStore,
    Effect.flatMap(migrated(options.tablePrefix, executionStoreFailed), CheckpointStoreSql.make)
  )

/**
 * Migrates the database, then builds the vector store over it: items that
 * memory and the semantic cache keep, searched by cosine similarity (see
 * `vectorSearch` in {@link SqlStoreOptions} for how it ranks; decided on
 * first use). A database that cannot be reached or migrated fails the Layer
 * with a `VectorStoreError` (`operation: "open"`).
 *
 * @example
 * ```ts
 * import { SqlStores } from "effect-agent-pipeline/sqlite"
 *
 * // over a SqlClient the program already provides
 * const VectorsLive = SqlStores.layerVectorStore({ vectorSearch: "extension" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerVectorStore = (
  options: Pick<SqlStoreOptions, "tablePrefix" | "sweepEvery" | "vectorSearch"> = {}
): Layer.Layer<VectorStore, VectorStoreError, SqlClient> =>
  Layer.scoped(
    VectorStore,
    Effect.flatMap(migrated(options.tablePrefix, vectorStoreFailed), (tables) => makeVectorStore(tables, options))
  )

/**
 * The execution, checkpoint and vector stores over the same `SqlClient`,
 * with one migration run.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * const StoresLive = Sqlite.SqlStores.layer({ tablePrefix: "agent_" }).pipe(
 *   Layer.provide(Sqlite.layerClient("./data/agent.db"))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: SqlStoreOptions = {}
): Layer.Layer<ExecutionStore | CheckpointStore | VectorStore, ExecutionStoreError, SqlClient> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const tables = yield* migrated(options.tablePrefix, executionStoreFailed)
      const records = yield* makeExecutionStore(tables, options)
      yield* sweepInBackground(records, options.sweepEvery ?? Duration.minutes(1))
      const checkpoints = yield* CheckpointStoreSql.make(tables)
      const vectors = yield* makeVectorStore(tables, options)
      return Context.make(ExecutionStore, records).pipe(
        Context.add(CheckpointStore, checkpoints),
        Context.add(VectorStore, vectors)
      )
    })
  )

/**
 * Migrates the database, then builds the activity signal backend over it
 * (for `ActivityStore.layer`). A database that cannot be reached or
 * migrated fails the Layer with an `ActivityStoreError`
 * (`operation: "migrate"`).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 * import { SqlStores } from "effect-agent-pipeline/postgres"
 *
 * const ActivityLive = ActivityStore.layer.pipe(Layer.provide(SqlStores.layerActivitySignalStore()))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerActivitySignalStore = (
  options: Pick<SqlStoreOptions, "tablePrefix"> = {}
): Layer.Layer<ActivitySignalStore, ActivityStoreError, SqlClient> =>
  Layer.effect(
    ActivitySignalStore,
    Effect.flatMap(migrated(options.tablePrefix, activityStoreFailed), ActivityStoreSql.make)
  )

/**
 * The activity store in the database of the current `SqlClient`: agent
 * processes sharing one database see each other's signals.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const ActivityLive = Postgres.SqlStores.layerActivityStore({ tablePrefix: "agent_" }).pipe(
 *   Layer.provide(Postgres.layerClient({ url: "postgres://agent:secret@127.0.0.1:5432/agent" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerActivityStore = (
  options: Pick<SqlStoreOptions, "tablePrefix"> = {}
): Layer.Layer<ActivityStore, ActivityStoreError, SqlClient> =>
  Layer.effect(ActivityStore, makeFront).pipe(Layer.provide(layerActivitySignalStore(options)))
