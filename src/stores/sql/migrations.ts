/**
 * The stores' tables, one migration set per dialect (SQLite, PostgreSQL),
 * run through `@effect/sql`'s Migrator when a store is built: a fresh
 * database gets every table on first use, an existing one only what it
 * lacks. Table names carry a prefix (default `eap_`) so several stores —
 * or test runs — can share one database.
 */
import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schedule } from "effect"

/** The tables of one store set. */
export interface Tables {
  readonly records: string
  readonly checkpoints: string
  readonly activitySignals: string
  readonly migrations: string
}

/** The default table-name prefix. */
export const defaultPrefix = "eap_"

/** Table names from a prefix (letters, digits and `_` only: it is spliced into DDL). */
export const tablesFor = (prefix: string = defaultPrefix): Tables => {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix)) {
    throw new Error(`invalid table prefix ${JSON.stringify(prefix)}: use letters, digits and "_"`)
  }
  return {
    records: `${prefix}execution_records`,
    checkpoints: `${prefix}checkpoints`,
    activitySignals: `${prefix}activity_signals`,
    migrations: `${prefix}migrations`
  }
}

const executionRecords = (tables: Tables) =>
  Effect.flatMap(SqlClient, (sql) => {
    // The dialects differ in the key column and the JSON type only
    // (SQLite's INTEGER and BIGINT are the same 64-bit integers).
    const key = sql.onDialectOrElse({ pg: () => "BIGSERIAL PRIMARY KEY", orElse: () => "INTEGER PRIMARY KEY AUTOINCREMENT" })
    const json = sql.onDialectOrElse({ pg: () => "JSONB", orElse: () => "TEXT" })
    const index = (name: string, columns: string) =>
      sql`CREATE INDEX ${sql(`${tables.records}_${name}`)} ON ${sql(tables.records)} (${sql.literal(columns)})`
    return Effect.all([
      sql`CREATE TABLE ${sql(tables.records)} (
        seq ${sql.literal(key)},
        request_id TEXT NOT NULL UNIQUE,
        revision BIGINT NOT NULL,
        status TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        stored_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        lease_expires_at BIGINT,
        hook_names ${sql.literal(json)} NOT NULL,
        schema_version INTEGER NOT NULL,
        body TEXT NOT NULL
      )`,
      index("expires", "expires_at"),
      index("lease", "status, lease_expires_at"),
      index("started", "started_at")
    ], { discard: true })
  })

/** Which writer's snapshot a row is exactly (see `ExecutionStoreSql`): a writer's next one needs no merge. */
const recordWriter = (tables: Tables) =>
  Effect.flatMap(SqlClient, (sql) =>
    sql`ALTER TABLE ${sql(tables.records)} ADD COLUMN writer_id TEXT`.pipe(Effect.asVoid))

const checkpoints = (tables: Tables) =>
  Effect.flatMap(SqlClient, (sql) =>
    sql`CREATE TABLE ${sql(tables.checkpoints)} (
      checkpoint_id TEXT PRIMARY KEY,
      request_id TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      claim_owner TEXT,
      claim_expires_at BIGINT
    )`.pipe(Effect.asVoid))

const activitySignals = (tables: Tables) =>
  Effect.flatMap(SqlClient, (sql) =>
    Effect.all([
      sql`CREATE TABLE ${sql(tables.activitySignals)} (
        signal_id TEXT PRIMARY KEY,
        domain TEXT NOT NULL,
        agent TEXT NOT NULL,
        request_id TEXT NOT NULL,
        summary TEXT NOT NULL,
        data TEXT,
        announced_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      sql`CREATE INDEX ${sql(`${tables.activitySignals}_domain`)} ON ${sql(tables.activitySignals)} (domain, expires_at)`,
      sql`CREATE INDEX ${sql(`${tables.activitySignals}_expires`)} ON ${sql(tables.activitySignals)} (expires_at)`
    ], { discard: true }))

const migrator = Migrator.make({})

/**
 * Brings the database up to date. Two processes (or two Layers) starting on
 * a fresh database race for the migration table: the loser sees `locked`,
 * `duplicates` or a table that already exists, and tries again once the
 * winner is done (the second run finds nothing left to do).
 */
export const migrate = (tables: Tables): Effect.Effect<void, Migrator.MigrationError | SqlError, SqlClient> =>
  migrator({
    table: tables.migrations,
    loader: Migrator.fromRecord({
      "1_execution_records": executionRecords(tables),
      "2_checkpoints": checkpoints(tables),
      "3_activity_signals": activitySignals(tables),
      "4_record_writer": recordWriter(tables)
    })
  }).pipe(
    Effect.retry({
      while: (error) =>
        error._tag === "SqlError" || error.reason === "locked" || error.reason === "duplicates",
      schedule: Schedule.spaced("50 millis"),
      times: 40
    }),
    Effect.asVoid
  )
