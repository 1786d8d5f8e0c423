/**
 * The server's settings from configuration (`AgentServer.layerConfig`).
 * The Redis rate-limit store is loaded only when `AGENT_RATE_LIMIT_REDIS_URL`
 * is set, so a server that never uses Redis never loads `ioredis`.
 */
import type { RateLimiterStore } from "@effect/experimental/RateLimiter"
import { Config, type ConfigError, Duration, Effect, type Layer, Option, Redacted } from "effect"

/** The options `layerConfig` reads (the shape of `AgentServer.Options`). */
export interface Configured {
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly rateLimit?:
    | {
      readonly limit: number
      readonly window: Duration.DurationInput
      readonly store?: Layer.Layer<RateLimiterStore> | undefined
    }
    | false
    | undefined
  readonly maxBodyBytes?: number | undefined
  readonly readOnly?: boolean | undefined
  readonly traceUrl?: string | undefined
  readonly recordPollInterval?: Duration.DurationInput | undefined
  readonly drainTimeout?: Duration.DurationInput | undefined
}

const optional = <A>(config: Config.Config<A>) => Config.map(Config.option(config), Option.getOrUndefined)

const settings = Config.all({
  // 0 asks the system for a free port.
  port: optional(
    Config.integer("AGENT_SERVER_PORT").pipe(Config.validate({
      message: "must be a port number from 0 to 65535",
      validation: (n) => n >= 0 && n <= 65535
    }))
  ),
  host: optional(Config.nonEmptyString("AGENT_SERVER_HOST")),
  apiKey: optional(Config.redacted("AGENT_API_KEY")),
  rateLimit: optional(
    Config.integer("AGENT_RATE_LIMIT").pipe(Config.validate({
      message: "must be 0 (no limit) or more",
      validation: (n) => n >= 0
    }))
  ),
  rateLimitWindow: optional(Config.duration("AGENT_RATE_LIMIT_WINDOW")),
  redisUrl: optional(Config.redacted("AGENT_RATE_LIMIT_REDIS_URL")),
  maxBodyBytes: optional(
    Config.integer("AGENT_SERVER_MAX_BODY_BYTES").pipe(Config.validate({
      message: "must be a positive number of bytes",
      validation: (n) => n > 0
    }))
  ),
  readOnly: optional(Config.boolean("AGENT_SERVER_READ_ONLY")),
  traceUrl: optional(Config.nonEmptyString("AGENT_TRACE_URL")),
  recordPollInterval: optional(Config.duration("AGENT_SERVER_RECORD_POLL_INTERVAL")),
  drainTimeout: optional(Config.duration("AGENT_SERVER_DRAIN_TIMEOUT"))
})

/** ioredis options of a `redis://` / `rediss://` URL. */
export const redisOptions = (url: Redacted.Redacted<string>) => {
  const parsed = new URL(Redacted.value(url))
  const db = parsed.pathname.replace(/^\//, "")
  return {
    host: parsed.hostname,
    port: parsed.port === "" ? 6379 : Number(parsed.port),
    ...(parsed.username === "" ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === "" ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(db === "" ? {} : { db: Number(db) }),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {})
  }
}

const redisStore = (url: Redacted.Redacted<string>): Effect.Effect<Layer.Layer<RateLimiterStore>> =>
  Effect.map(
    Effect.promise(() => import("@effect/experimental/RateLimiter/Redis")),
    (Redis) => Redis.layerStore({ ...redisOptions(url), prefix: "effect-agent-pipeline:ratelimit:" })
  )

/** The configured options (unset settings stay unset: the layer's defaults apply). */
export const options: Effect.Effect<Configured, ConfigError.ConfigError> = Effect.gen(function*() {
  const s = yield* settings
  const store = s.redisUrl === undefined ? undefined : yield* redisStore(s.redisUrl)
  const rateLimit: Configured["rateLimit"] = s.rateLimit === 0
    ? false
    : s.rateLimit === undefined && s.rateLimitWindow === undefined && store === undefined
    ? undefined
    : { limit: s.rateLimit ?? 600, window: s.rateLimitWindow ?? Duration.minutes(1), store }
  return {
    port: s.port,
    host: s.host,
    apiKey: s.apiKey,
    rateLimit,
    maxBodyBytes: s.maxBodyBytes,
    readOnly: s.readOnly,
    traceUrl: s.traceUrl,
    recordPollInterval: s.recordPollInterval,
    drainTimeout: s.drainTimeout
  }
})

/** `configured`, with every option `overrides` sets in its place. */
export const merge = (configured: Configured, overrides: Configured): Configured => ({
  port: overrides.port ?? configured.port,
  host: overrides.host ?? configured.host,
  apiKey: overrides.apiKey ?? configured.apiKey,
  rateLimit: overrides.rateLimit ?? configured.rateLimit,
  maxBodyBytes: overrides.maxBodyBytes ?? configured.maxBodyBytes,
  readOnly: overrides.readOnly ?? configured.readOnly,
  traceUrl: overrides.traceUrl ?? configured.traceUrl,
  recordPollInterval: overrides.recordPollInterval ?? configured.recordPollInterval,
  drainTimeout: overrides.drainTimeout ?? configured.drainTimeout
})
