/**
 * The API key: with a key configured, every `/v1/*` route, `/openapi.json`
 * and `/docs` want it (`Authorization: Bearer` or `x-api-key`), 401 with
 * the stable body otherwise; the viewer's page, assets and config are
 * public. Without a key, everything is open. `AGENT_API_KEY` is the
 * default key.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import * as AgentServer from "effect-agent-pipeline/server"
import { plan, quoteStep } from "../support/Harness.js"
import { agent, post, start, startAgent } from "./ServerHarness.js"

const script = { plans: [plan([quoteStep("q1")]), plan([quoteStep("q1")])], synthesis: "ok" }
const apiKey = Redacted.make("s3cret-key-for-tests")

describe("API key", () => {
  it.scopedLive("no key or a wrong key: 401 on every data route, /openapi.json and /docs", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script, { apiKey })
      const routes: ReadonlyArray<readonly [string, RequestInit | undefined]> = [
        ["/v1/requests", post({ request: "quote" })],
        ["/v1/requests/stream", post({ request: "quote" })],
        ["/v1/checkpoints/x/resume", post({ decision: "approve", planDigest: "x" })],
        ["/v1/records", undefined],
        ["/v1/records/x", undefined],
        ["/v1/records/x/events", undefined],
        ["/v1/chat/completions", post({ model: "m", messages: [{ role: "user", content: "hi" }] })],
        ["/openapi.json", undefined],
        ["/docs", undefined],
        ["/v1/nothing", undefined]
      ]
      const wrongKeys: ReadonlyArray<Record<string, string>> = [
        {},
        { authorization: "Bearer wrong" },
        { authorization: "Bearer s3cret-key-for-test" },
        { authorization: "Basic s3cret-key-for-tests" },
        { "x-api-key": "s3cret-key-for-testsX" }
      ]
      for (const [path, init] of routes) {
        for (const headers of wrongKeys) {
          const { body, status } = yield* server.json(path, {
            ...init,
            headers: { ...(init?.headers as Record<string, string> | undefined), ...headers }
          })
          expect([path, headers, status]).toEqual([path, headers, 401])
          expect(body).toEqual({
            _tag: "Unauthorized",
            error: { type: "authentication_error", code: "unauthorized", message: expect.any(String) }
          })
        }
      }
    }))

  it.scopedLive("the right key as Bearer or x-api-key: served", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script, { apiKey })
      const bearer = yield* server.json(
        "/v1/requests",
        post({ request: "quote" }, { authorization: "Bearer s3cret-key-for-tests" })
      )
      expect(bearer.status).toBe(200)
      const header = yield* server.json(
        "/v1/requests",
        post({ request: "quote" }, { "x-api-key": "s3cret-key-for-tests" })
      )
      expect(header.status).toBe(200)
      expect((yield* server.json("/v1/records", { headers: { "x-api-key": "s3cret-key-for-tests" } })).status).toBe(200)
      const docs = yield* server.fetch("/docs", { headers: { authorization: "Bearer s3cret-key-for-tests" } })
      expect(docs.status).toBe(200)
      const spec = yield* server.json("/openapi.json", { headers: { authorization: "Bearer s3cret-key-for-tests" } })
      expect(spec.status).toBe(200)
    }))

  it.scopedLive("the viewer's page, assets and config are public, and say a key is required", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script, { apiKey })
      const page = yield* server.fetch("/")
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect((yield* server.fetch("/viewer/app.js")).status).toBe(200)
      const config = yield* server.json("/viewer/config.json")
      expect(config.status).toBe(200)
      expect(config.body).toMatchObject({ authRequired: true, readOnly: false })
      // A data route spelled as an asset path is not public.
      expect((yield* server.fetch("/viewer/../v1/records")).status).not.toBe(200)
      expect((yield* server.fetch("/viewer/%2e%2e/v1/records")).status).not.toBe(200)
    }))

  it.scopedLive("without a key everything is open, and the viewer is told so", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      expect((yield* server.json("/v1/records")).status).toBe(200)
      expect((yield* server.json("/viewer/config.json")).body).toMatchObject({ authRequired: false })
    }))

  it.scopedLive("AGENT_API_KEY is the default key", () =>
    Effect.gen(function*() {
      const server = yield* start(AgentServer.layer({ port: 0, rateLimit: false }), agent(script)).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["AGENT_API_KEY", "from-env"]])))
      )
      expect((yield* server.json("/v1/records")).status).toBe(401)
      expect((yield* server.json("/v1/records", { headers: { authorization: "Bearer from-env" } })).status).toBe(200)
    }))
})

describe("bound host", () => {
  it.scopedLive("loopback by default; the configured host otherwise", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      expect(server.hostname).toBe("127.0.0.1")
      const everywhere = yield* start(
        AgentServer.layer({ port: 0, host: "0.0.0.0", rateLimit: false }),
        agent(script)
      )
      expect(everywhere.hostname).toBe("0.0.0.0")
    }))

  it.scopedLive("layerConfig reads AGENT_SERVER_HOST and AGENT_SERVER_PORT (unset: 127.0.0.1)", () =>
    Effect.gen(function*() {
      const configured = (entries: ReadonlyArray<readonly [string, string]>) =>
        start(AgentServer.layerConfig({ rateLimit: false }), agent(script)).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(entries)))
        )
      const defaults = yield* configured([["AGENT_SERVER_PORT", "0"]])
      expect(defaults.hostname).toBe("127.0.0.1")
      const set = yield* configured([["AGENT_SERVER_PORT", "0"], ["AGENT_SERVER_HOST", "0.0.0.0"]])
      expect(set.hostname).toBe("0.0.0.0")
      expect((yield* set.json("/v1/records")).status).toBe(200)
    }))
})
