/**
 * The embedded default backend: a SQLite file (WAL mode) through
 * `@effect/sql-sqlite-node`. Import it from `effect-agent-pipeline/sqlite`
 * (it needs `@effect/sql` and `@effect/sql-sqlite-node` installed).
 *
 * @since 0.1.0
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ActivityStore, ActivityStoreError } from "../contract/ActivityStore.js"
import type { CheckpointStore } from "../contract/CheckpointStore.js"
import { type ExecutionStore, ExecutionStoreError } from "../contract/ExecutionStore.js"
import type { VectorStore, VectorStoreError } from "../contract/VectorStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import { activityClient } from "./internal/activityClient.js"
import * as WalCheckpointer from "./internal/walCheckpointer.js"
import * as SqlStores from "./SqlStores.js"

/**
 * The stores over any `SqlClient`, for a program that provides its own
 * client (this module's Layers are these over {@link layerClient}).
 *
 * @since 0.1.0
 * @category layers
 */
export * as SqlStores from "./SqlStores.js"

/**
 * The default database file.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultFilename = "./data/agent.db"

/**
 * Options: `filename` (default `./data/agent.db`, its folder is created;
 * `:memory:` for a private in-memory database), `busyTimeout`,
 * `synchronous` and the {@link SqlStores.SqlStoreOptions}.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions extends SqlStores.SqlStoreOptions {
  readonly filename?: string | undefined
  /**
   * How long a write waits for another connection's lock (another process
   * writing the same file) before it fails (default 5 seconds).
   */
  readonly busyTimeout?: Duration.DurationInput | undefined
  /**
   * When a commit reaches the disk: `NORMAL` (the default, WAL mode's usual
   * setting: a commit survives the process crashing, the last ones may not
   * survive a power loss) or `FULL` (every commit is synced; slower).
   */
  readonly synchronous?: "NORMAL" | "FULL" | undefined
}

/** Whether a SQLite failure is lock contention (`SQLITE_BUSY`, `SQLITE_BUSY_SNAPSHOT`, …). */
const isBusy = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  if (typeof cause !== "object" || cause === null || !("code" in cause)) return false
  return typeof cause.code === "string" && cause.code.startsWith("SQLITE_BUSY")
}

/**
 * The connection's settings, in the order that matters: the busy timeout
 * first, so every later statement waits for another process's lock rather
 * than failing; then WAL mode. Switching a fresh file to WAL can fail at
 * once with `SQLITE_BUSY` while another process switches it (SQLite skips
 * the busy handler where waiting could deadlock), so that one statement is
 * retried, for as long as the busy timeout allows.
 */
const configure = (
  sql: SqlClient,
  filename: string,
  busyMillis: number,
  synchronous: "NORMAL" | "FULL"
): Effect.Effect<void, SqlError> =>
  Effect.gen(function*() {
    yield* sql.unsafe(`PRAGMA busy_timeout = ${busyMillis}`)
    if (filename !== ":memory:") {
      yield* sql.unsafe("PRAGMA journal_mode = WAL").pipe(
        Effect.retry({
          while: isBusy,
          schedule: Schedule.spaced("10 millis").pipe(Schedule.jittered, Schedule.upTo(Duration.millis(busyMillis)))
        })
      )
    }
    yield* sql.unsafe(`PRAGMA synchronous = ${synchronous === "FULL" ? "FULL" : "NORMAL"}`)
    // Checkpoints run in a worker thread (`internal/walCheckpointer.ts`); this one only if it falls behind.
    if (filename !== ":memory:") yield* sql.unsafe(`PRAGMA wal_autocheckpoint = ${WalCheckpointer.fallbackPages}`)
  })

/**
 * The SQLite client alone (WAL mode, the busy timeout set on the connection
 * before anything else runs), creating the file's folder first. The WAL is
 * checkpointed by a worker thread, off the event loop
 * (`internal/walCheckpointer.ts`). A file that
 * cannot be opened fails the Layer with an `ExecutionStoreError`
 * (`operation: "open"`) whose detail carries SQLite's own message (for
 * example `SQLITE_CANTOPEN: unable to open database file`).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * // One client for the stores and the activity signals.
 * const client = Sqlite.layerClient("./data/agent.db")
 * const StoresLive = Layer.merge(Sqlite.SqlStores.layer(), Sqlite.SqlStores.layerActivityStore()).pipe(
 *   Layer.provide(client)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  filename: string = defaultFilename,
  busyTimeout: Duration.DurationInput = Duration.seconds(5),
  synchronous: "NORMAL" | "FULL" = "NORMAL"
): Layer.Layer<SqliteClient.SqliteClient | SqlClient, ExecutionStoreError> =>
  Layer.unwrapEffect(
    // A folder that cannot be made (or a file that cannot be opened) throws:
    // described below, with everything else that fails to open.
    Effect.sync(() => {
      if (filename !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true })
      const busyMillis = Math.max(0, Math.round(Duration.toMillis(busyTimeout)))
      // WAL is switched on in `configure`, after the busy timeout, not by the client as it opens.
      const client = SqliteClient.layer({ filename, disableWAL: true }).pipe(
        Layer.tap((context) => configure(Context.get(context, SqlClient), filename, busyMillis, synchronous))
      )
      if (filename === ":memory:") return client
      // Started once the file is open and in WAL mode; stopped before the client closes.
      const checkpoints = Layer.scopedDiscard(Effect.zipRight(SqlClient, WalCheckpointer.start(filename, synchronous)))
      return Layer.provideMerge(checkpoints, client)
    })
  ).pipe(
    Layer.catchAllCause((cause) =>
      Layer.fail(
        new ExecutionStoreError({
          operation: "open",
          detail: `${filename}: cannot open the database: ${errorDetail(cause)}`,
          cause
        })
      )
    )
  )

/**
 * The execution store in a SQLite file.
 *
 * @example
 * ```ts
 * import { Agent, OfflineModel } from "effect-agent-pipeline"
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * const AgentLive = Agent.layer({
 *   model: OfflineModel.layer,
 *   tools: [],
 *   executionStore: Sqlite.layerExecutionStore({ filename: "./data/agent.db" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerExecutionStore = (options: SqliteOptions = {}): Layer.Layer<ExecutionStore, ExecutionStoreError> =>
  SqlStores.layerExecutionStore(options).pipe(
    Layer.provide(layerClient(options.filename, options.busyTimeout, options.synchronous))
  )

/**
 * The checkpoint store in a SQLite file (HITL checkpoints a later process
 * can resume).
 *
 * @example
 * ```ts
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * const CheckpointsLive = Sqlite.layerCheckpointStore({ filename: "./data/agent.db" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCheckpointStore = (
  options: Pick<SqliteOptions, "filename" | "tablePrefix" | "busyTimeout" | "synchronous"> = {}
): Layer.Layer<CheckpointStore, ExecutionStoreError> =>
  SqlStores.layerCheckpointStore(options).pipe(
    Layer.provide(layerClient(options.filename, options.busyTimeout, options.synchronous))
  )

/**
 * The vector store in a SQLite file: cosine search with `sqlite-vec` (an
 * optional peer dependency, loaded into this client's connection on first
 * use), or brute force when it cannot load (one warning; `vectorSearch`
 * chooses).
 *
 * @example
 * ```ts
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * const VectorsLive = Sqlite.layerVectorStore({ filename: "./data/agent.db" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerVectorStore = (
  options: Pick<
    SqliteOptions,
    "filename" | "tablePrefix" | "busyTimeout" | "synchronous" | "sweepEvery" | "vectorSearch"
  > = {}
): Layer.Layer<VectorStore, VectorStoreError | ExecutionStoreError> =>
  SqlStores.layerVectorStore(options).pipe(
    Layer.provide(layerClient(options.filename, options.busyTimeout, options.synchronous))
  )

/**
 * The execution, checkpoint and vector stores in one SQLite file, over one
 * client.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * const StoresLive = Sqlite.layer({ filename: "./data/agent.db" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: SqliteOptions = {}
): Layer.Layer<ExecutionStore | CheckpointStore | VectorStore, ExecutionStoreError> =>
  SqlStores.layer(options).pipe(Layer.provide(layerClient(options.filename, options.busyTimeout, options.synchronous)))

/**
 * The activity store in a SQLite file: the signals of the agent processes on
 * one machine that share the file (`:memory:` keeps them in one process).
 *
 * @example
 * ```ts
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * const ActivityLive = Sqlite.layerActivityStore({ filename: "./data/agent.db" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerActivityStore = (
  options: SqliteOptions = {}
): Layer.Layer<ActivityStore, ActivityStoreError> =>
  SqlStores.layerActivityStore(options).pipe(
    Layer.provide(activityClient(layerClient(options.filename, options.busyTimeout, options.synchronous)))
  )
