/**
 * Human approval from the viewer, in headless Chromium against a real
 * `AgentServer`: a suspended request shows the plan waiting at its
 * checkpoint and its digest; Approve resumes it (the record then
 * completes), Reject rejects it (the record says so, its cards stay); the
 * digest posted is the one of the plan shown. A read-only viewer shows no
 * buttons.
 */
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer } from "effect"
import { Pipeline } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import type { Page } from "playwright-core"
import { act, browserUnavailable, launch, openPage, screenshot } from "../support/Browser.js"
import { agentLayer, serve, submit } from "../support/ViewerServer.js"

const skipped = browserUnavailable()

const text = (page: Page, selector: string) =>
  act(async () => ((await page.locator(selector).first().textContent()) ?? "").trim())

/** The resume calls the page makes: their bodies. */
const resumeBodies = (page: Page) => {
  const bodies: Array<unknown> = []
  page.on("request", (r) => {
    if (r.method() === "POST" && /\/v1\/checkpoints\/[^/]+\/resume$/.test(r.url())) bodies.push(r.postDataJSON())
  })
  return bodies
}

/**
 * The server serves the plan waiting at a checkpoint (the record holds
 * only the checkpoint's id): `GET /v1/checkpoints/{id}` with the plan and
 * its digest.
 */
const checkpointRoute = (url: string, checkpointId: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/v1/checkpoints/${encodeURIComponent(checkpointId)}`)
    const body = (await response.json()) as Record<string, unknown>
    expect(response.status, "GET /v1/checkpoints/{id}: the plan waiting for approval").toBe(200)
    expect(Object.keys(body).sort()).toEqual(
      expect.arrayContaining(["checkpointId", "phase", "plan", "planDigest", "reason", "requestId"])
    )
    expect(body).not.toHaveProperty("mac")
  })

if (skipped !== undefined) {
  describe("approval from the viewer in Chromium", () => it.skip(`skipped: ${skipped}`, () => {}))
} else {
  describe("approval from the viewer in Chromium", () => {
    it.scopedLive(
      "Approve: the plan and its digest are shown, the request resumes and completes",
      () =>
        Effect.gen(function*() {
          const served = yield* serve()
          const suspended = yield* submit(served, { request: "convert 100 USD", requestId: "approve-1" })
          const checkpoint = suspended.body["checkpoint"] as {
            readonly checkpointId: string
            readonly planDigest: string
          }
          expect(suspended.body["_tag"]).toBe("Suspended")
          const browser = yield* launch
          const { incidents, page } = yield* openPage(browser)
          const posted = resumeBodies(page)
          yield* checkpointRoute(served.url, checkpoint.checkpointId)
          yield* act(() => page.goto(`${served.url}/#/records/approve-1`))
          yield* act(() => page.waitForSelector(".suspended-panel button.approve", { timeout: 10_000 }))
          expect(yield* text(page, ".record-status")).toBe("suspended")
          expect(yield* act(() => page.locator(".suspended-panel svg.dag g[data-step-id=c1]").count())).toBe(1)
          expect(yield* text(page, ".suspended-panel .digest code")).toBe(checkpoint.planDigest)
          expect(yield* text(page, ".suspended-panel p:first-child")).toBe(
            "Waiting for a human: currency conversions need a human (phase 1)"
          )
          yield* screenshot(page, "suspended")

          yield* act(() => page.click(".suspended-panel button.approve"))
          yield* act(() => page.waitForSelector(".record-status:text-is('succeeded')", { timeout: 10_000 }))
          expect(posted).toEqual([{ decision: "approve", planDigest: checkpoint.planDigest }])
          expect(yield* act(() => page.isHidden(".suspended-panel"))).toBe(true)
          // The approved plan ran.
          expect(yield* text(page, "tr[data-step-id=c1] .badge")).toBe("succeeded")
          expect(JSON.parse(yield* text(page, "tr[data-step-id=c1] .tool-output"))).toMatchObject({ currency: "EUR" })
          yield* screenshot(page, "approved")
          expect(incidents).toEqual({ dialogs: [], pageErrors: [], cspViolations: [], consoleErrors: [] })
        }),
      60_000
    )

    it.scopedLive("Reject: the request is rejected and its evidence stays on the page", () =>
      Effect.gen(function*() {
        const served = yield* serve()
        const suspended = yield* submit(served, { request: "convert 100 USD", requestId: "reject-1" })
        const checkpoint = suspended.body["checkpoint"] as {
          readonly checkpointId: string
          readonly planDigest: string
        }
        const browser = yield* launch
        const { incidents, page } = yield* openPage(browser)
        const posted = resumeBodies(page)
        yield* checkpointRoute(served.url, checkpoint.checkpointId)
        yield* act(() => page.goto(`${served.url}/#/records/reject-1`))
        yield* act(() => page.waitForSelector(".suspended-panel button.reject", { timeout: 10_000 }))
        yield* act(() => page.click(".suspended-panel button.reject"))
        yield* act(() => page.waitForSelector(".record-status:text-is('rejected')", { timeout: 10_000 }))
        expect(posted).toEqual([{ decision: "reject", planDigest: checkpoint.planDigest }])
        // The cards of what ran before the suspension are still there; nothing ran after it.
        expect(yield* text(page, "[data-stage=after_planning] [data-hook=plan-policy] .decision")).toBe(
          "Decision fail_closed / continue / accepted"
        )
        expect(yield* text(page, "[data-stage=before_planning] [data-hook=desk-context] .enrichments pre")).toBe(
          "Desk notes: quotes are delayed 15 minutes."
        )
        expect(yield* act(() => page.locator("tr[data-step-id=c1] .tool-output").count())).toBe(0)
        yield* screenshot(page, "rejected-by-human")
        expect(incidents).toEqual({ dialogs: [], pageErrors: [], cspViolations: [], consoleErrors: [] })
      }), 60_000)

    it.scopedLive("a read-only viewer over the same records shows no decision buttons", () =>
      Effect.gen(function*() {
        const gates = { effect: yield* Deferred.make<void>(), tool: yield* Deferred.make<void>() }
        const agent = yield* Layer.build(agentLayer(gates))
        const result = yield* Context.get(agent, Pipeline.Pipeline).process({
          request: "convert 100 USD",
          requestId: "read-only-1"
        })
        expect(result._tag).toBe("Suspended")
        const viewer = yield* Layer.build(
          AgentServer.layerViewer({ port: 0, host: "127.0.0.1", rateLimit: false }).pipe(
            Layer.provide(Layer.succeedContext(agent)),
            Layer.orDie
          )
        )
        const address = Context.get(viewer, HttpServer.HttpServer).address
        if (address._tag !== "TcpAddress") return expect.unreachable(address._tag)
        const browser = yield* launch
        const { page } = yield* openPage(browser)
        yield* act(() => page.goto(`http://127.0.0.1:${address.port}/#/records/read-only-1`))
        yield* act(() => page.waitForSelector(".suspended-panel .approval > *:not(.muted)"))
        expect(yield* text(page, "#banner")).toBe("read-only")
        expect(yield* text(page, ".record-status")).toBe("suspended")
        expect(yield* act(() => page.locator(".suspended-panel button").count())).toBe(0)
      }), 60_000)
  })
}
