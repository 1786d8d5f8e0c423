/**
 * `/openapi.json` is derived from the HttpApi and documents every route
 * with its bodies and error statuses; `/docs` is Scalar's page from its
 * bundled source — no script, stylesheet or font from a CDN.
 */
import { FetchHttpClient, HttpApiClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as AgentServer from "effect-agent-pipeline/server"
import { browserUnavailable, launch, openPage } from "../support/Browser.js"
import { plan, quoteStep } from "../support/Harness.js"
import { startAgent } from "./ServerHarness.js"

const script = { plans: [plan([quoteStep("q1")])], synthesis: "ok" }

const routes = [
  ["post", "/v1/requests"],
  ["post", "/v1/requests/stream"],
  ["get", "/v1/requests/{id}/progress"],
  ["post", "/v1/checkpoints/{id}/resume"],
  ["get", "/v1/checkpoints/{id}"],
  ["get", "/v1/records"],
  ["get", "/v1/records/{id}"],
  ["get", "/v1/records/{id}/events"],
  ["post", "/v1/chat/completions"],
  ["post", "/v1/durable/requests"],
  ["get", "/v1/durable/requests/{id}"],
  ["post", "/v1/durable/approvals/{id}"]
] as const

describe("/openapi.json and /docs", () => {
  it.scopedLive("the OpenAPI document lists every route, its bodies and the error statuses", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { body: spec, status } = yield* server.json("/openapi.json")
      expect(status).toBe(200)
      expect(spec.openapi).toMatch(/^3\./)
      const listed = Object.entries(spec.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method} ${path}`)
      )
      expect(listed.sort()).toEqual(routes.map(([method, path]) => `${method} ${path}`).sort())
      const operation = (method: string, path: string) => spec.paths[path][method]
      for (const [method, path] of routes) {
        const responses = Object.keys(operation(method, path).responses)
        // A durable submission or decision is accepted (202): the request goes on without the caller.
        const ok = method === "post" && path.startsWith("/v1/durable/") ? "202" : "200"
        for (const code of [ok, "400", "401", "404", "413", "429", "500", "503"]) expect(responses).toContain(code)
      }
      // Every 400 is answered as BadRequest (the platform's decode error is mapped to it).
      expect(JSON.stringify(spec)).not.toContain("HttpApiDecodeError")
      expect(operation("get", "/v1/records").responses["400"].content["application/json"].schema).toEqual({
        $ref: "#/components/schemas/effect-agent-pipeline~1server~1BadRequest"
      })
      expect(spec.info.title).toBe("effect-agent-pipeline")
      // Every reference resolves to a schema of the document.
      const refs = [...JSON.stringify(spec).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) =>
        m[1]!.replace(/~1/g, "/").replace(/~0/g, "~")
      )
      for (const ref of refs) expect(Object.keys(spec.components.schemas)).toContain(ref)
      expect(operation("post", "/v1/requests").requestBody.content["application/json"]).toBeDefined()
      expect(operation("post", "/v1/checkpoints/{id}/resume").requestBody.content["application/json"]).toBeDefined()
      expect(operation("post", "/v1/requests/stream").responses["200"].content["text/event-stream"]).toBeDefined()
      expect(operation("get", "/v1/records/{id}/events").responses["200"].content["text/event-stream"]).toBeDefined()
      const chat = operation("post", "/v1/chat/completions").responses["200"].content
      expect(Object.keys(chat).sort()).toEqual(["application/json", "text/event-stream"])
      expect(operation("get", "/v1/records").parameters.map((p: { name: string }) => p.name).sort()).toEqual(
        ["cursor", "hook", "limit", "startedBefore", "startedFrom", "status"]
      )
    }))

  it.scopedLive("/docs is Scalar from its bundled source: no script or stylesheet from another origin, no default fonts", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const response = yield* server.fetch("/docs")
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      const html = yield* Effect.promise(() => response.text())
      expect(html).toContain("api-reference")
      expect(html.length).toBeGreaterThan(100_000)
      expect(html).not.toMatch(/<script[^>]+src=["']?(?:https?:)?\/\//i)
      expect(html).not.toMatch(/<link[^>]+href=["']?(?:https?:)?\/\//i)
      expect(html).toContain(`"withDefaultFonts":false`)
    }))

  it.scopedLive.skipIf(browserUnavailable() !== undefined)(
    "/docs in Chromium renders the API and fetches nothing from another origin",
    () =>
      Effect.gen(function*() {
        const server = yield* startAgent(script)
        const browser = yield* launch
        const { page } = yield* openPage(browser)
        const elsewhere: Array<string> = []
        page.on("request", (request) => {
          const url = request.url()
          if (!url.startsWith(server.url) && !/^(data|blob|about):/.test(url)) elsewhere.push(url)
        })
        yield* Effect.promise(() => page.goto(`${server.url}/docs`, { waitUntil: "networkidle" }))
        yield* Effect.promise(() => page.getByText("/v1/chat/completions").first().waitFor({ timeout: 15_000 }))
        expect(elsewhere).toEqual([])
      }),
    60_000
  )

  it.scopedLive("AgentServer.Api is the HttpApi the server serves: HttpApiClient.make(AgentServer.Api) talks to it", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const client = yield* HttpApiClient.make(AgentServer.Api, { baseUrl: server.url })
      const result = yield* client.requests.process({ payload: { request: "quote ACME", requestId: "via-client" } })
      expect(result._tag).toBe("Completed")
      const page = yield* client.records.list({ urlParams: { limit: "10" } })
      expect(page.records.map((r) => r.requestId)).toEqual(["via-client"])
      const missing = yield* Effect.flip(client.records.get({ path: { id: "nope" } }))
      expect(missing._tag).toBe("NotFound")
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
