/**
 * The embedded default backend: a SQLite file (WAL mode) through
 * `@effect/sql-sqlite-node`. Import it from `effect-agent-pipeline/sqlite`
 * (it needs `@effect/sql` and `@effect/sql-sqlite-node` installed).
 *
 * @since 0.1.0
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ActivityStore, ActivityStoreError } from "../ActivityStore.js"
import { type ExecutionStore, ExecutionStoreError } from "../ExecutionStore.js"
import * as SqlStores from "./SqlStores.js"
import * as SqlActivityStore from "./SqlActivityStore.js"
import { activityClient } from "./internal/activityClient.js"

export * as SqlStores from "./SqlStores.js"
export * as SqlActivityStore from "./SqlActivityStore.js"

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
}

/**
 * The SQLite client alone (WAL mode), creating the file's folder first.
 *
 * @since 0.1.0
 */
export const layerClient = (filename: string = defaultFilename) =>
  Layer.unwrapEffect(
    Effect.try({
      try: () => {
        if (filename !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true })
        return SqliteClient.layer({ filename })
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
  SqlStores.layerExecutionStore(options).pipe(Layer.provide(layerClient(options.filename)))

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
  SqlActivityStore.layerActivityStore(options).pipe(Layer.provide(activityClient(layerClient(options.filename))))
