/**
 * Activity signals in Redis (ioredis 5), for several agent processes.
 *
 * Layout, under `keyPrefix` (default `eap:activity:`):
 * - `signal:<signalId>` — the signal's JSON (without its expiry);
 * - `domain:<domain>` — a sorted set of signal ids scored by expiry time.
 *
 * Liveness is the score compared with the time the front service passes in
 * (its `Clock`), never Redis's clock, so every backend — and `TestClock` —
 * agree. Redis key expiry is only garbage collection: keys live `gcMargin`
 * (default 5 minutes) past their signal's expiry. Each operation is one Lua
 * script, atomic on the server. The scripts compute the domain key of a
 * signal from its stored JSON, so a Redis Cluster is not supported.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Layer, Redacted, Schema, type Scope } from "effect"
import { Redis, type RedisOptions as IoRedisOptions } from "ioredis"
import {
  type ActivitySignal,
  ActivitySignal as ActivitySignalSchema,
  ActivitySignalStore,
  ActivityStore,
  ActivityStoreError,
  make as makeFront
} from "../contract/ActivityStore.js"
import { errorDetail } from "../internal/errorDetail.js"

/**
 * Options: the server's `url` (`redis://[:password@]host:port[/db]`, may be
 * redacted), the `keyPrefix` of every key, how long keys outlive their
 * signal (`gcMargin`) and any further ioredis options.
 *
 * @since 0.1.0
 * @category models
 */
export interface RedisActivityOptions {
  readonly url: Redacted.Redacted | string
  readonly keyPrefix?: string | undefined
  readonly gcMargin?: Duration.DurationInput | undefined
  readonly redis?: IoRedisOptions | undefined
}

/**
 * The default key prefix.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultKeyPrefix = "eap:activity:"

// KEYS[1] signal key, KEYS[2] domain key; ARGV: body, expiresAt, signalId,
// gc millis, now, domain key prefix, domain.
const putScript = `
local old = redis.call('GET', KEYS[1])
if old then
  local ok, decoded = pcall(cjson.decode, old)
  if ok and type(decoded) == 'table' and decoded.domain ~= ARGV[7] then
    redis.call('ZREM', ARGV[6] .. tostring(decoded.domain), ARGV[3])
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
return 1`

// KEYS[1] signal key; ARGV: expiresAt, now, gc millis, domain key prefix, signalId.
const extendScript = `
local body = redis.call('GET', KEYS[1])
if not body then return 0 end
local ok, decoded = pcall(cjson.decode, body)
if not ok or type(decoded) ~= 'table' then return 0 end
local dkey = ARGV[4] .. tostring(decoded.domain)
local score = redis.call('ZSCORE', dkey, ARGV[5])
if not score or tonumber(score) <= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', dkey, 'XX', ARGV[1], ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if redis.call('PTTL', dkey) < tonumber(ARGV[3]) then redis.call('PEXPIRE', dkey, ARGV[3]) end
return 1`

// KEYS[1] signal key; ARGV: domain key prefix, signalId.
const deleteScript = `
local body = redis.call('GET', KEYS[1])
if not body then return 0 end
local ok, decoded = pcall(cjson.decode, body)
if ok and type(decoded) == 'table' then redis.call('ZREM', ARGV[1] .. tostring(decoded.domain), ARGV[2]) end
redis.call('DEL', KEYS[1])
return 1`

// KEYS[1] domain key; ARGV: now, signal key prefix. Returns body, score pairs.
const listScript = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES')
local out = {}
for i = 1, #ids, 2 do
  local body = redis.call('GET', ARGV[2] .. ids[i])
  if body then
    out[#out + 1] = body
    out[#out + 1] = ids[i + 1]
  end
end
return out`

/** What is stored under a signal's key: the signal without its expiry (that is the score). */
const SignalBody = Schema.parseJson(ActivitySignalSchema.omit("expiresAt"))
const encodeBody = Schema.encodeSync(SignalBody)
const decodeBody = Schema.decodeUnknownEither(SignalBody)

const validPrefix = (prefix: string) => prefix.length > 0 && !/[\s{}]/.test(prefix)

/**
 * The signal backend over a new Redis connection, closed when the scope
 * closes. Fails with an `ActivityStoreError` (`operation: "open"`) when the
 * server does not answer a `PING`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 * import * as ActivityStoreRedis from "effect-agent-pipeline/redis"
 *
 * const store = ActivityStore.make.pipe(
 *   Effect.provideServiceEffect(
 *     ActivityStore.ActivitySignalStore,
 *     ActivityStoreRedis.makeStore({ url: "redis://127.0.0.1:6379" })
 *   ),
 *   Effect.scoped
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStore = (
  options: RedisActivityOptions
): Effect.Effect<ActivitySignalStore.Service, ActivityStoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const prefix = options.keyPrefix ?? defaultKeyPrefix
    if (!validPrefix(prefix)) {
      return yield* new ActivityStoreError({
        operation: "open",
        detail: `invalid key prefix ${JSON.stringify(prefix)}`
      })
    }
    const gcMargin = Duration.toMillis(Duration.decode(options.gcMargin ?? Duration.minutes(5)))
    const url = typeof options.url === "string" ? options.url : Redacted.value(options.url)
    const redis = yield* Effect.acquireRelease(
      Effect.try({
        try: () => new Redis(url, { ...options.redis, lazyConnect: true }),
        catch: (cause) =>
          new ActivityStoreError({ operation: "open", detail: `invalid Redis options: ${errorDetail(cause)}`, cause })
      }),
      (client) => Effect.promise(() => client.quit().then(() => undefined, () => client.disconnect()))
    )
    yield* Effect.tryPromise({
      try: () => redis.connect().then(() => redis.ping()),
      catch: (cause) =>
        new ActivityStoreError({ operation: "open", detail: `cannot reach Redis: ${errorDetail(cause)}`, cause })
    })

    const signalKey = (signalId: string) => `${prefix}signal:${signalId}`
    const domainPrefix = `${prefix}domain:`
    const gcMillis = (expiresAt: number, now: number) => String(Math.max(1, Math.ceil(expiresAt - now + gcMargin)))
    const call = (operation: string, script: string, keys: ReadonlyArray<string>, args: ReadonlyArray<string>) =>
      Effect.tryPromise({
        try: () => redis.eval(script, keys.length, ...keys, ...args),
        catch: (cause) => new ActivityStoreError({ operation, detail: errorDetail(cause), cause })
      })

    return ActivitySignalStore.of({
      put: (signal, now) => {
        const { expiresAt, ...body } = signal
        return call("announce", putScript, [signalKey(signal.signalId), domainPrefix + signal.domain], [
          encodeBody(body),
          String(expiresAt),
          signal.signalId,
          gcMillis(expiresAt, now),
          String(now),
          domainPrefix,
          signal.domain
        ]).pipe(Effect.asVoid)
      },
      extend: (signalId, expiresAt, now) =>
        call("renew", extendScript, [signalKey(signalId)], [
          String(expiresAt),
          String(now),
          gcMillis(expiresAt, now),
          domainPrefix,
          signalId
        ]).pipe(Effect.map((reply) => reply === 1)),
      delete: (signalId) =>
        call("remove", deleteScript, [signalKey(signalId)], [domainPrefix, signalId]).pipe(
          Effect.map((reply) => reply === 1)
        ),
      list: (domain, now) =>
        call("listActive", listScript, [domainPrefix + domain], [String(now), `${prefix}signal:`]).pipe(
          Effect.flatMap((reply) => {
            if (!Array.isArray(reply)) {
              return Effect.fail(new ActivityStoreError({ operation: "listActive", detail: "unexpected reply" }))
            }
            const signals: Array<ActivitySignal> = []
            for (let i = 0; i + 1 < reply.length; i += 2) {
              const decoded = decodeBody(reply[i])
              const expiresAt = Number(reply[i + 1])
              if (decoded._tag === "Right" && Number.isFinite(expiresAt)) signals.push({ ...decoded.right, expiresAt })
            }
            return Effect.succeed(signals)
          })
        )
    })
  })

/**
 * The signal backend alone, for `ActivityStore.layer`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 * import * as ActivityStoreRedis from "effect-agent-pipeline/redis"
 *
 * const ActivityLive = ActivityStore.layer.pipe(
 *   Layer.provide(ActivityStoreRedis.layerStore({ url: "redis://127.0.0.1:6379" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStore = (options: RedisActivityOptions): Layer.Layer<ActivitySignalStore, ActivityStoreError> =>
  Layer.scoped(ActivitySignalStore, makeStore(options))

/**
 * The activity store in Redis.
 *
 * @example
 * ```ts
 * import * as ActivityStoreRedis from "effect-agent-pipeline/redis"
 *
 * const ActivityLive = ActivityStoreRedis.layer({ url: "redis://127.0.0.1:6379", keyPrefix: "agents:activity:" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: RedisActivityOptions): Layer.Layer<ActivityStore, ActivityStoreError> =>
  Layer.effect(ActivityStore, makeFront).pipe(Layer.provide(layerStore(options)))
