/**
 * The stores' tables, one migration set per dialect (SQLite, PostgreSQL),
 * run through `@effect/sql`'s Migrator when a store is built: a fresh
 * database gets every table on first use, an existing one only what it
 * lacks. Migrations are serialized across processes (SQLite's write lock,
 * a PostgreSQL advisory lock), so any number of processes may start on one
 * fresh database at once. Table names carry a prefix (default `eap_`) so
 * several stores — or test runs — can share one database.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import { makeWithTransaction, SqlClient, TransactionConnection } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Scope } from "effect"

/**
 * The tables of one store set.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tables {
  readonly records: string
  readonly checkpoints: string
  readonly activitySignals: string
  readonly vectors: string
  readonly migrations: string
}

/**
 * The default table-name prefix.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPrefix = "eap_"

/**
 * Table names from a prefix (letters, digits and `_` only: it is spliced into
 * DDL), folded to lower case: PostgreSQL folds the unquoted names the
 * Migrator looks its table up by (`'<table>'::regclass`), so a mixed-case
 * prefix would never find its own migration table again; SQLite's names
 * ignore case, so folding changes nothing there.
 *
 * @since 0.1.0
 * @category utils
 */
export const tablesFor = (prefix: string = defaultPrefix): Tables => {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix)) {
    throw new Error(`invalid table prefix ${JSON.stringify(prefix)}: use letters, digits and "_"`)
  }
  const folded = prefix.toLowerCase()
  return {
    records: `${folded}execution_records`,
    checkpoints: `${folded}checkpoints`,
    activitySignals: `${folded}activity_signals`,
    vectors: `${folded}vector_items`,
    migrations: `${folded}migrations`
  }
}

const executionRecords = (tables: Tables) =>
  Effect.flatMap(SqlClient, (sql) => {
    // The dialects differ in the key column and the JSON type only
    // (SQLite's INTEGER and BIGINT are the same 64-bit integers).
    const key = sql.onDialectOrElse({
      pg: () => "BIGSERIAL PRIMARY KEY",
      orElse: () => "INTEGER PRIMARY KEY AUTOINCREMENT"
    })
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
  Effect.flatMap(
    SqlClient,
    (sql) => sql`ALTER TABLE ${sql(tables.records)} ADD COLUMN writer_id TEXT`.pipe(Effect.asVoid)
  )

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
      sql`CREATE INDEX ${sql(`${tables.activitySignals}_domain`)} ON ${
        sql(tables.activitySignals)
      } (domain, expires_at)`,
      sql`CREATE INDEX ${sql(`${tables.activitySignals}_expires`)} ON ${sql(tables.activitySignals)} (expires_at)`
    ], { discard: true }))

/**
 * The vector store's items (`VectorStoreSql`). The embedding is compact:
 * float32 — a BLOB in SQLite (what `sqlite-vec` reads), `REAL[]` in
 * PostgreSQL (castable to pgvector's `vector`) — with its length and norm
 * beside it, so a search skips other dimensions and zero vectors without
 * reading them. Ranking columns come before the text and payload, which a
 * search reads only for the hits.
 */
const vectorItems = (tables: Tables) =>
  Effect.flatMap(SqlClient, (sql) => {
    const vector = sql.onDialectOrElse({ pg: () => "REAL[]", orElse: () => "BLOB" })
    const keys = sql.onDialectOrElse({ pg: () => "JSONB", orElse: () => "TEXT" })
    const norm = sql.onDialectOrElse({ pg: () => "DOUBLE PRECISION", orElse: () => "REAL" })
    return Effect.all([
      sql`CREATE TABLE ${sql(tables.vectors)} (
        collection TEXT NOT NULL,
        item_id TEXT NOT NULL,
        partition_key TEXT NOT NULL,
        dims INTEGER NOT NULL,
        norm ${sql.literal(norm)} NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        dim_keys ${sql.literal(keys)} NOT NULL,
        embedding ${sql.literal(vector)},
        content TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (collection, item_id)
      )`,
      sql`CREATE INDEX ${sql(`${tables.vectors}_partition`)} ON ${
        sql(tables.vectors)
      } (collection, partition_key, created_at)`,
      sql`CREATE INDEX ${sql(`${tables.vectors}_expires`)} ON ${sql(tables.vectors)} (expires_at)`
    ], { discard: true })
  })

const migrator = Migrator.make({})

/** Every migration, by `<id>_<name>` (the Migrator's record loader). */
const migrationsOf = (tables: Tables) => ({
  "1_execution_records": executionRecords(tables),
  "2_checkpoints": checkpoints(tables),
  "3_activity_signals": activitySignals(tables),
  "4_record_writer": recordWriter(tables),
  "5_vector_items": vectorItems(tables)
})

/** The newest migration this version of the library has. */
const latestMigration = Math.max(...Object.keys(migrationsOf(tablesFor())).map((key) => Number.parseInt(key, 10)))

/**
 * The newest migration a database has applied (0 for a fresh one), read
 * without locking anything: a database that is up to date — every start but
 * the first — needs no write lock, so processes starting together do not
 * queue, and a read-only copy of an up-to-date file still opens.
 */
const appliedMigration = (sql: SqlClient, tables: Tables): Effect.Effect<number, SqlError> =>
  Effect.gen(function*() {
    // Asked of the catalog first: a statement on a missing table fails, and
    // SQLite's client would keep that failure in its statement cache.
    const present = yield* sql.onDialectOrElse({
      pg: () => sql<{ readonly present: boolean }>`SELECT to_regclass(${tables.migrations}) IS NOT NULL AS present`,
      orElse: () =>
        sql<{ readonly present: number }>`SELECT 1 AS present FROM sqlite_master
          WHERE type = 'table' AND name = ${tables.migrations} COLLATE NOCASE`
    })
    if (present.length === 0 || !present[0]!.present) return 0
    const rows = yield* sql<{ readonly latest: number | string | null }>`
      SELECT MAX(migration_id) AS latest FROM ${sql(tables.migrations)}`
    return Number(rows[0]?.latest ?? 0)
  })

/**
 * A SQLite transaction that takes the write lock as it begins (`BEGIN
 * IMMEDIATE`, waiting for it under the connection's busy timeout). The
 * Migrator's own transaction is a deferred `BEGIN`: two processes both read
 * "nothing applied", one writes, and the other's upgrade to a writer fails
 * at once (`database is locked`) or — the Migrator treating a failed insert
 * of its bookkeeping rows as "another process is migrating" — it returns
 * before the tables exist (`no such table`). Inside this transaction the
 * Migrator's becomes a savepoint, and its read of what is applied comes
 * after the lock.
 */
const immediateTransaction = (sql: SqlClient) =>
  makeWithTransaction({
    transactionTag: TransactionConnection,
    spanAttributes: [["db.system.name", "sqlite"]],
    acquireConnection: Effect.flatMap(
      Scope.make(),
      (scope) => Effect.map(Scope.extend(sql.reserve, scope), (connection) => [scope, connection] as const)
    ),
    begin: (connection) => connection.executeUnprepared("BEGIN IMMEDIATE", [], undefined),
    savepoint: (connection, id) => connection.executeUnprepared(`SAVEPOINT effect_sql_${id}`, [], undefined),
    commit: (connection) => connection.executeUnprepared("COMMIT", [], undefined),
    rollback: (connection) => connection.executeUnprepared("ROLLBACK", [], undefined),
    rollbackSavepoint: (connection, id) =>
      connection.executeUnprepared(`ROLLBACK TO SAVEPOINT effect_sql_${id}`, [], undefined)
  })

/** The advisory-lock key of a migration table: a namespace, and a hash of the table's name. */
const advisoryLockNamespace = 0x45_41_50_4d // "EAPM"
const advisoryLockKey = (table: string): number => {
  // FNV-1a, as a signed 32-bit integer (the lock functions take int4 keys).
  let hash = 0x811c9dc5
  for (let i = 0; i < table.length; i++) hash = Math.imul(hash ^ table.charCodeAt(i), 0x01000193)
  return hash | 0
}

/**
 * A PostgreSQL transaction holding an advisory lock on the migration table's
 * name until it ends (`pg_advisory_xact_lock`: released at commit, at
 * rollback, and when a crashed process's connection closes). The migration
 * table is created inside it, under the lock: the Migrator's own check
 * (`select '<table>'::regclass`) would abort the transaction on a fresh
 * database, and two `CREATE TABLE`s racing outside a lock collide.
 */
const advisoryLocked = <A, E, R>(sql: SqlClient, tables: Tables, migrations: Effect.Effect<A, E, R>) =>
  sql.withTransaction(
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${advisoryLockNamespace}, ${advisoryLockKey(tables.migrations)})`
      // The Migrator's own definition of its table, for PostgreSQL.
      yield* sql`CREATE TABLE IF NOT EXISTS ${sql(tables.migrations)} (
        migration_id integer primary key,
        created_at timestamp with time zone not null default now(),
        name text not null
      )`
      return yield* migrations
    })
  )

/**
 * Brings the database up to date, safely when several processes (or several
 * Layers of one process) start on a fresh database at once: an up-to-date
 * database is left alone without taking any lock; otherwise the Migrator
 * runs under a lock every other migrating process waits for — SQLite's
 * write lock (`BEGIN IMMEDIATE`), a PostgreSQL advisory lock — so exactly
 * one process applies each migration and no process goes on before the
 * tables exist. A migration that fails is a `MigrationError` (the Migrator
 * makes it a defect), with the driver's error as its cause.
 *
 * @since 0.1.0
 * @category utils
 */
export const migrate = (tables: Tables): Effect.Effect<void, Migrator.MigrationError | SqlError, SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    if ((yield* appliedMigration(sql, tables)) >= latestMigration) return
    const run = migrator({ table: tables.migrations, loader: Migrator.fromRecord(migrationsOf(tables)) })
    const ran = yield* sql.onDialectOrElse({
      pg: () => advisoryLocked(sql, tables, run),
      // SQLite's driver is synchronous: a second connection of this process
      // (the activity store's, another Layer's) waiting for the write lock
      // blocks the whole thread for its busy timeout. So the transaction
      // that holds the lock runs to its end without yielding to the event
      // loop — it would otherwise yield every 2,048 operations, mid-way,
      // and stall behind that wait until it gave up (`database is locked`).
      sqlite: () => Effect.withMaxOpsBeforeYield(immediateTransaction(sql)(run), Number.MAX_SAFE_INTEGER),
      orElse: () => run
    })
    // Migrations it ran, it ran to the end. Running none is right when
    // another process got there first — and is also what the Migrator
    // returns, without migrating, when it believes another process is at
    // it: under the lock that cannot happen; if it ever did, say so here
    // rather than as `no such table` later.
    if (ran.length > 0) return
    const applied = yield* appliedMigration(sql, tables)
    if (applied < latestMigration) {
      return yield* new Migrator.MigrationError({
        reason: "bad-state",
        message: `migrations did not complete: the database has ${applied} of ${latestMigration}`
      })
    }
  }).pipe(
    Effect.catchSomeDefect((defect) =>
      defect instanceof Migrator.MigrationError ? Option.some(Effect.fail(defect)) : Option.none()
    )
  )
