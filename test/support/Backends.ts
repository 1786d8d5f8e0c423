/**
 * The real backends the store suites run against. PostgreSQL and Redis are
 * servers that `.ci/run` starts (`.ci/services.sh`) and names in
 * `EAP_TEST_DATABASE_URL` / `EAP_TEST_REDIS_URL`. Without them, their suites
 * are skipped and say why — unless `EAP_REQUIRE_BACKENDS=1` (set by CI), in
 * which case a missing server fails the run instead of passing silently.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql/SqlClient"
import { Duration, Effect, Layer, Redacted } from "effect"
import type { CheckpointStore } from "../../src/stores/CheckpointStore.js"
import type { ExecutionStore, RetentionSettings } from "../../src/stores/ExecutionStore.js"
import { tablesFor } from "../../src/stores/sql/migrations.js"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"

/** Whether CI demands every backend. */
export const backendsRequired = process.env["EAP_REQUIRE_BACKENDS"] === "1"

/** The PostgreSQL URL, if a server was started for the tests. */
export const postgresUrl = process.env["EAP_TEST_DATABASE_URL"]

/** The Redis URL, if a server was started for the tests. */
export const redisUrl = process.env["EAP_TEST_REDIS_URL"]

/**
 * Why a backend's suite does not run here, or undefined when it runs. In CI
 * a missing server is an error, not a skip.
 */
export const unavailable = (backend: "postgres" | "redis"): string | undefined => {
  const url = backend === "postgres" ? postgresUrl : redisUrl
  if (url !== undefined) return undefined
  const reason = `${backend}: EAP_TEST_${
    backend === "postgres" ? "DATABASE" : "REDIS"
  }_URL is not set (run .ci/services.sh)`
  if (backendsRequired) throw new Error(`EAP_REQUIRE_BACKENDS=1 but ${reason}`)
  return reason
}

interface StoreOptions {
  readonly retention?: RetentionSettings
  readonly sweepEvery?: Duration.DurationInput
}

/** A fresh SQLite store per build: a private in-memory database. */
export const sqliteStore = (options?: StoreOptions): Layer.Layer<ExecutionStore> =>
  Layer.orDie(Sqlite.layerExecutionStore({ filename: ":memory:", ...options }))

let prefixes = 0
/** A table prefix no other build in this process (or another run) uses. */
export const uniquePrefix = (): string => `t${process.pid}_${Date.now().toString(36)}_${(prefixes++).toString(36)}_`

/** The PostgreSQL client of the test database. */
export const postgresClient = (): Layer.Layer<SqlClient> =>
  Layer.orDie(PgClient.layer({ url: Redacted.make(postgresUrl ?? ""), maxConnections: 8 }))

/** Drops the tables of a prefix, now. */
export const dropTablesNow = (prefix: string) =>
  Effect.flatMap(SqlClient, (sql) => {
    const tables = tablesFor(prefix)
    return Effect.forEach(
      Object.values(tables),
      (table) => sql`DROP TABLE IF EXISTS ${sql(table)}`,
      { discard: true }
    )
  }).pipe(Effect.orDie)

/** Drops the tables of a prefix when the scope closes. */
export const dropTables = (prefix: string) => Effect.addFinalizer(() => dropTablesNow(prefix))

/** A fresh PostgreSQL store per build: its own tables, dropped afterwards. */
export const postgresStore = (options?: StoreOptions): Layer.Layer<ExecutionStore> => {
  const prefix = uniquePrefix()
  return SqlStores.layerExecutionStore({ tablePrefix: prefix, ...options }).pipe(
    Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
    Layer.provide(postgresClient()),
    Layer.orDie
  )
}

/** A fresh SQLite checkpoint store per build: a private in-memory database. */
export const sqliteCheckpointStore = (): Layer.Layer<CheckpointStore> =>
  Layer.orDie(Sqlite.layerCheckpointStore({ filename: ":memory:" }))

/** A fresh PostgreSQL checkpoint store per build: its own tables, dropped afterwards. */
export const postgresCheckpointStore = (): Layer.Layer<CheckpointStore> => {
  const prefix = uniquePrefix()
  return SqlStores.layerCheckpointStore({ tablePrefix: prefix }).pipe(
    Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
    Layer.provide(postgresClient()),
    Layer.orDie
  )
}
