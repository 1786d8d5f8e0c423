/**
 * The `WorkflowEngine` that durable requests run on (issue 24), for the two
 * deployments, over `@effect/cluster`'s SQL storage:
 *
 * - one process: a SQLite file, a single runner ({@link layerSqlite});
 * - N runners on PostgreSQL, one per process, sharing one database and
 *   talking to each other over TCP sockets ({@link layerPostgres} with a
 *   `runner` address), or one PostgreSQL runner (`runner: "single"`).
 *
 * The cluster's ready-made Layers (`SingleRunner.layer`,
 * `NodeClusterSocket.layer`) take no table prefix and read the sharding
 * settings from the environment, so the same compositions are built here
 * with `SqlMessageStorage.layerWith({ prefix })` /
 * `SqlRunnerStorage.layerWith({ prefix })` and an explicit `ShardingConfig`
 * (tuned failover, advisory locks off: see durableEngineConfig.ts). Before
 * the cluster's storage is built, the tables it creates racily are created
 * under a lock (durableStorage.ts).
 *
 * One process per SQLite file: the single runner has the cluster's fixed
 * default address, so two live processes on one file would both believe
 * they own every shard (a restarted process, on the other hand, takes its
 * shards back at once, which is what resumption after a crash needs).
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import type { MessageStorage } from "@effect/cluster/MessageStorage"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { SqlClient } from "@effect/sql/SqlClient"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { Duration, Effect, Either, Layer, type Redacted } from "effect"
import { errorDetail } from "../../stores/internal/errorDetail.js"
import * as Postgres from "../../stores/sql/Postgres.js"
import * as Sqlite from "../../stores/sql/Sqlite.js"
import {
  checkFailover,
  checkPrefix,
  checkRunner,
  defaultPrefix,
  DurableEngineError,
  type FailoverSettings,
  type RunnerAddressOptions,
  shardingConfigFor,
  singleProcessFailover,
  tunedFailover
} from "./durableEngineConfig.js"
import { prepareTables } from "./durableStorage.js"

/** What a durable engine Layer provides: the engine, and the cluster services under it. */
export type DurableEngineServices = WorkflowEngine | Sharding.Sharding | MessageStorage

/** Options shared by every deployment. */
export interface DurableEngineOptions {
  /** The cluster's table prefix (default `eap_cluster`): one per deployment sharing a database. */
  readonly prefix?: string | undefined
  /** Overrides of the tuned failover and polling settings. */
  readonly failover?: Partial<FailoverSettings> | undefined
}

/** The engine over a `SqlClient` the caller provides. */
export interface DurableEngineClientOptions extends DurableEngineOptions {
  /**
   * `"single"`: this process is the only runner (no socket; SQLite, or one
   * PostgreSQL process). An address: this process is one of several runners,
   * reached by the others at `host:port` (PostgreSQL only).
   */
  readonly runner: RunnerAddressOptions | "single"
}

/** One process over a SQLite file. */
export interface DurableSqliteOptions extends DurableEngineOptions {
  readonly filename: string
  /** How long a write waits for another connection's lock (default 5 s). */
  readonly busyTimeout?: Duration.DurationInput | undefined
}

/** One runner of a PostgreSQL deployment. */
export interface DurablePostgresOptions extends DurableEngineClientOptions {
  readonly url: Redacted.Redacted | string
  /** The pool size (default 10; the cluster keeps one of them for its lock statements). */
  readonly maxConnections?: number | undefined
}

const invalid = (detail: string) => new DurableEngineError({ reason: "invalid_config", detail })

const storageError = (what: string) => (cause: unknown) =>
  new DurableEngineError({ reason: "storage", detail: `${what}: ${errorDetail(cause)}`, cause })

/** The checked settings, or the first problem. */
const settingsOf = (options: DurableEngineClientOptions) =>
  Either.gen(function*() {
    const prefix = yield* checkPrefix(options.prefix ?? defaultPrefix)
    const failover = yield* checkFailover({ ...tunedFailover, ...options.failover })
    const runner = options.runner === "single" ? undefined : yield* checkRunner(options.runner)
    return { prefix, config: shardingConfigFor(failover, runner), sockets: runner !== undefined }
  }).pipe(Either.mapLeft(invalid))

/**
 * The engine over the `SqlClient` in context (SQLite or PostgreSQL): the
 * tables prepared, then the cluster's storage, sharding (single runner or
 * socket runner) and `ClusterWorkflowEngine`. Fails with a
 * `DurableEngineError` for bad options (`invalid_config`), a database that
 * cannot be prepared or migrated (`storage`), or a socket that cannot
 * listen (`listen`).
 */
export const layerWithClient = (
  options: DurableEngineClientOptions
): Layer.Layer<DurableEngineServices, DurableEngineError, SqlClient> =>
  Either.match(settingsOf(options), {
    onLeft: (error) => Layer.fail(error),
    onRight: ({ config, prefix, sockets }) => {
      const configLayer = ShardingConfig.layer(config)
      const prepared = Layer.effectDiscard(
        Effect.flatMap(SqlClient, (sql) =>
          sql.onDialectOrElse({
            // Untested, and each process would need its own address: not offered.
            sqlite: () => sockets ? Effect.fail(invalid("several runners need PostgreSQL, not SQLite")) : Effect.void,
            orElse: () => Effect.void
          }).pipe(
            Effect.zipRight(
              prepareTables(sql, prefix).pipe(Effect.mapError(storageError(`preparing the ${prefix}_* tables`)))
            )
          ))
      )
      // The Migrator's failures are defects inside SqlMessageStorage: described as storage errors.
      const messageStorage = SqlMessageStorage.layerWith({ prefix }).pipe(
        Layer.catchAllCause((cause) => Layer.fail(storageError(`migrating the ${prefix}_* tables`)(cause)))
      )
      const runnerStorage = SqlRunnerStorage.layerWith({ prefix }).pipe(
        Layer.mapError(storageError(`opening ${prefix}_runners`))
      )
      const sharding: Layer.Layer<
        Sharding.Sharding | MessageStorage,
        DurableEngineError,
        SqlClient | ShardingConfig.ShardingConfig
      > = sockets
        ? SocketRunner.layer.pipe(
          // Health: ping the runner over its socket (the cluster's own choice for NodeClusterSocket).
          Layer.provide(
            RunnerHealth.layerPing.pipe(
              Layer.provide(Runners.layerRpc),
              Layer.provide(NodeClusterSocket.layerClientProtocol)
            )
          ),
          Layer.provide([
            NodeClusterSocket.layerSocketServer.pipe(
              Layer.mapError((cause) =>
                new DurableEngineError({
                  reason: "listen",
                  detail: `runner ${
                    typeof options.runner === "string" ? "" : `${options.runner.host}:${options.runner.port}`
                  }: ${errorDetail(cause)}`,
                  cause
                })
              )
            ),
            NodeClusterSocket.layerClientProtocol
          ]),
          Layer.provideMerge(messageStorage),
          Layer.provide(runnerStorage),
          Layer.provide(RpcSerialization.layerMsgPack)
        )
        : Sharding.layer.pipe(
          Layer.provideMerge(Runners.layerNoop),
          Layer.provideMerge(messageStorage),
          Layer.provide([runnerStorage, RunnerHealth.layerNoop])
        )
      return ClusterWorkflowEngine.layer.pipe(
        Layer.provideMerge(sharding),
        Layer.provide(configLayer),
        // Sequential: the tables exist before the cluster's storage is built.
        Layer.provide(prepared)
      )
    }
  })

/** The engine over its own client; options are checked before the client opens (or creates) anything. */
const overOwnClient = <C>(
  options: DurableEngineClientOptions,
  client: Layer.Layer<C | SqlClient, DurableEngineError>
): Layer.Layer<DurableEngineServices | C | SqlClient, DurableEngineError> =>
  Either.match(settingsOf(options), {
    onLeft: (error) => Layer.fail(error),
    onRight: () => layerWithClient(options).pipe(Layer.provideMerge(client))
  })

/**
 * One process over a SQLite file: the project's SQLite client (WAL, busy
 * timeout, the file's folder created), a single runner, tables
 * `<prefix>_*` in that file (it may be the stores' own file). Provides the
 * client too (the retention job runs over it).
 */
export const layerSqlite = (
  options: DurableSqliteOptions
): Layer.Layer<DurableEngineServices | SqlClient, DurableEngineError> =>
  overOwnClient(
    { ...options, runner: "single", failover: { ...singleProcessFailover, ...options.failover } },
    Sqlite.layerClient(options.filename, options.busyTimeout ?? Duration.seconds(5)).pipe(
      Layer.mapError(storageError(`opening ${options.filename}`))
    )
  )

/**
 * One runner of a PostgreSQL deployment (`runner` its address, or
 * `"single"`). Every runner of a deployment uses the same `prefix`; several
 * deployments on one database use different prefixes. Provides the client
 * too (the retention job runs over it).
 */
export const layerPostgres = (
  options: DurablePostgresOptions
): Layer.Layer<DurableEngineServices | SqlClient, DurableEngineError> =>
  overOwnClient(
    options,
    Postgres.layerClient({ url: options.url, maxConnections: options.maxConnections }).pipe(
      Layer.mapError(storageError("connecting to PostgreSQL"))
    )
  )
