/**
 * Which stores an agent uses, from configuration (Effect `Config`, so
 * environment variables by default):
 *
 * | variable | values | default |
 * | --- | --- | --- |
 * | `AGENT_STORE` | `memory`, `sqlite`, `postgres` | `sqlite` |
 * | `SQLITE_PATH` | a file path, or `:memory:` | `./data/agent.db` |
 * | `DATABASE_URL` | `postgres://user:password@host:port/database` | required for `postgres` |
 *
 * The SQL backends are loaded only when chosen, so a program that runs on
 * `memory` needs none of the SQL packages installed.
 *
 * @since 0.1.0
 */
import { Config, ConfigError, Effect, Layer, Option, type Redacted } from "effect"
import * as CheckpointStore from "../stores/CheckpointStore.js"
import * as ExecutionStore from "../stores/ExecutionStore.js"

/**
 * The configured store backend and where it lives.
 *
 * @since 0.1.0
 */
export interface StoreSettings {
  readonly backend: "memory" | "sqlite" | "postgres"
  readonly sqlitePath: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
}

/**
 * The store settings, read from `AGENT_STORE`, `SQLITE_PATH` and `DATABASE_URL`.
 *
 * @since 0.1.0
 */
export const settings: Config.Config<StoreSettings> = Config.all({
  backend: Config.literal("memory", "sqlite", "postgres")("AGENT_STORE").pipe(Config.withDefault("sqlite" as const)),
  sqlitePath: Config.string("SQLITE_PATH").pipe(Config.withDefault("./data/agent.db")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL"))
})

/**
 * The store Layers of an agent.
 *
 * @since 0.1.0
 */
export interface StoreLayers {
  readonly executionStore: Layer.Layer<ExecutionStore.ExecutionStore, ExecutionStore.ExecutionStoreError>
  readonly checkpointStore: Layer.Layer<CheckpointStore.CheckpointStore, ExecutionStore.ExecutionStoreError>
}

const loadFailed = (module: string, packages: string) => (error: unknown) =>
  ConfigError.InvalidData(
    ["AGENT_STORE"],
    `cannot load the ${module} backend (install ${packages}): ${String(error)}`
  )

/**
 * The store Layers for `settings`. Each Layer is made once here, so an agent
 * built from them opens one database client.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StoreConfig } from "effect-agent-pipeline"
 *
 * const stores = Effect.flatMap(StoreConfig.settings, StoreConfig.layers)
 * ```
 *
 * @since 0.1.0
 */
export const layers = (settings: StoreSettings): Effect.Effect<StoreLayers, ConfigError.ConfigError> => {
  switch (settings.backend) {
    case "memory":
      return Effect.succeed({
        executionStore: ExecutionStore.layerMemory(),
        checkpointStore: CheckpointStore.layerMemory
      })
    case "sqlite":
      return Effect.tryPromise({
        try: () => import("../stores/sql/Sqlite.js"),
        catch: loadFailed("sqlite", "@effect/sql and @effect/sql-sqlite-node")
      }).pipe(
        Effect.map((Sqlite) => {
          // One client for both stores (a Layer is built once per reference).
          const client = Sqlite.layerClient(settings.sqlitePath)
          return {
            executionStore: Sqlite.SqlStores.layerExecutionStore().pipe(Layer.provide(client)),
            checkpointStore: Sqlite.SqlStores.layerCheckpointStore().pipe(Layer.provide(client))
          }
        })
      )
    case "postgres": {
      if (Option.isNone(settings.databaseUrl)) {
        return Effect.fail(ConfigError.MissingData(["DATABASE_URL"], "AGENT_STORE=postgres needs DATABASE_URL"))
      }
      const url = settings.databaseUrl.value
      return Effect.tryPromise({
        try: () => import("../stores/sql/Postgres.js"),
        catch: loadFailed("postgres", "@effect/sql and @effect/sql-pg")
      }).pipe(
        Effect.map((Postgres) => {
          const client = Postgres.layerClient({ url })
          return {
            executionStore: Postgres.SqlStores.layerExecutionStore().pipe(Layer.provide(client)),
            checkpointStore: Postgres.SqlStores.layerCheckpointStore().pipe(Layer.provide(client))
          }
        })
      )
    }
  }
}
