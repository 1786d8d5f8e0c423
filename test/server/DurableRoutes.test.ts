/**
 * The durable request routes served by `AgentServer` over a real socket
 * (issue 24): a submission is 202 with its id at once; its status is
 * `pending` while it awaits its approval (its progress streams on the
 * usual route), the approval route decides it (a wrong digest is 409
 * `plan_mismatch`, nothing runs), then `completed` with the result. Without
 * `DurablePipeline.layer` the routes are 404.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as DurablePipeline from "effect-agent-pipeline/durable"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { agentLayer, quoteStep, serve, tradeStep } from "./support/StreamServer.js"

const agent = agentLayer({
  script: { plan: () => ({ steps: [quoteStep("q1"), tradeStep("t1")], terminal: true }), tokens: () => ["ok"] }
})

const durableAgent = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-durable-server-"))
  return DurablePipeline.layer().pipe(
    Layer.provideMerge(agent),
    Layer.provide(DurablePipeline.engineSqlite({ filename: path.join(dir, "workflows.db") }))
  )
}

/** The fields these routes answer with. */
interface Body {
  readonly requestId?: string
  readonly status?: string
  readonly planDigest?: string
  readonly error?: { readonly code?: string; readonly message?: string }
  readonly result?: {
    readonly _tag: string
    readonly response: {
      readonly phases: ReadonlyArray<{ readonly steps: ReadonlyArray<{ readonly status: string }> }>
    }
  }
}
const json = (response: Response): Effect.Effect<Body> => Effect.promise(() => response.json() as Promise<Body>)

/** Runs `effect` every 25 ms until `done` holds for its value. */
const until = <A>(effect: Effect.Effect<A>, done: (a: A) => boolean): Effect.Effect<A> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.zipRight(Effect.sleep(25), until(effect, done))))
const post = (url: string, body: unknown) =>
  Effect.promise(() =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  )
const get = (url: string) => Effect.promise(() => fetch(url))

describe("durable request routes", () => {
  it.live(
    "submit (202), pending at its approval, decided by the approval route (a wrong digest: 409), then completed",
    () =>
      Effect.gen(function*() {
        const server = yield* serve(durableAgent())
        const submitted = yield* post(`${server.url}/v1/durable/requests`, { request: "buy", requestId: "d-1" })
        expect(submitted.status).toBe(202)
        expect(yield* json(submitted)).toEqual({ requestId: "d-1" })

        const checkpointId = encodeURIComponent("d-1/approval/1")
        // The approval checkpoint appears once the plan awaits its approver.
        const pending = yield* json(
          yield* until(get(`${server.url}/v1/checkpoints/${checkpointId}`), (r) => r.status === 200)
        )
        const status = yield* json(yield* get(`${server.url}/v1/durable/requests/d-1`))
        expect(status).toEqual({ requestId: "d-1", status: "pending" })

        const wrong = yield* post(`${server.url}/v1/durable/approvals/${checkpointId}`, {
          decision: "approve",
          planDigest: "0".repeat(64)
        })
        expect(wrong.status).toBe(409)
        expect((yield* json(wrong)).error?.code).toBe("plan_mismatch")

        const approved = yield* post(`${server.url}/v1/durable/approvals/${checkpointId}`, {
          decision: "approve",
          planDigest: pending.planDigest
        })
        expect(approved.status).toBe(202)
        const done = yield* until(
          Effect.flatMap(get(`${server.url}/v1/durable/requests/d-1`), json),
          (s) => s.status !== "pending"
        )
        expect(done.status).toBe("completed")
        expect(done.result?._tag).toBe("Completed")
        expect(done.result?.response.phases[0]?.steps.map((s) => s.status)).toEqual([
          "succeeded",
          "succeeded"
        ])
        // Its progress, on the route every request has: replayed from the record, then end.
        const progress = yield* get(`${server.url}/v1/requests/d-1/progress`)
        expect(progress.status).toBe(200)
        expect(yield* Effect.promise(() => progress.text())).toContain("event: end")

        const unknown = yield* get(`${server.url}/v1/durable/requests/nobody`)
        expect(unknown.status).toBe(404)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("an agent without DurablePipeline.layer: the durable routes are 404", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent)
      const submitted = yield* post(`${server.url}/v1/durable/requests`, { request: "buy" })
      expect(submitted.status).toBe(404)
      expect((yield* json(submitted)).error?.message).toContain("DurablePipeline.layer")
    }).pipe(Effect.scoped), 60_000)
})
