/**
 * The stores of an agent's database opened for reading only, for the
 * viewer command: nothing is migrated, swept or written. SQLite is opened
 * read-only (`SQLITE_OPEN_READONLY`: the driver refuses every write);
 * PostgreSQL sessions start with `default_transaction_read_only = on` (the
 * server refuses every write). The tables must exist already — a database
 * that was never written by an agent is a clear error, not an empty one
 * created on the spot.
 *
 * @since 0.1.0
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlClient as SqlClientTag } from "@effect/sql/SqlClient"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import { CheckpointStore } from "../../stores/CheckpointStore.js"
import { ExecutionStore, ExecutionStoreError } from "../../stores/ExecutionStore.js"
import * as CheckpointStoreSql from "../../stores/sql/CheckpointStoreSql.js"
import * as ExecutionStoreSql from "../../stores/sql/ExecutionStoreSql.js"
import { tablesFor } from "../../stores/sql/migrations.js"
import type { StoreSettings } from "../../stores/StoreConfig.js"

/**
 * Where the records are: a SQLite file or a PostgreSQL database.
 *
 * @since 0.1.0
 * @category models
 */
export type StoreLocation =
  | { readonly _tag: "sqlite"; readonly path: string }
  | { readonly _tag: "postgres"; readonly url: Redacted.Redacted }

/**
 * The location a `--store` value names: a `postgres://` (or `postgresql://`)
 * URL, otherwise a SQLite file path (`sqlite:` prefix optional).
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (text: string): StoreLocation =>
  /^postgres(?:ql)?:\/\//i.test(text)
    ? { _tag: "postgres", url: Redacted.make(text) }
    : { _tag: "sqlite", path: text.replace(/^sqlite:/i, "") }

/**
 * The location the store configuration names (`AGENT_STORE`, `SQLITE_PATH`,
 * `DATABASE_URL`: `StoreConfig.settings`). The `memory` store keeps nothing
 * another process can read, so it names no location.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSettings = (settings: StoreSettings): Effect.Effect<StoreLocation, ExecutionStoreError> => {
  switch (settings.backend) {
    case "sqlite":
      return Effect.succeed({ _tag: "sqlite", path: settings.sqlitePath })
    case "postgres":
      return Option.match(settings.databaseUrl, {
        onNone: () => Effect.fail(openFailed("AGENT_STORE=postgres needs DATABASE_URL")),
        onSome: (url) => Effect.succeed({ _tag: "postgres" as const, url })
      })
    case "memory":
      return Effect.fail(
        openFailed(
          "AGENT_STORE=memory keeps records inside the agent's own process: the viewer reads a sqlite or postgres store (--store <file | postgres://…>)"
        )
      )
  }
}

/**
 * A description of the location without secrets (a URL's password is left out).
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (location: StoreLocation): string => {
  if (location._tag === "sqlite") return `SQLite file ${location.path}`
  try {
    const url = new URL(Redacted.value(location.url))
    return `PostgreSQL ${url.hostname}${url.port === "" ? "" : `:${url.port}`}${url.pathname}`
  } catch {
    return "PostgreSQL"
  }
}

const openFailed = (detail: string, cause?: unknown) =>
  new ExecutionStoreError({ operation: "open", detail, ...(cause === undefined ? {} : { cause }) })

/** The URL with `default_transaction_read_only = on` added to the session's startup options. */
const readOnlyUrl = (url: Redacted.Redacted): Redacted.Redacted => {
  const parsed = new URL(Redacted.value(url))
  const existing = parsed.searchParams.get("options")
  const readOnly = "-c default_transaction_read_only=on"
  parsed.searchParams.set("options", existing === null ? readOnly : `${existing} ${readOnly}`)
  return Redacted.make(parsed.href)
}

/** The read-only client of a location. */
const client = (location: StoreLocation): Layer.Layer<SqlClient, ExecutionStoreError> => {
  if (location._tag === "sqlite") {
    if (!fs.existsSync(location.path)) {
      return Layer.fail(
        openFailed(
          `${location.path} does not exist: nothing was recorded there yet (run an agent first, e.g. npm start)`
        )
      )
    }
    return Layer.unwrapEffect(
      Effect.tryPromise({
        try: () => import("@effect/sql-sqlite-node"),
        catch: (error) => openFailed(`cannot load @effect/sql-sqlite-node: ${String(error)}`, error)
      }).pipe(
        Effect.map(({ SqliteClient }) =>
          // No WAL switch (a write): a database an agent wrote is in WAL mode already.
          SqliteClient.layer({ filename: location.path, readonly: true, disableWAL: true })
        )
      )
    ).pipe(Layer.mapError((error) => openFailed(`${location.path}: cannot open the database: ${String(error)}`, error)))
  }
  return Layer.unwrapEffect(
    Effect.tryPromise({
      try: () => import("../../stores/sql/Postgres.js"),
      catch: (error) => openFailed(`cannot load @effect/sql-pg: ${String(error)}`, error)
    }).pipe(Effect.map((Postgres) => Postgres.layerClient({ url: readOnlyUrl(location.url), maxConnections: 4 })))
  )
}

/**
 * Both stores over the tables an agent made (prefix `tablePrefix`, default
 * `eap_`), read-only. A database without them (never written by an agent,
 * or by a version whose tables differ) fails with an `ExecutionStoreError`
 * (`operation: "open"`) saying so.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  location: StoreLocation,
  tablePrefix?: string
): Layer.Layer<ExecutionStore | CheckpointStore, ExecutionStoreError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const tables = yield* Effect.try({
        try: () => tablesFor(tablePrefix),
        catch: (error) => openFailed(String(error))
      })
      const sql = yield* SqlClientTag
      // The columns the stores read, asked for without reading a row.
      yield* sql.unsafe(
        `SELECT seq, request_id, revision, status, started_at, expires_at, lease_expires_at, hook_names, schema_version, body FROM ${tables.records} WHERE 1 = 0`
      ).pipe(
        Effect.zipRight(
          sql.unsafe(`SELECT checkpoint_id, request_id, body, created_at FROM ${tables.checkpoints} WHERE 1 = 0`)
        ),
        Effect.mapError((error) =>
          openFailed(
            `${describe(location)} holds no agent records (tables ${tables.records}, ${tables.checkpoints}): ${
              String(error.cause ?? error.message)
            }`,
            error
          )
        )
      )
      const records = yield* ExecutionStoreSql.make(tables)
      const checkpoints = yield* CheckpointStoreSql.make(tables)
      return Context.make(ExecutionStore, records).pipe(Context.add(CheckpointStore, checkpoints))
    })
  ).pipe(Layer.provide(client(location)))
