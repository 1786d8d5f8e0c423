/**
 * How a SQL vector store ranks, decided once per store on its first use (so
 * a program that never searches never loads an extension or logs about
 * one): SQLite ranks with `sqlite-vec` — an optional npm package whose
 * binary is loaded into the client's own connection — and PostgreSQL with
 * pgvector when `CREATE EXTENSION vector` works; otherwise both rank by
 * brute force, with one warning saying why.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { type SearchMode, type SearchPreference, VectorStoreError } from "../../contract/VectorStore.js"
import { errorDetail } from "../../internal/errorDetail.js"

/** A SQLite client that can load an extension into its connection (`@effect/sql-sqlite-node`'s does). */
interface ExtensionLoader {
  readonly loadExtension: (path: string) => Effect.Effect<void, SqlError>
}

// Checked by shape: importing `@effect/sql-sqlite-node` here would load
// better-sqlite3 for PostgreSQL users too.
const canLoadExtensions = (sql: SqlClient): sql is SqlClient & ExtensionLoader =>
  "loadExtension" in sql && typeof sql.loadExtension === "function"

/** Whether SQLite already has `sqlite-vec`'s functions (asked of the catalog: a failing statement would be cached). */
const hasSqliteVec = (sql: SqlClient) =>
  Effect.map(
    sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM pragma_function_list WHERE name = 'vec_distance_cosine'`,
    (rows) => Number(rows[0]?.n ?? 0) > 0
  )

const loadSqliteVec = (sql: SqlClient & ExtensionLoader) =>
  Effect.tryPromise({ try: () => import("sqlite-vec"), catch: (cause) => cause }).pipe(
    Effect.flatMap((module) => Effect.try({ try: () => module.getLoadablePath(), catch: (cause) => cause })),
    Effect.flatMap((path) => sql.loadExtension(path))
  )

const sqliteMode = (sql: SqlClient): Effect.Effect<SearchMode, unknown> =>
  Effect.gen(function*() {
    if (yield* hasSqliteVec(sql)) return "sqlite-vec" as const
    if (!canLoadExtensions(sql)) return yield* Effect.fail("the SQLite client cannot load extensions")
    yield* loadSqliteVec(sql)
    if (yield* hasSqliteVec(sql)) return "sqlite-vec" as const
    return yield* Effect.fail("sqlite-vec loaded without its functions")
  })

const pgMode = (sql: SqlClient): Effect.Effect<SearchMode, unknown> =>
  Effect.gen(function*() {
    const installed = yield* sql`SELECT 1 FROM pg_extension WHERE extname = 'vector'`
    if (installed.length === 0) yield* sql`CREATE EXTENSION IF NOT EXISTS vector`
    return "pgvector" as const
  })

/**
 * The mode a store over `sql` ranks in, for `preference`. `auto` falls back
 * to brute force with one warning; `extension` fails `unavailable` instead.
 */
export const resolveMode = (
  sql: SqlClient,
  preference: SearchPreference
): Effect.Effect<SearchMode, VectorStoreError> => {
  if (preference === "bruteForce") return Effect.succeed("brute-force")
  const extension: { readonly name: string; readonly attempt: Effect.Effect<SearchMode, unknown> } = sql
    .onDialectOrElse({
      sqlite: () => ({ name: "sqlite-vec", attempt: sqliteMode(sql) }),
      pg: () => ({ name: "pgvector", attempt: pgMode(sql) }),
      orElse: () => ({ name: "a vector extension", attempt: Effect.fail("this SQL dialect has none") })
    })
  return extension.attempt.pipe(
    Effect.catchAll((cause) =>
      preference === "extension"
        ? Effect.fail(
          new VectorStoreError({
            operation: "open",
            reason: "unavailable",
            detail: `${extension.name} cannot be used: ${errorDetail(cause)}`,
            cause
          })
        )
        : Effect.as(
          Effect.logWarning(
            `vector search ranks by brute force: ${extension.name} cannot be used (${errorDetail(cause)})`
          ),
          "brute-force" as const
        )
    )
  )
}
