/**
 * The activity store over any `SqlClient` (SQLite or PostgreSQL): migrate,
 * then build — the counterpart of `SqlStores.layerExecutionStore` for
 * activity signals. Several agent processes sharing one PostgreSQL database
 * see each other's signals.
 *
 * @since 0.1.0
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { ActivitySignalStore, ActivityStore, ActivityStoreError, make as makeFront } from "../ActivityStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import * as ActivityStoreSql from "./ActivityStoreSql.js"
import { migrate, tablesFor } from "./migrations.js"

/**
 * Options: `tablePrefix`, the prefix of every table name (default `eap_`;
 * letters, digits, `_`; folded to lower case) — the same prefix as the
 * execution store's, so one migration table covers both.
 *
 * @since 0.1.0
 */
export interface SqlActivityStoreOptions {
  readonly tablePrefix?: string | undefined
}

/**
 * Migrates the database, then builds the signal backend over it. A database
 * that cannot be reached or migrated fails the Layer with an
 * `ActivityStoreError` (`operation: "migrate"`).
 *
 * @since 0.1.0
 */
export const layerSignalStore = (
  options: SqlActivityStoreOptions = {}
): Layer.Layer<ActivitySignalStore, ActivityStoreError, SqlClient> =>
  Layer.effect(
    ActivitySignalStore,
    Effect.gen(function*() {
      const tables = yield* Effect.try({
        try: () => tablesFor(options.tablePrefix),
        catch: (error) => new ActivityStoreError({ operation: "migrate", detail: String(error) })
      })
      yield* migrate(tables).pipe(
        Effect.mapError((error) =>
          new ActivityStoreError({ operation: "migrate", detail: errorDetail(error), cause: error })
        )
      )
      return yield* ActivityStoreSql.make(tables)
    })
  )

/**
 * The activity store in the database of the current `SqlClient`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const ActivityLive = Postgres.SqlActivityStore.layerActivityStore({ tablePrefix: "agent_" }).pipe(
 *   Layer.provide(Postgres.layerClient({ url: "postgres://agent:secret@127.0.0.1:5432/agent" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
export const layerActivityStore = (
  options: SqlActivityStoreOptions = {}
): Layer.Layer<ActivityStore, ActivityStoreError, SqlClient> =>
  Layer.effect(ActivityStore, makeFront).pipe(Layer.provide(layerSignalStore(options)))
