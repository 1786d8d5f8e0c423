/**
 * Which stores an agent uses, from configuration (Effect `Config`, so
 * environment variables by default):
 *
 * | variable | values | default |
 * | --- | --- | --- |
 * | `AGENT_STORE` | `memory`, `sqlite`, `postgres` | `sqlite` |
 * | `SQLITE_PATH` | a file path, or `:memory:` | `./data/agent.db` |
 * | `DATABASE_URL` | `postgres://user:password@host:port/database` | required for `postgres` |
 * | `AGENT_CHECKPOINT_KEY` | the key that seals HITL checkpoints: ≥ 32 bytes, hex (64+ hex digits) or base64 | `sqlite`: a key file beside the database (`<SQLITE_PATH>.checkpoint-key`, created owner-only); `memory` or `SQLITE_PATH=:memory:`: random; required for `postgres` |
 * | `ACTIVITY_STORE` | `memory`, `sqlite`, `postgres`, `redis` | as `AGENT_STORE` |
 * | `REDIS_URL` | `redis://[:password@]host:port[/db]` | required for `redis` |
 *
 * The SQL and Redis backends are loaded only when chosen, so a program that
 * runs on `memory` needs none of their packages installed.
 *
 * @since 0.1.0
 */
import { Config, ConfigError, Effect, Layer, Option, type Redacted } from "effect"
import * as ActivityStore from "./ActivityStore.js"
import * as CheckpointKey from "./CheckpointKey.js"
import * as CheckpointStore from "./CheckpointStore.js"
import * as ExecutionStore from "./ExecutionStore.js"
import * as VectorStore from "./VectorStore.js"

/**
 * The configured store backend and where it lives.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreSettings {
  readonly backend: "memory" | "sqlite" | "postgres"
  readonly sqlitePath: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** `AGENT_CHECKPOINT_KEY`, as given (decoded and checked when the key's Layer is built). */
  readonly checkpointKey: Option.Option<Redacted.Redacted>
  /** Where activity signals live (default: the same backend as the records). */
  readonly activityBackend: "memory" | "sqlite" | "postgres" | "redis"
  readonly redisUrl: Option.Option<Redacted.Redacted>
}

/**
 * The store settings, read from `AGENT_STORE`, `SQLITE_PATH`, `DATABASE_URL`,
 * `AGENT_CHECKPOINT_KEY`, `ACTIVITY_STORE` and `REDIS_URL`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StoreConfig } from "effect-agent-pipeline"
 *
 * const describe = Effect.map(StoreConfig.settings, (s) => `records in ${s.backend}, signals in ${s.activityBackend}`)
 * ```
 *
 * @since 0.1.0
 * @category config
 */
export const settings: Config.Config<StoreSettings> = Config.all({
  backend: Config.literal("memory", "sqlite", "postgres")("AGENT_STORE").pipe(Config.withDefault("sqlite" as const)),
  sqlitePath: Config.string("SQLITE_PATH").pipe(Config.withDefault("./data/agent.db")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  checkpointKey: Config.option(Config.redacted(CheckpointKey.configName)),
  activity: Config.option(Config.literal("memory", "sqlite", "postgres", "redis")("ACTIVITY_STORE")),
  redisUrl: Config.option(Config.redacted("REDIS_URL"))
}).pipe(
  Config.map(({ activity, ...rest }) => ({ ...rest, activityBackend: Option.getOrElse(activity, () => rest.backend) }))
)

/**
 * The store Layers of an agent.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreLayers {
  readonly executionStore: Layer.Layer<ExecutionStore.ExecutionStore, ExecutionStore.ExecutionStoreError>
  readonly checkpointStore: Layer.Layer<CheckpointStore.CheckpointStore, ExecutionStore.ExecutionStoreError>
  /**
   * Memory and semantic-cache items, over the same client as the other
   * stores (the memory backend is bounded: see `VectorStore.layerMemory`).
   */
  readonly vectorStore: Layer.Layer<
    VectorStore.VectorStore,
    VectorStore.VectorStoreError | ExecutionStore.ExecutionStoreError
  >
  /** The key that seals the checkpoints kept in `checkpointStore` (see {@link checkpointKeyLayer}). */
  readonly checkpointKey: Layer.Layer<CheckpointKey.CheckpointKey, ConfigError.ConfigError>
}

const loadFailed = (module: string, packages: string, variable = "AGENT_STORE") => (error: unknown) =>
  ConfigError.InvalidData(
    [variable],
    `cannot load the ${module} backend (install ${packages}): ${String(error)}`
  )

/** The key in `AGENT_CHECKPOINT_KEY`, decoded; a malformed or short one is a `ConfigError` naming the variable. */
const givenKey = (key: Redacted.Redacted) =>
  CheckpointKey.layer(key).pipe(
    Layer.mapError((error) => ConfigError.prefixed(error, [CheckpointKey.configName]))
  )

/**
 * The checkpoint key for `settings`: `AGENT_CHECKPOINT_KEY` when set;
 * otherwise, on SQLite, the key file beside the database
 * (`<SQLITE_PATH>.checkpoint-key`, created owner-only on first use), a
 * random key on `memory` (or `SQLITE_PATH=:memory:`: nothing outlives the
 * process anyway). PostgreSQL is shared by several processes, which must
 * seal and verify with one key: there, a missing `AGENT_CHECKPOINT_KEY` is a
 * `ConfigError`.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { StoreConfig } from "effect-agent-pipeline"
 *
 * const KeyLive = Layer.unwrapEffect(Effect.flatMap(StoreConfig.settings, StoreConfig.checkpointKeyLayer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const checkpointKeyLayer = (
  settings: StoreSettings
): Effect.Effect<Layer.Layer<CheckpointKey.CheckpointKey, ConfigError.ConfigError>, ConfigError.ConfigError> => {
  if (Option.isSome(settings.checkpointKey)) return Effect.succeed(givenKey(settings.checkpointKey.value))
  switch (settings.backend) {
    case "memory":
      return Effect.succeed(CheckpointKey.layerRandom)
    case "sqlite":
      return Effect.succeed(
        settings.sqlitePath === ":memory:"
          ? CheckpointKey.layerRandom
          : CheckpointKey.layerFile(`${settings.sqlitePath}.checkpoint-key`)
      )
    case "postgres":
      return Effect.fail(
        ConfigError.MissingData(
          [CheckpointKey.configName],
          `AGENT_STORE=postgres needs ${CheckpointKey.configName}: every process sharing the database must seal and verify HITL checkpoints with the same key (at least ${CheckpointKey.minimumKeyBytes} bytes, hex or base64; make one with: openssl rand -hex 32)`
        )
      )
  }
}

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
 * @category layers
 */
export const layers = (settings: StoreSettings): Effect.Effect<StoreLayers, ConfigError.ConfigError> =>
  Effect.flatMap(
    storeLayers(settings),
    (stores) => Effect.map(checkpointKeyLayer(settings), (checkpointKey): StoreLayers => ({ ...stores, checkpointKey }))
  )

const storeLayers = (
  settings: StoreSettings
): Effect.Effect<Omit<StoreLayers, "checkpointKey">, ConfigError.ConfigError> => {
  switch (settings.backend) {
    case "memory":
      return Effect.succeed({
        executionStore: ExecutionStore.layerMemory(),
        checkpointStore: CheckpointStore.layerMemory,
        vectorStore: VectorStore.layerMemory()
      })
    case "sqlite":
      return Effect.tryPromise({
        try: () => import("./sql/Sqlite.js"),
        catch: loadFailed("sqlite", "@effect/sql and @effect/sql-sqlite-node")
      }).pipe(
        Effect.map((Sqlite) => {
          // One client for every store (a Layer is built once per reference).
          const client = Sqlite.layerClient(settings.sqlitePath)
          return {
            executionStore: Sqlite.SqlStores.layerExecutionStore().pipe(Layer.provide(client)),
            checkpointStore: Sqlite.SqlStores.layerCheckpointStore().pipe(Layer.provide(client)),
            vectorStore: Sqlite.SqlStores.layerVectorStore().pipe(Layer.provide(client))
          }
        })
      )
    case "postgres": {
      if (Option.isNone(settings.databaseUrl)) {
        return Effect.fail(ConfigError.MissingData(["DATABASE_URL"], "AGENT_STORE=postgres needs DATABASE_URL"))
      }
      const url = settings.databaseUrl.value
      return Effect.tryPromise({
        try: () => import("./sql/Postgres.js"),
        catch: loadFailed("postgres", "@effect/sql and @effect/sql-pg")
      }).pipe(
        Effect.map((Postgres) => {
          const client = Postgres.layerClient({ url })
          return {
            executionStore: Postgres.SqlStores.layerExecutionStore().pipe(Layer.provide(client)),
            checkpointStore: Postgres.SqlStores.layerCheckpointStore().pipe(Layer.provide(client)),
            vectorStore: Postgres.SqlStores.layerVectorStore().pipe(Layer.provide(client))
          }
        })
      )
    }
  }
}

const required = (value: Option.Option<Redacted.Redacted>, name: string, why: string) =>
  Option.match(value, {
    onNone: () => Effect.fail(ConfigError.MissingData([name], why)),
    onSome: Effect.succeed
  })

/**
 * The activity store for `settings` (`ACTIVITY_STORE`, `REDIS_URL`), for the
 * activity hooks (`Activity.make`).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { StoreConfig } from "effect-agent-pipeline"
 *
 * const ActivityLive = Layer.unwrapEffect(Effect.flatMap(StoreConfig.settings, StoreConfig.activityLayer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const activityLayer = (
  settings: StoreSettings
): Effect.Effect<
  Layer.Layer<ActivityStore.ActivityStore, ActivityStore.ActivityStoreError>,
  ConfigError.ConfigError
> => {
  switch (settings.activityBackend) {
    case "memory":
      return Effect.succeed(ActivityStore.layerMemory)
    case "sqlite":
      return Effect.tryPromise({
        try: () => import("./sql/Sqlite.js"),
        catch: loadFailed("sqlite", "@effect/sql and @effect/sql-sqlite-node", "ACTIVITY_STORE")
      }).pipe(Effect.map((Sqlite) => Sqlite.layerActivityStore({ filename: settings.sqlitePath })))
    case "postgres":
      return Effect.flatMap(
        required(settings.databaseUrl, "DATABASE_URL", "ACTIVITY_STORE=postgres needs DATABASE_URL"),
        (url) =>
          Effect.tryPromise({
            try: () => import("./sql/Postgres.js"),
            catch: loadFailed("postgres", "@effect/sql and @effect/sql-pg", "ACTIVITY_STORE")
          }).pipe(Effect.map((Postgres) => Postgres.layerActivityStore({ url })))
      )
    case "redis":
      return Effect.flatMap(
        required(settings.redisUrl, "REDIS_URL", "ACTIVITY_STORE=redis needs REDIS_URL"),
        (url) =>
          Effect.tryPromise({
            try: () => import("./redis/ActivityStoreRedis.js"),
            catch: loadFailed("redis", "ioredis", "ACTIVITY_STORE")
          }).pipe(Effect.map((Redis) => Redis.layer({ url })))
      )
  }
}

/**
 * The configured activity store, as a Layer (reads the configuration when built).
 *
 * @example
 * ```ts
 * import { StoreConfig } from "effect-agent-pipeline"
 *
 * // ACTIVITY_STORE=redis REDIS_URL=redis://127.0.0.1:6379
 * const ActivityLive = StoreConfig.layerActivityStore
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerActivityStore: Layer.Layer<
  ActivityStore.ActivityStore,
  ConfigError.ConfigError | ActivityStore.ActivityStoreError
> = Layer.unwrapEffect(Effect.flatMap(settings, activityLayer))
