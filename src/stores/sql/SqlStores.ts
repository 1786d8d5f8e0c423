/**
 * The stores over any `SqlClient` (SQLite or PostgreSQL): migrate, then
 * build. `Sqlite.ts` and `Postgres.ts` provide the client; a program that
 * already has a `SqlClient` can use these Layers directly.
 *
 * @since 0.1.0
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Layer } from "effect"
import { CheckpointStore } from "../CheckpointStore.js"
import { ExecutionStore, ExecutionStoreError, type RetentionSettings, sweepInBackground } from "../ExecutionStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import * as CheckpointStoreSql from "./CheckpointStoreSql.js"
import * as ExecutionStoreSql from "./ExecutionStoreSql.js"
import { migrate, type Tables, tablesFor } from "./migrations.js"

/**
 * Options shared by the SQL stores.
 *
 * - `tablePrefix`: prefix of every table name (default `eap_`; letters, digits,
 *   `_`; folded to lower case, as PostgreSQL folds unquoted names)
 * - `retention`: record retention (default 24 hours / 7 days)
 * - `sweepEvery`: how often expired records are deleted and ownerless
 *   running ones marked abandoned (default 1 minute)
 *
 * @since 0.1.0
 */
export interface SqlStoreOptions {
  readonly tablePrefix?: string | undefined
  readonly retention?: RetentionSettings | undefined
  readonly sweepEvery?: Duration.DurationInput | undefined
}

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
 */
export const layerExecutionStore = (
  options: SqlStoreOptions = {}
): Layer.Layer<ExecutionStore, ExecutionStoreError, SqlClient> =>
  Layer.scoped(
    ExecutionStore,
    Effect.gen(function*() {
      const tables = yield* migrated(options.tablePrefix)
      const store = yield* ExecutionStoreSql.make(tables, { retention: options.retention })
      yield* sweepInBackground(store, options.sweepEvery ?? Duration.minutes(1))
      return store
    })
  )

/** The tables of a prefix, brought up to date. */
const migrated = (prefix: string | undefined): Effect.Effect<Tables, ExecutionStoreError, SqlClient> =>
  Effect.try({
    try: () => tablesFor(prefix),
    catch: (error) => new ExecutionStoreError({ operation: "migrate", detail: String(error) })
  }).pipe(
    Effect.tap((tables) =>
      migrate(tables).pipe(
        Effect.mapError((error) =>
          new ExecutionStoreError({ operation: "migrate", detail: errorDetail(error), cause: error })
        )
      )
    )
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
 */
export const layerCheckpointStore = (
  options: Pick<SqlStoreOptions, "tablePrefix"> = {}
): Layer.Layer<CheckpointStore, ExecutionStoreError, SqlClient> =>
  Layer.effect(CheckpointStore, Effect.flatMap(migrated(options.tablePrefix), CheckpointStoreSql.make))

/**
 * Both stores over the same `SqlClient`.
 *
 * @since 0.1.0
 */
export const layer = (
  options: SqlStoreOptions = {}
): Layer.Layer<ExecutionStore | CheckpointStore, ExecutionStoreError, SqlClient> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      // One migration run for both stores.
      const tables = yield* migrated(options.tablePrefix)
      const records = yield* ExecutionStoreSql.make(tables, { retention: options.retention })
      yield* sweepInBackground(records, options.sweepEvery ?? Duration.minutes(1))
      const checkpoints = yield* CheckpointStoreSql.make(tables)
      return Context.make(ExecutionStore, records).pipe(Context.add(CheckpointStore, checkpoints))
    })
  )
