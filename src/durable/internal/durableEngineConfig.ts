/**
 * Settings of the durable engine (issue 24): the table prefix, the runner
 * address, and the cluster's `ShardingConfig` tuned for the two deployments.
 *
 * The cluster's defaults are built for a fleet behind Kubernetes: a dead
 * runner's shards move after its lock expired (35 s) and a message stored
 * for a shard nobody has acquired yet waits for the storage poll (10 s). A
 * killed runner on this machine was taken over after 32.9–34.5 s with them.
 * The tuned settings below bring it to about 9 s from the `kill -9` to the
 * survivor re-starting the activity (two runners on PostgreSQL, the
 * scenario in test/durable/DurableCrash.test.ts):
 *
 * - `shardLockRefreshInterval` 1 s, `shardLockExpiration` 8 s: a live runner
 *   rewrites its heartbeat and lock rows every second (the cluster uses
 *   min(refresh, expiration / 3)); a dead runner's rows are stale after 8 s,
 *   its runner row drops out of `getRunners` (heartbeat older than the
 *   expiration) and its lock rows may be taken over. A runner whose
 *   refreshes fail for longer than that (a loaded machine: each refresh
 *   times out after 1 s; a long GC pause; a database that does not answer)
 *   loses its shards while it still runs their requests, and the runner
 *   taking them over runs those requests' in-flight regions again. 3 s took
 *   over faster (2.9–3.9 s) but lost locks that way under the crash tests'
 *   load — regions ran twice on two live runners — so expiration is 8 s.
 * - `refreshAssignmentsInterval` 1 s: survivors re-read the runners table
 *   (and recompute the shard ring) every second instead of every 3 s.
 * - `runnerHealthCheckInterval` 1 s: the health-check singleton pings the
 *   other runners every second instead of every minute (a refused
 *   connection fails after the cluster's own 5 × 500 ms retries).
 * - `entityMessagePollInterval` 1 s: a message stored while its shard was
 *   not acquired yet (the first execute after start), or a dead runner's
 *   unprocessed messages, are read within a second, not ten; it is also the
 *   pace of the shard-acquisition loop.
 * - SQLite (one process) keeps the cluster's lock and health defaults
 *   ({@link singleProcessFailover}): nobody else could take over.
 * - `shardLockDisableAdvisory` true, always: PostgreSQL advisory-lock
 *   numbers do not depend on the table prefix, so two deployments on one
 *   database would steal each other's shards; the `<prefix>_locks` table
 *   keeps them apart.
 */
import { RunnerAddress } from "@effect/cluster/RunnerAddress"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import { Duration, Either, Option, Schema } from "effect"
import { id } from "../../domain/ErrorId.js"

/** The default table prefix. Never `eap`: `eap_migrations` is the stores' own migration table. */
export const defaultPrefix = "eap_cluster"

/**
 * The durable engine could not be configured or started.
 *
 * - `invalid_config`: an option is out of range (detail says which);
 * - `storage`: the database could not be opened or prepared;
 * - `listen`: the runner's socket server could not listen on its address.
 */
export class DurableEngineError extends Schema.TaggedError<DurableEngineError>(id("DurableEngineError"))(
  "DurableEngineError",
  {
    reason: Schema.Literal("invalid_config", "storage", "listen"),
    detail: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {
  override get message(): string {
    return `durable engine (${this.reason}): ${this.detail}`
  }
}

/** Where a runner is reached by the others (`host`, `port`) and where it listens (defaults to the same). */
export interface RunnerAddressOptions {
  readonly host: string
  readonly port: number
  readonly listenHost?: string | undefined
  readonly listenPort?: number | undefined
}

/** The failover and polling settings (see the module comment for why each value). */
export interface FailoverSettings {
  readonly shardLockRefreshInterval: Duration.DurationInput
  readonly shardLockExpiration: Duration.DurationInput
  readonly refreshAssignmentsInterval: Duration.DurationInput
  readonly runnerHealthCheckInterval: Duration.DurationInput
  readonly entityMessagePollInterval: Duration.DurationInput
}

/** The tuned values. */
export const tunedFailover: FailoverSettings = {
  shardLockRefreshInterval: Duration.seconds(1),
  shardLockExpiration: Duration.seconds(8),
  refreshAssignmentsInterval: Duration.seconds(1),
  runnerHealthCheckInterval: Duration.seconds(1),
  entityMessagePollInterval: Duration.seconds(1)
}

/**
 * One process over a SQLite file: no other runner can take over, and the
 * restarted process (same fixed address) takes its shards back at once
 * whatever the lock age — so the cluster's lock and health defaults stay
 * (a refresh every second would rewrite 300 lock rows of the file every
 * second); only the storage poll is shortened.
 */
export const singleProcessFailover: FailoverSettings = {
  shardLockRefreshInterval: ShardingConfig.defaults.shardLockRefreshInterval,
  shardLockExpiration: ShardingConfig.defaults.shardLockExpiration,
  refreshAssignmentsInterval: ShardingConfig.defaults.refreshAssignmentsInterval,
  runnerHealthCheckInterval: ShardingConfig.defaults.runnerHealthCheckInterval,
  entityMessagePollInterval: tunedFailover.entityMessagePollInterval
}

const prefixPattern = /^[a-z_][a-z0-9_]{0,47}$/

/**
 * A table prefix, checked: it ends up in table names and in string literals
 * of the cluster's SQL, so only lower-case letters, digits and `_`.
 */
export const checkPrefix = (prefix: string): Either.Either<string, string> => {
  if (!prefixPattern.test(prefix)) {
    return Either.left(`prefix "${prefix}" must match ${prefixPattern.source}`)
  }
  if (prefix === "eap") {
    return Either.left(`prefix "eap" is taken: eap_migrations is the stores' own migration table`)
  }
  return Either.right(prefix)
}

const positive = (name: string, value: Duration.DurationInput): string | undefined => {
  const decoded = Duration.decodeUnknown(value)
  if (Option.isNone(decoded) || !Duration.isFinite(decoded.value) || Duration.toMillis(decoded.value) <= 0) {
    return `${name} must be a positive finite duration`
  }
  return undefined
}

/** Checks the failover settings: positive durations, and an expiration of at least twice the refresh. */
export const checkFailover = (settings: FailoverSettings): Either.Either<FailoverSettings, string> => {
  const problems = [
    positive("shardLockRefreshInterval", settings.shardLockRefreshInterval),
    positive("shardLockExpiration", settings.shardLockExpiration),
    positive("refreshAssignmentsInterval", settings.refreshAssignmentsInterval),
    positive("runnerHealthCheckInterval", settings.runnerHealthCheckInterval),
    positive("entityMessagePollInterval", settings.entityMessagePollInterval)
  ].filter((p): p is string => p !== undefined)
  if (problems.length > 0) return Either.left(problems.join("; "))
  // The cluster compares lock ages in whole seconds (it rounds the expiration up).
  if (Duration.toMillis(settings.shardLockExpiration) < 2_000) {
    return Either.left("shardLockExpiration must be at least 2 seconds")
  }
  return Either.right(settings)
}

/** Checks a runner address. */
export const checkRunner = (runner: RunnerAddressOptions): Either.Either<RunnerAddressOptions, string> => {
  const ports = [runner.port, runner.listenPort ?? runner.port]
  if (!ports.every((p) => Number.isInteger(p) && p > 0 && p < 65536)) {
    return Either.left(`runner port must be an integer in 1..65535`)
  }
  if (runner.host.trim() === "") return Either.left("runner host must not be empty")
  return Either.right(runner)
}

/**
 * The cluster's settings for one runner: the cluster's defaults, the tuned
 * failover values, the runner address (`undefined`: the single-runner
 * default address, a runner no other process talks to) and advisory locks
 * always off.
 */
export const shardingConfigFor = (
  failover: FailoverSettings,
  runner: RunnerAddressOptions | undefined
): ShardingConfig.ShardingConfig["Type"] => ({
  ...ShardingConfig.defaults,
  ...failover,
  ...(runner === undefined ? {} : {
    runnerAddress: Option.some(RunnerAddress.make({ host: runner.host, port: runner.port })),
    runnerListenAddress: runner.listenHost === undefined && runner.listenPort === undefined
      ? Option.none()
      : Option.some(
        RunnerAddress.make({ host: runner.listenHost ?? runner.host, port: runner.listenPort ?? runner.port })
      )
  }),
  shardLockDisableAdvisory: true
})
