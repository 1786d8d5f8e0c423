/**
 * The shared backend for several agent processes: PostgreSQL through
 * `@effect/sql-pg`. Import it from `effect-agent-pipeline/postgres` (it needs
 * `@effect/sql` and `@effect/sql-pg` installed).
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Layer, Redacted } from "effect"
import type { ActivityStore, ActivityStoreError } from "../contract/ActivityStore.js"
import type { CheckpointStore } from "../contract/CheckpointStore.js"
import { type ExecutionStore, ExecutionStoreError } from "../contract/ExecutionStore.js"
import type { VectorStore, VectorStoreError } from "../contract/VectorStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import { activityClient } from "./internal/activityClient.js"
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
 * Options: `url` (`postgres://user:password@host:port/database`, kept
 * redacted), the size of the connection pool (`maxConnections`, default
 * 10) and the {@link SqlStores.SqlStoreOptions}.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostgresOptions extends SqlStores.SqlStoreOptions {
  readonly url: Redacted.Redacted | string
  readonly maxConnections?: number | undefined
}

/**
 * The PostgreSQL client alone (a pool of `maxConnections`). A server that
 * cannot be reached fails the Layer with an `ExecutionStoreError`
 * (`operation: "open"`) whose detail carries the driver's own message.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const StoresLive = Postgres.SqlStores.layer({ tablePrefix: "agent_" }).pipe(
 *   Layer.provide(Postgres.layerClient({ url: "postgres://agent:secret@127.0.0.1:5432/agent" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options: Pick<PostgresOptions, "url" | "maxConnections">
): Layer.Layer<PgClient.PgClient | SqlClient, ExecutionStoreError> =>
  PgClient.layer({
    url: typeof options.url === "string" ? Redacted.make(options.url) : options.url,
    maxConnections: options.maxConnections ?? 10
  }).pipe(
    Layer.catchAllCause((cause) =>
      Layer.fail(
        new ExecutionStoreError({
          operation: "open",
          detail: `cannot connect to PostgreSQL: ${errorDetail(cause)}`,
          cause
        })
      )
    )
  )

/**
 * The execution store in PostgreSQL.
 *
 * @example
 * ```ts
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const StoreLive = Postgres.layerExecutionStore({ url: "postgres://agent:secret@127.0.0.1:5432/agent" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerExecutionStore = (options: PostgresOptions): Layer.Layer<ExecutionStore, ExecutionStoreError> =>
  SqlStores.layerExecutionStore(options).pipe(Layer.provide(layerClient(options)))

/**
 * The checkpoint store in PostgreSQL: a request suspended in one process can
 * be resumed by another.
 *
 * @example
 * ```ts
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const CheckpointsLive = Postgres.layerCheckpointStore({ url: "postgres://agent:secret@127.0.0.1:5432/agent" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCheckpointStore = (
  options: Pick<PostgresOptions, "url" | "maxConnections" | "tablePrefix">
): Layer.Layer<CheckpointStore, ExecutionStoreError> =>
  SqlStores.layerCheckpointStore(options).pipe(Layer.provide(layerClient(options)))

/**
 * The vector store in PostgreSQL: cosine search with pgvector when
 * `CREATE EXTENSION vector` works (decided on first use), brute force in
 * SQL otherwise (one warning; `vectorSearch` chooses).
 *
 * @example
 * ```ts
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const VectorsLive = Postgres.layerVectorStore({ url: "postgres://agent:secret@127.0.0.1:5432/agent" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerVectorStore = (
  options: Pick<PostgresOptions, "url" | "maxConnections" | "tablePrefix" | "sweepEvery" | "vectorSearch">
): Layer.Layer<VectorStore, VectorStoreError | ExecutionStoreError> =>
  SqlStores.layerVectorStore(options).pipe(Layer.provide(layerClient(options)))

/**
 * The execution, checkpoint and vector stores in PostgreSQL, over one
 * connection pool.
 *
 * @example
 * ```ts
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const StoresLive = Postgres.layer({ url: "postgres://agent:secret@127.0.0.1:5432/agent" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: PostgresOptions
): Layer.Layer<ExecutionStore | CheckpointStore | VectorStore, ExecutionStoreError> =>
  SqlStores.layer(options).pipe(Layer.provide(layerClient(options)))

/**
 * The activity store in PostgreSQL: the signals of every agent process that
 * shares the database.
 *
 * @example
 * ```ts
 * import * as Postgres from "effect-agent-pipeline/postgres"
 *
 * const ActivityLive = Postgres.layerActivityStore({ url: "postgres://agent:secret@127.0.0.1:5432/agent" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerActivityStore = (options: PostgresOptions): Layer.Layer<ActivityStore, ActivityStoreError> =>
  SqlStores.layerActivityStore(options).pipe(Layer.provide(activityClient(layerClient(options))))
