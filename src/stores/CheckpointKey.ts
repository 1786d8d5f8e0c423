/**
 * The key that binds a HITL checkpoint to what the human approved (DESIGN
 * §7): the pipeline seals every checkpoint it saves — `planDigest`, the
 * SHA-256 of the plan's canonical JSON, and `mac`, an HMAC-SHA256 with this
 * key over everything else — and a resume verifies the seal before anything
 * runs. A checkpoint rewritten in the store, or sealed with another key, is
 * refused as `tampered`.
 *
 * The key is at least 32 bytes, held `Redacted` (it never prints, never
 * serializes into a record, a log or an error) and comes from:
 *
 * - {@link layerConfig}: `AGENT_CHECKPOINT_KEY`, hex (64 or more hex digits)
 *   or base64 (of 32 or more bytes). Every process that resumes another's
 *   checkpoints needs the same key: required with PostgreSQL.
 * - {@link layerFile}: a key file, created on first use with owner-only
 *   permissions (0600) — the embedded default keeps one beside the SQLite
 *   file (`./data/agent.db.checkpoint-key`).
 * - {@link layerRandom}: a fresh random key. Checkpoints sealed with it
 *   cannot be resumed by another process or after a restart (they are
 *   refused as `tampered`): fine for the in-memory checkpoint store.
 *
 * @since 0.1.0
 */
import { Config, ConfigError, Context, Effect, Either, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { Checkpoint, Unsealed } from "../domain/Checkpoint.js"
import type { RoutingPlan } from "../domain/RoutingPlan.js"
import * as checkpointSeal from "./internal/checkpointSeal.js"
import { readOrCreate } from "./internal/keyFile.js"
import * as keyText from "./internal/keyText.js"

/**
 * The shortest key accepted, in bytes: as long as HMAC-SHA256's output.
 *
 * @example
 * ```ts
 * import { CheckpointKey } from "effect-agent-pipeline"
 * import { randomBytes } from "node:crypto"
 *
 * const text = randomBytes(CheckpointKey.minimumKeyBytes).toString("hex") // what `openssl rand -hex 32` prints
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const minimumKeyBytes = keyText.minimumKeyBytes

/**
 * The configuration variable {@link layerConfig} reads by default.
 *
 * @example
 * ```ts
 * import { CheckpointKey } from "effect-agent-pipeline"
 *
 * const isSet = process.env[CheckpointKey.configName] !== undefined
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const configName = "AGENT_CHECKPOINT_KEY"

/**
 * The checkpoint key service: seals checkpoints and verifies seals. The key
 * itself stays inside (`Redacted`); `origin` says where it came from —
 * never what it is — for diagnostics.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointKey } from "effect-agent-pipeline"
 *
 * const whereFrom = Effect.map(CheckpointKey.CheckpointKey, (key) => key.origin)
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class CheckpointKey extends Context.Tag("effect-agent-pipeline/CheckpointKey")<
  CheckpointKey,
  CheckpointKey.Service
>() {}

/**
 * The types that go with the {@link CheckpointKey} tag.
 *
 * @since 0.1.0
 * @category services
 */
export declare namespace CheckpointKey {
  /**
   * What the service does with its key.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** Where the key came from (`AGENT_CHECKPOINT_KEY`, `file /…/agent.db.checkpoint-key`, `random`): never the key. */
    readonly origin: string
    /** The checkpoint with its `planDigest` and its `mac` computed with this key. */
    readonly seal: (fields: Unsealed) => Checkpoint
    /**
     * `Right(checkpoint)` when its `planDigest` is its plan's and its `mac`
     * was computed with this key over its content; otherwise `Left` with why
     * not (never the key, nor the expected MAC).
     */
    readonly verify: (checkpoint: Checkpoint) => Either.Either<Checkpoint, string>
  }
}

/**
 * The hex SHA-256 of the plan's canonical JSON text: the `planDigest` an
 * approver sees with the plan and echoes back on resume.
 *
 * @example
 * ```ts
 * import { CheckpointKey } from "effect-agent-pipeline"
 *
 * const digest = CheckpointKey.planDigest({ steps: [], terminal: true })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const planDigest: (plan: RoutingPlan) => string = checkpointSeal.planDigest

/**
 * Builds the service over a key of at least {@link minimumKeyBytes} bytes
 * (shorter fails with a `ConfigError`).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { CheckpointKey } from "effect-agent-pipeline"
 * import { randomBytes } from "node:crypto"
 *
 * // A key from elsewhere (a secrets manager); `origin` names where, for diagnostics.
 * const key = CheckpointKey.make(Redacted.make(new Uint8Array(randomBytes(32))), "vault")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  key: Redacted.Redacted<Uint8Array>,
  origin: string
): Effect.Effect<CheckpointKey.Service, ConfigError.ConfigError> =>
  Effect.suspend(() => {
    const length = Redacted.value(key).length
    if (length < minimumKeyBytes) {
      return Effect.fail(
        ConfigError.InvalidData(
          [],
          `the checkpoint key (${origin}) is ${length} bytes; at least ${minimumKeyBytes} are needed`
        )
      )
    }
    return Effect.succeed(unsafeMake(key, origin))
  })

const unsafeMake = (key: Redacted.Redacted<Uint8Array>, origin: string): CheckpointKey.Service =>
  CheckpointKey.of({
    origin,
    seal: (fields) => checkpointSeal.seal(key, fields),
    verify: (checkpoint) => checkpointSeal.verify(key, origin, checkpoint)
  })

const randomKey = (): Redacted.Redacted<Uint8Array> => Redacted.make(new Uint8Array(randomBytes(minimumKeyBytes)))

/**
 * A fresh random key for this process (not written anywhere).
 *
 * @example
 * ```ts
 * import { CheckpointKey } from "effect-agent-pipeline"
 *
 * const key = CheckpointKey.makeRandom()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRandom = (): CheckpointKey.Service => unsafeMake(randomKey(), "random (this process only)")

/**
 * A key's bytes from its text form: hex (a string of hex digits only, of
 * even length, is read as hex) or base64 (standard or URL-safe), surrounding
 * whitespace ignored; at least {@link minimumKeyBytes} bytes. The `Left`
 * says what is wrong without quoting the text.
 *
 * @example
 * ```ts
 * import { CheckpointKey } from "effect-agent-pipeline"
 *
 * CheckpointKey.decodeKeyText("00".repeat(32)) // Right(32 bytes)
 * CheckpointKey.decodeKeyText("too short") // Left(…)
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const decodeKeyText: (text: string) => Either.Either<Uint8Array, string> = keyText.decodeKeyText

/**
 * A checkpoint key read from configuration (a redacted string in hex or
 * base64, see {@link decodeKeyText}); a malformed or short key is a
 * `ConfigError` naming the variable, never showing the value.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointKey } from "effect-agent-pipeline"
 *
 * const key = Effect.flatMap(CheckpointKey.config(), (bytes) => CheckpointKey.make(bytes, "AGENT_CHECKPOINT_KEY"))
 * ```
 *
 * @since 0.1.0
 * @category config
 */
export const config = (name: string = configName): Config.Config<Redacted.Redacted<Uint8Array>> =>
  Config.redacted(name).pipe(
    Config.mapOrFail((text) =>
      Either.mapBoth(decodeKeyText(Redacted.value(text)), {
        onLeft: (why) => ConfigError.InvalidData([], why),
        onRight: (bytes) => Redacted.make(bytes)
      })
    )
  )

/**
 * The service over a key given in text form (hex or base64).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { Agent, CheckpointKey } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   checkpointKey: CheckpointKey.layer(Redacted.make(process.env.MY_KEY ?? ""))
 * })
 * ```
 *
 * @since 0.1.0 * @category layers
 */
export const layer = (key: Redacted.Redacted<string>): Layer.Layer<CheckpointKey, ConfigError.ConfigError> =>
  Layer.effect(
    CheckpointKey,
    Effect.flatMap(
      Either.match(decodeKeyText(Redacted.value(key)), {
        onLeft: (why) => Effect.fail(ConfigError.InvalidData([], why)),
        onRight: (bytes) => Effect.succeed(Redacted.make(bytes))
      }),
      (bytes) => make(bytes, "given")
    )
  )

/**
 * The service over the key in configuration variable `name` (default
 * `AGENT_CHECKPOINT_KEY`). Missing, malformed or shorter than 32 bytes: a
 * `ConfigError`.
 *
 * @example
 * ```ts
 * import { Agent, CheckpointKey } from "effect-agent-pipeline"
 *
 * // AGENT_CHECKPOINT_KEY=$(openssl rand -hex 32)
 * const AgentLive = Agent.layerOffline({ tools: [], checkpointKey: CheckpointKey.layerConfig() })
 * ```
 *
 * @since 0.1.0 * @category layers
 */
export const layerConfig = (name: string = configName): Layer.Layer<CheckpointKey, ConfigError.ConfigError> =>
  Layer.effect(CheckpointKey, Effect.flatMap(config(name), (bytes) => make(bytes, name)))

/**
 * The service over the key in a file: read it, or — when there is none —
 * create it (32 random bytes, hex, owner-only permissions 0600, its folder
 * created) and log that it did and where. Keep the file with the database:
 * without it, the checkpoints sealed with it cannot be resumed. A file that
 * others can read is used, with a warning. A file that cannot be read,
 * created or decoded is a `ConfigError` naming it.
 *
 * @example
 * ```ts
 * import { Agent, CheckpointKey } from "effect-agent-pipeline"
 * import * as Sqlite from "effect-agent-pipeline/sqlite"
 *
 * const StoresLive = Sqlite.layer({ filename: "./data/agent.db" })
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   executionStore: StoresLive,
 *   checkpointStore: StoresLive,
 *   checkpointKey: CheckpointKey.layerFile("./data/agent.db.checkpoint-key")
 * })
 * ```
 *
 * @since 0.1.0 * @category layers
 */
export const layerFile = (file: string): Layer.Layer<CheckpointKey, ConfigError.ConfigError> =>
  Layer.effect(
    CheckpointKey,
    Effect.gen(function*() {
      const found = yield* Effect.try({
        try: () => readOrCreate(file, () => randomBytes(minimumKeyBytes).toString("hex")),
        catch: (error) => ConfigError.InvalidData([], `checkpoint key file ${file}: ${checkpointSeal.messageOf(error)}`)
      })
      const origin = `file ${found.path}`
      if (found.created) {
        yield* Effect.logInfo(
          `created the checkpoint key file ${found.path} (owner-only, mode 0600): keep it with the database; checkpoints sealed with it cannot be resumed without it`
        )
      } else if (found.othersMode !== 0 && process.platform !== "win32") {
        yield* Effect.logWarning(
          `the checkpoint key file ${found.path} can be read by others (mode 0${
            (0o600 | found.othersMode).toString(8)
          }); make it owner-only: chmod 600 ${found.path}`
        )
      }
      const bytes = yield* Either.match(decodeKeyText(found.text), {
        onLeft: (why) => Effect.fail(ConfigError.InvalidData([], `checkpoint key file ${found.path}: ${why}`)),
        onRight: (decoded) => Effect.succeed(Redacted.make(decoded))
      })
      return yield* make(bytes, origin)
    })
  )

/**
 * The service over a fresh random key, made when the Layer is built (the
 * default of `Agent.layer`). Checkpoints sealed with it cannot be resumed by
 * another process, by an agent built from another Layer, or after a
 * restart: they are refused as `tampered`. Fine with the in-memory
 * checkpoint store, which shares those limits.
 *
 * @example
 * ```ts
 * import { Agent, CheckpointKey } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({ tools: [], checkpointKey: CheckpointKey.layerRandom })
 * ```
 *
 * @since 0.1.0 * @category layers
 */
export const layerRandom: Layer.Layer<CheckpointKey> = Layer.sync(CheckpointKey, makeRandom)
