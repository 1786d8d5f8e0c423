/**
 * The rate limit through `@effect/experimental`'s RateLimiter: per key (or
 * per remote address without a valid key), 429 `rate_limited` with a
 * `retry-after` header once the window's budget is spent; counted in
 * memory by default, or in a shared Redis (two servers share one budget).
 */
import * as RateLimiterRedis from "@effect/experimental/RateLimiter/Redis"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { Agent } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import { Redis } from "ioredis"
import { redisOptions } from "../../src/server/internal/serverConfig.js"
import { redisUrl, unavailable } from "../support/Backends.js"
import { plan, quoteStep } from "../support/Harness.js"
import { agent, type Running, start } from "./ServerHarness.js"

const script = { plans: [plan([quoteStep("q1")])], synthesis: "ok" }

const spend = (server: Running, n: number, headers: Record<string, string> = {}) =>
  Effect.forEach(Array.from({ length: n }), () => Effect.map(server.json("/v1/records", { headers }), (r) => r.status))

const expectLimited = (server: Running, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const limited = yield* server.json("/v1/records", { headers })
    expect(limited.status).toBe(429)
    expect(limited.body).toMatchObject({
      _tag: "TooManyRequests",
      error: { type: "rate_limit_error", code: "rate_limited" }
    })
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(limited.body.error.retryAfterSeconds).toBe(retryAfter)
  })

describe("rate limit (memory)", () => {
  it.scopedLive("the budget per window, then 429 with retry-after", () =>
    Effect.gen(function*() {
      const server = yield* start(
        AgentServer.layer({ port: 0, rateLimit: { limit: 3, window: "1 minute" } }),
        agent(script)
      )
      expect(yield* spend(server, 3)).toEqual([200, 200, 200])
      yield* expectLimited(server)
    }))

  it.scopedLive("counted per key: a spent key does not spend the address's budget, and a wrong key counts as the address", () =>
    Effect.gen(function*() {
      const server = yield* start(
        AgentServer.layer({ port: 0, apiKey: Redacted.make("k"), rateLimit: { limit: 2, window: "1 minute" } }),
        agent(script)
      )
      expect(yield* spend(server, 2, { "x-api-key": "k" })).toEqual([200, 200])
      yield* expectLimited(server, { "x-api-key": "k" })
      // The address's own budget (public assets, refused keys) is untouched.
      expect((yield* server.fetch("/viewer/config.json")).status).toBe(200)
      expect((yield* server.json("/v1/records", { headers: { "x-api-key": "wrong" } })).status).toBe(401)
      yield* expectLimited(server, { "x-api-key": "wrong" })
    }))

  it.scopedLive("the window refills: after it, requests are served again", () =>
    Effect.gen(function*() {
      const server = yield* start(
        AgentServer.layer({ port: 0, rateLimit: { limit: 2, window: "1 second" } }),
        agent(script)
      )
      expect(yield* spend(server, 2)).toEqual([200, 200])
      yield* expectLimited(server)
      yield* Effect.sleep("1100 millis")
      expect(yield* spend(server, 1)).toEqual([200])
    }))

  it.scopedLive("rateLimit: false serves without counting", () =>
    Effect.gen(function*() {
      const server = yield* start(AgentServer.layer({ port: 0, rateLimit: false }), agent(script))
      expect(new Set(yield* spend(server, 30))).toEqual(new Set([200]))
    }))
})

const skipRedis = unavailable("redis")

describe.skipIf(skipRedis !== undefined)("rate limit (redis)", () => {
  const store = (prefix: string) =>
    RateLimiterRedis.layerStore({ ...redisOptions(Redacted.make(redisUrl ?? "")), prefix })

  it.scopedLive("two servers over one Redis store share one budget", () =>
    Effect.gen(function*() {
      const prefix = `eap-test-${crypto.randomUUID()}:`
      const agentLayer = Agent.layerTest({ tools: [], script })
      const shared = { limit: 3, window: "1 minute", store: store(prefix) } as const
      const one = yield* start(AgentServer.layer({ port: 0, rateLimit: shared }), agentLayer)
      const two = yield* start(AgentServer.layer({ port: 0, rateLimit: shared }), agentLayer)
      expect(yield* spend(one, 2)).toEqual([200, 200])
      expect(yield* spend(two, 1)).toEqual([200])
      yield* expectLimited(one)
      yield* expectLimited(two)
    }))

  it.scopedLive("layerConfig: AGENT_RATE_LIMIT, AGENT_RATE_LIMIT_WINDOW and AGENT_RATE_LIMIT_REDIS_URL", () =>
    Effect.gen(function*() {
      const config = ConfigProvider.fromMap(
        new Map([
          ["AGENT_SERVER_PORT", "0"],
          ["AGENT_RATE_LIMIT", "2"],
          ["AGENT_RATE_LIMIT_WINDOW", "1 minute"],
          ["AGENT_RATE_LIMIT_REDIS_URL", redisUrl ?? ""]
        ])
      )
      const redis = yield* Effect.acquireRelease(
        Effect.sync(() => new Redis(redisUrl ?? "")),
        (client) => Effect.promise(() => client.quit())
      )
      const counters = () => Effect.promise(() => redis.keys("effect-agent-pipeline:ratelimit:*"))
      // The loopback address's counter may remain from an earlier run: start from none.
      for (const key of yield* counters()) yield* Effect.promise(() => redis.del(key))
      const server = yield* start(AgentServer.layerConfig(), agent(script)).pipe(Effect.withConfigProvider(config))
      expect(yield* spend(server, 2)).toEqual([200, 200])
      yield* expectLimited(server)
      // Counted in Redis, under the server's prefix.
      expect((yield* counters()).length).toBeGreaterThanOrEqual(1)
    }))
})
