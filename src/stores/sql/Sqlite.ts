/**
 * The embedded default backend: a SQLite file (WAL mode) through
 * `@effect/sql-sqlite-node`. Import it from `effect-agent-pipeline/sqlite`
 * (it needs `@effect/sql` and `@effect/sql-sqlite-node` installed).
 *
 * @since 0.1.0
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ActivityStore, ActivityStoreError } from "../ActivityStore.js"
import type { CheckpointStore } from "../CheckpointStore.js"
import { type ExecutionStore, ExecutionStoreError } from "../ExecutionStore.js"
import { activityClient } from "./internal/activityClient.js"
import * as SqlActivityStore from "./SqlActivityStore.js"
import * as SqlStores from "./SqlStores.js"

export * as SqlActivityStore from "./SqlActivityStore.js"
export * as SqlStores from "./SqlStores.js"

/** The default database file. */
export const defaultFilename = "./data/agent.db"

/**
 * Options: `filename` (default `./data/agent.db`, its folder is created;
 * `:memory:` for a private in-memory database) and the {@link SqlStores.SqlStoreOptions}.
 *
 * @since 0.1.0
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

/**
 * The SQLite client alone (WAL mode), creating the file's folder first.
 *
 * @since 0.1.0
 */
export const layerClient = (
  filename: string = defaultFilename,
  busyTimeout: Duration.DurationInput = Duration.seconds(5),
  synchronous: "NORMAL" | "FULL" = "NORMAL"
) =>
  Layer.unwrapEffect(
    Effect.try({
      try: () => {
        if (filename !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true })
        return SqliteClient.layer({ filename }).pipe(
          Layer.tap((context) => {
            const sql = Context.get(context, SqlClient)
            return Effect.zipRight(
              sql.unsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.round(Duration.toMillis(busyTimeout)))}`),
              sql.unsafe(`PRAGMA synchronous = ${synchronous === "FULL" ? "FULL" : "NORMAL"}`)
            )
          })
        )
      },
      catch: (error) => new ExecutionStoreError({ operation: "open", detail: `${filename}: ${String(error)}` })
    })
  ).pipe(
    Layer.catchAllCause((cause) =>
      Layer.fail(new ExecutionStoreError({ operation: "open", detail: `${filename}: cannot open the database`, cause }))
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
 */
export const layerExecutionStore = (options: SqliteOptions = {}): Layer.Layer<ExecutionStore, ExecutionStoreError> =>
  SqlStores.layerExecutionStore(options).pipe(Layer.provide(layerClient(options.filename, options.busyTimeout, options.synchronous)))

/**
 * The checkpoint store in a SQLite file (HITL checkpoints a later process
 * can resume).
 *
 * @since 0.1.0
 */
export const layerCheckpointStore = (
  options: Pick<SqliteOptions, "filename" | "tablePrefix" | "busyTimeout" | "synchronous"> = {}
): Layer.Layer<CheckpointStore, ExecutionStoreError> =>
  SqlStores.layerCheckpointStore(options).pipe(Layer.provide(layerClient(options.filename, options.busyTimeout, options.synchronous)))

/**
 * Both stores in one SQLite file, over one client.
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
 */
export const layer = (options: SqliteOptions = {}): Layer.Layer<ExecutionStore | CheckpointStore, ExecutionStoreError> =>
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
 */
export const layerActivityStore = (
  options: SqliteOptions = {}
): Layer.Layer<ActivityStore, ActivityStoreError> =>
  SqlActivityStore.layerActivityStore(options).pipe(
    Layer.provide(activityClient(layerClient(options.filename, options.busyTimeout, options.synchronous)))
  )
