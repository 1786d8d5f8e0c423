/**
 * The documentation's server example (`examples/readme/server.ts`) serves
 * its agent: the same agent Layer behind `AgentServer.layer` on a free
 * port answers a request and lists its record.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as AgentServer from "effect-agent-pipeline/server"
import { AgentLive } from "../../examples/readme/server.js"
import { post, start } from "./ServerHarness.js"

describe("examples/readme/server.ts", () => {
  it.scopedLive("its agent behind AgentServer.layer answers and records", () =>
    Effect.gen(function*() {
      const server = yield* start(AgentServer.layer({ port: 0, rateLimit: false }), AgentLive)
      const { body, status } = yield* server.json(
        "/v1/requests",
        post({ request: "weather in Paris", requestId: "ex-1" })
      )
      expect(status).toBe(200)
      expect(body._tag).toBe("Completed")
      const list = yield* server.json("/v1/records")
      expect(list.body.records.map((r: { readonly requestId: string }) => r.requestId)).toEqual(["ex-1"])
    }))
})
