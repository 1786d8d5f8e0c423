/**
 * The durable engine's tables, prepared before any runner starts (issue 24).
 *
 * On PostgreSQL the cluster's own start-up races when several runners start
 * on a fresh table prefix at once: `SqlMessageStorage` runs the `@effect/sql`
 * Migrator, which checks for `<prefix>_migrations` with `select
 * '<table>'::regclass` and, when it is missing, runs a plain `CREATE TABLE`
 * (no `IF NOT EXISTS`) *before* it takes its lock (`LOCK TABLE … IN ACCESS
 * EXCLUSIVE MODE`); two processes both see it missing and one fails with
 * 42P07 `relation already exists` (the spike: 1 start in 68). Concurrent
 * `CREATE TABLE IF NOT EXISTS` of `SqlRunnerStorage` (`<prefix>_runners`,
 * `<prefix>_locks`) can also collide (a unique violation on `pg_type`).
 *
 * So every runner first takes a transaction-scoped advisory lock on the
 * prefix and creates those three tables itself, in the cluster's own
 * shapes, with `IF NOT EXISTS`: the first runner creates them, the others
 * wait for its commit and find them. The Migrator then finds its table and
 * serializes the real migrations under its own table lock. The advisory lock
 * uses the two-key form (a namespace and a hash of the prefix), a key space
 * the cluster never uses (and with `shardLockDisableAdvisory` it takes no
 * advisory locks at all).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/** The advisory-lock namespace of the durable engine's preparation ("EAPD"). */
const lockNamespace = 0x45_41_50_44

/** FNV-1a of a string as a signed 32-bit integer (the lock functions take int4 keys). */
const lockKey = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash | 0
}

/** The cluster's table names for a prefix. */
export const clusterTables = (prefix: string) => ({
  migrations: `${prefix}_migrations`,
  messages: `${prefix}_messages`,
  replies: `${prefix}_replies`,
  runners: `${prefix}_runners`,
  locks: `${prefix}_locks`,
  /** The old layout's table: `SqlRunnerStorage` drops `_shards` and `_runners` when it finds it. */
  shards: `${prefix}_shards`
})

/**
 * Creates the migration, runner and lock tables of a prefix on PostgreSQL
 * under an advisory lock (see the module comment); does nothing on other
 * databases (SQLite: one process per file, and the Migrator's SQLite path
 * uses `IF NOT EXISTS`).
 */
export const prepareTables = (sql: SqlClient, prefix: string): Effect.Effect<void, SqlError> => {
  const tables = clusterTables(prefix)
  return sql.onDialectOrElse({
    pg: () =>
      sql.withTransaction(
        Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${lockNamespace}, ${lockKey(prefix)})`
          // The Migrator's own definition of its table (@effect/sql Migrator, PostgreSQL).
          yield* sql`CREATE TABLE IF NOT EXISTS ${sql(tables.migrations)} (
            migration_id integer primary key,
            created_at timestamp with time zone not null default now(),
            name text not null
          )`
          // SqlRunnerStorage's definitions (@effect/cluster 0.60, PostgreSQL).
          yield* sql`CREATE TABLE IF NOT EXISTS ${sql(tables.runners)} (
            machine_id SERIAL PRIMARY KEY,
            address VARCHAR(255) NOT NULL,
            runner TEXT NOT NULL,
            healthy BOOLEAN NOT NULL DEFAULT TRUE,
            last_heartbeat TIMESTAMP NOT NULL DEFAULT NOW(),
            UNIQUE(address)
          )`
          yield* sql`CREATE TABLE IF NOT EXISTS ${sql(tables.locks)} (
            shard_id VARCHAR(50) PRIMARY KEY,
            address VARCHAR(255) NOT NULL,
            acquired_at TIMESTAMP NOT NULL
          )`
        })
      ),
    orElse: () => Effect.void
  })
}

/**
 * Drops every table of a prefix (tests, and a deployment being removed).
 * The runners of that prefix must be stopped first.
 */
export const dropTables = (sql: SqlClient, prefix: string): Effect.Effect<void, SqlError> =>
  Effect.forEach(
    Object.values(clusterTables(prefix)),
    (table) => sql`DROP TABLE IF EXISTS ${sql(table)}`,
    { discard: true }
  )
