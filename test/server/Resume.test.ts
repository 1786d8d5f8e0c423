/**
 * `POST /v1/checkpoints/{id}/resume`: approve and reject bound to the
 * digest of the plan the approver saw; a digest that is not the
 * checkpoint's is 409 `plan_mismatch` and runs nothing; an unknown or
 * already decided checkpoint is 404; a malformed decision is 400.
 * `GET /v1/checkpoints/{id}` serves the waiting plan and its digest.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Approval, RoutingPlan } from "effect-agent-pipeline"
import { createHash } from "node:crypto"
import { plan, tradeStep } from "../support/Harness.js"
import { post, type Running, startAgent } from "./ServerHarness.js"

const script = { plans: [plan([tradeStep("t1")])], synthesis: "bought 10 ACME" }

const suspend = (server: Running, requestId: string) =>
  Effect.map(server.json("/v1/requests", post({ request: "buy ACME", requestId })), ({ body, status }) => {
    expect(status).toBe(200)
    expect(body._tag).toBe("Suspended")
    return { checkpointId: String(body.checkpoint.checkpointId), planDigest: String(body.checkpoint.planDigest) }
  })

describe("POST /v1/checkpoints/{id}/resume", () => {
  it.scopedLive("approve with the digest: Completed, and the checkpoint is gone (404 after)", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { checkpointId, planDigest } = yield* suspend(server, "r-approve")
      const path = `/v1/checkpoints/${checkpointId}/resume`
      const { body, status } = yield* server.json(path, post({ decision: "approve", planDigest }))
      expect(status).toBe(200)
      expect(body._tag).toBe("Completed")
      expect(body.response.response).toBe("bought 10 ACME")
      const again = yield* server.json(path, post({ decision: "approve", planDigest }))
      expect(again.status).toBe(404)
      expect(again.body).toMatchObject({ _tag: "NotFound", error: { code: "not_found" } })
      const record = yield* server.json("/v1/records/r-approve")
      expect(record.body.lifecycle.status).toBe("succeeded")
    }))

  it.scopedLive("reject with the digest: Rejected, nothing of the plan ran", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { checkpointId, planDigest } = yield* suspend(server, "r-reject")
      const { body, status } = yield* server.json(
        `/v1/checkpoints/${checkpointId}/resume`,
        post({ decision: "reject", planDigest })
      )
      expect(status).toBe(200)
      expect(body).toMatchObject({ _tag: "Rejected", requestId: "r-reject", checkpointId })
      const record = yield* server.json("/v1/records/r-reject")
      expect(record.body.lifecycle.status).toBe("rejected")
    }))

  it.scopedLive("a digest that is not the checkpoint's: 409 plan_mismatch; the right one still resumes", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { checkpointId, planDigest } = yield* suspend(server, "r-mismatch")
      const path = `/v1/checkpoints/${checkpointId}/resume`
      const wrong = yield* server.json(path, post({ decision: "approve", planDigest: "0".repeat(64) }))
      expect(wrong.status).toBe(409)
      expect(wrong.body).toMatchObject({ _tag: "Conflict", error: { type: "conflict_error", code: "plan_mismatch" } })
      const right = yield* server.json(path, post({ decision: "approve", planDigest }))
      expect(right.status).toBe(200)
      expect(right.body._tag).toBe("Completed")
    }))

  it.scopedLive("a malformed body: 400 naming the field (decision, planDigest); not JSON: 400", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { checkpointId, planDigest } = yield* suspend(server, "r-bad")
      const path = `/v1/checkpoints/${checkpointId}/resume`
      const decision = yield* server.json(path, post({ decision: "maybe", planDigest }))
      expect(decision.status).toBe(400)
      expect(decision.body.error).toMatchObject({ code: "malformed", param: "decision" })
      const digest = yield* server.json(path, post({ decision: "approve" }))
      expect(digest.status).toBe(400)
      expect(digest.body.error).toMatchObject({ code: "malformed", param: "planDigest" })
      const text = yield* server.json(path, post("approve"))
      expect(text.status).toBe(400)
      expect(text.body.error.code).toBe("malformed")
      const deep = yield* server.json(path, post(`{"decision":${"[".repeat(1000)}${"]".repeat(1000)}}`))
      expect(deep.status).toBe(400)
      expect(deep.body.error.code).toBe("too_deep")
    }))

  it.scopedLive("GET /v1/checkpoints/{id}: the waiting plan and its digest, nothing else; 404 once decided", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { checkpointId, planDigest } = yield* suspend(server, "r-read")
      const path = `/v1/checkpoints/${checkpointId}`
      const { body, status } = yield* server.json(path)
      expect(status).toBe(200)
      expect(Object.keys(body).sort()).toEqual(
        ["checkpointId", "createdAt", "phase", "plan", "planDigest", "reason", "requestId"]
      )
      expect(body).toMatchObject({ checkpointId, requestId: "r-read", planDigest })
      // The digest is the one of the plan served beside it (what the approver sees).
      const text = Approval.planText(Schema.decodeUnknownSync(RoutingPlan.RoutingPlan)(body.plan))
      expect(createHash("sha256").update(text).digest("hex")).toBe(planDigest)
      expect(body.plan.steps.map((step: { readonly step_id: string }) => step.step_id)).toEqual(["t1"])
      yield* server.json(`${path}/resume`, post({ decision: "reject", planDigest }))
      const gone = yield* server.json(path)
      expect(gone.status).toBe(404)
      expect(gone.body).toMatchObject({ _tag: "NotFound", error: { code: "not_found" } })
    }))

  it.scopedLive("an unknown checkpoint: 404", () =>
    Effect.gen(function*() {
      const server = yield* startAgent(script)
      const { body, status } = yield* server.json(
        "/v1/checkpoints/nope/resume",
        post({ decision: "approve", planDigest: "x" })
      )
      expect(status).toBe(404)
      expect(body).toMatchObject({ _tag: "NotFound", error: { type: "not_found_error", code: "not_found" } })
    }))
})
