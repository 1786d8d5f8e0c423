/**
 * The execution viewer in headless Chromium against a real `AgentServer`
 * (port 0) over the test agent of `test/support/ViewerServer.ts`: the
 * request list (filters, paging), a request's detail (Pre-Execution and
 * Post-Execution cards, the plan's DAG, tool inputs and outputs, model
 * calls, operation-hook runs), a request refused by the required plan
 * boundary, and an effect whose status changes while its request runs —
 * one card, changed in place. Screenshots go to `test-results/viewer/`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import type { Page } from "playwright-core"
import { act, browserUnavailable, launch, openPage, type PageDocument, screenshot } from "../support/Browser.js"
import { liveEffectId, serve, submit } from "../support/ViewerServer.js"

const skipped = browserUnavailable()

// In-page callbacks run in Chromium (see PageDocument).
declare const document: PageDocument

/** The text of the first element matching `selector` (trimmed). */
const text = (page: Page, selector: string) =>
  act(async () => ((await page.locator(selector).first().textContent()) ?? "").trim())

/** The texts of every element matching `selector`. */
const texts = (page: Page, selector: string) =>
  act(() => page.locator(selector).evaluateAll((nodes) => nodes.map((n) => (n.textContent ?? "").trim())))

/** Waits until the list shows exactly these request ids, in this order. */
const listShows = (page: Page, ids: ReadonlyArray<string>) =>
  act(() =>
    page.waitForFunction(
      (expected) =>
        JSON.stringify(
          [...document.querySelectorAll("table.records tbody tr")].map((r) => r.getAttribute("data-request-id"))
        ) ===
          JSON.stringify(expected),
      ids,
      { timeout: 10_000 }
    )
  )

if (skipped !== undefined) {
  describe("execution viewer in Chromium", () => it.skip(`skipped: ${skipped}`, () => {}))
} else {
  describe("execution viewer in Chromium", () => {
    it.scopedLive(
      "the list: status, time, models, hooks, decisions; filters; a click opens the detail",
      () =>
        Effect.gen(function*() {
          const served = yield* serve()
          expect((yield* submit(served, { request: "quote and forecast", requestId: "dag-1" })).status).toBe(200)
          expect((yield* submit(served, { request: "trade ACME now", requestId: "denied-1" })).status)
            .toBeGreaterThanOrEqual(400)
          expect((yield* submit(served, { request: "convert 100 USD", requestId: "suspend-1" })).body["_tag"]).toBe(
            "Suspended"
          )
          const browser = yield* launch
          const { incidents, page } = yield* openPage(browser)
          yield* act(() => page.goto(`${served.url}/`))
          yield* listShows(page, ["suspend-1", "denied-1", "dag-1"])
          const row = (id: string) => `tr[data-request-id="${id}"]`
          expect(yield* texts(page, `${row("dag-1")} td`)).toEqual([
            "succeeded",
            "dag-1quote and forecast",
            expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\d+ ms$/),
            "primary",
            expect.stringMatching(/^\d+$/),
            "0",
            "pipeline"
          ])
          expect(yield* text(page, `${row("denied-1")} .badge`)).toBe("failed")
          // The refusing boundary's decision counts.
          expect(Number(yield* text(page, `${row("denied-1")} td:nth-child(6)`))).toBeGreaterThanOrEqual(1)
          expect(yield* text(page, `${row("suspend-1")} .badge`)).toBe("suspended")
          yield* screenshot(page, "list")

          // Filters: by status, by hook name, by start time.
          yield* act(() => page.check("input[name=status][value=failed]"))
          yield* act(() => page.click("form.filters button[type=submit]"))
          yield* listShows(page, ["denied-1"])
          yield* act(() => page.uncheck("input[name=status][value=failed]"))
          yield* act(() => page.fill("input[name=hook]", "no-such-hook"))
          yield* act(() => page.click("form.filters button[type=submit]"))
          yield* listShows(page, [])
          expect(yield* text(page, ".note")).toBe("No records match.")
          yield* act(() => page.fill("input[name=hook]", "plan-policy"))
          yield* act(() => page.fill("input[name=before]", "2000-01-01T00:00:00"))
          yield* act(() => page.click("form.filters button[type=submit]"))
          yield* listShows(page, [])
          yield* act(() => page.fill("input[name=before]", ""))
          yield* act(() => page.click("form.filters button[type=submit]"))
          yield* listShows(page, ["suspend-1", "denied-1", "dag-1"])

          yield* act(() => page.click(`${row("dag-1")} a.open`))
          yield* act(() => page.waitForSelector(".record-head .request-id"))
          expect(page.url()).toBe(`${served.url}/#/records/dag-1`)
          expect(incidents).toEqual({ dialogs: [], pageErrors: [], cspViolations: [], consoleErrors: [] })
        }),
      60_000
    )

    it.scopedLive("paging follows the next cursor and comes back", () =>
      Effect.gen(function*() {
        const served = yield* serve()
        const ids = Array.from({ length: 27 }, (_, i) => `page-${String(i).padStart(2, "0")}`)
        for (const requestId of ids) yield* submit(served, { request: "quote", requestId })
        const newest = [...ids].reverse()
        const browser = yield* launch
        const { page } = yield* openPage(browser)
        yield* act(() => page.goto(`${served.url}/`))
        yield* listShows(page, newest.slice(0, 25))
        expect(yield* act(() => page.isDisabled("button:has-text('Newer')"))).toBe(true)
        yield* act(() => page.click("button:has-text('Older')"))
        yield* listShows(page, newest.slice(25))
        expect(yield* act(() => page.isDisabled("button:has-text('Older')"))).toBe(true)
        yield* act(() => page.click("button:has-text('Newer')"))
        yield* listShows(page, newest.slice(0, 25))
      }), 60_000)

    it.scopedLive(
      "the detail: Pre-Execution and Post-Execution cards, the plan's DAG, tools, model calls, operation hooks",
      () =>
        Effect.gen(function*() {
          const served = yield* serve()
          yield* submit(served, {
            request: "quote and forecast",
            requestId: "dag-1",
            metadata: { traceId: "4bf92f3577b34da6a3ce929d0e0e4736" }
          })
          const browser = yield* launch
          const { incidents, page } = yield* openPage(browser)
          yield* act(() => page.goto(`${served.url}/#/records/dag-1`))
          yield* act(() => page.waitForSelector(".post-execution .invocation"))
          expect(yield* text(page, ".record-status")).toBe("succeeded")
          expect(yield* text(page, ".record-head .request-text")).toBe("quote and forecast")
          // The trace id, linked through the configured template.
          expect(yield* act(() => page.getAttribute(".trace a", "href"))).toBe(
            "http://jaeger.test/trace/4bf92f3577b34da6a3ce929d0e0e4736"
          )

          // Pre-Execution: BeforePlanning cards (with the enrichment), the boundary's decision under AfterPlanning.
          const before = ".pre-execution [data-stage=before_planning]"
          expect(yield* texts(page, `${before} > .invocation .hook-name`)).toEqual(["desk-context", "live-audit"])
          expect(yield* text(page, `${before} [data-hook=desk-context] .enrichments dt`)).toBe("rag_context (added)")
          expect(yield* text(page, `${before} [data-hook=desk-context] .enrichments pre`)).toBe(
            "Desk notes: quotes are delayed 15 minutes."
          )
          expect(yield* text(page, `${before} [data-hook=desk-context] .decision`)).toBe("Decision not recorded")
          const after = ".pre-execution [data-stage=after_planning]"
          expect(yield* texts(page, `${after} .hook-name`)).toEqual(["plan-policy"])
          expect(yield* text(page, `${after} .decision`)).toBe("Decision fail_closed / continue / accepted")

          // The plan as a DAG: q1 and q2 in the first column, w1 after both.
          const box = (id: string) =>
            act(() => page.locator(`svg.dag g[data-step-id="${id}"] rect`).evaluate((r) => Number(r.getAttribute("x"))))
          const [q1, q2, w1] = [yield* box("q1"), yield* box("q2"), yield* box("w1")]
          expect(q1).toBe(q2)
          expect(w1).toBeGreaterThan(q1)
          expect(yield* act(() => page.locator("svg.dag path.edge").count())).toBe(2)
          expect(yield* act(() => page.getAttribute("svg.dag g[data-step-id=w1]", "class"))).toBe(
            "node status-succeeded"
          )

          // Tool inputs and outputs.
          expect(yield* texts(page, "table.tools tbody tr td:first-child")).toEqual(["q1", "q2", "w1"])
          expect(JSON.parse(yield* text(page, "tr[data-step-id=q1] .tool-input"))).toEqual({ symbol: "ACME" })
          expect(JSON.parse(yield* text(page, "tr[data-step-id=w1] .tool-output"))).toMatchObject({ city: "Lisbon" })

          // Post-Execution: the audit effect under AfterExecution, the AfterSynthesis card.
          const execution = ".post-execution [data-stage=after_execution]"
          expect(
            yield* text(page, `${execution} [data-hook=application-audit] [data-effect-id=audit-write] .effect-status`)
          )
            .toBe("succeeded")
          expect(JSON.parse(yield* text(page, `${execution} [data-effect-id=audit-write] pre`))).toEqual({
            step_count: 3
          })
          expect(yield* texts(page, ".post-execution [data-stage=after_synthesis] .hook-name")).toEqual(["xss-failure"])

          // Operation hooks: the tool-call guard (once per tool call) and the inference observer.
          const runs = yield* act(() =>
            page.locator(".operation-runs .invocation").evaluateAll((cards) =>
              cards.map((c) => `${c.getAttribute("data-stage")}:${c.getAttribute("data-hook")}`)
            )
          )
          expect(runs.filter((r) => r === "guard_tool_call:no-guarded-echo")).toHaveLength(3)
          expect(runs.filter((r) => r === "around_inference:model-observer").length).toBeGreaterThanOrEqual(2)

          // Model calls: prompt, raw output, tokens, timing; the raw draft apart from the final response.
          expect(yield* texts(page, ".model-call .hook-name")).toEqual(["planning · phase 1", "synthesis"])
          // The scripted model reports no usage (the demo's offline model does: test/browser/ViewerDemo.test.ts).
          expect(yield* text(page, ".model-call:first-child .field:has-text('Tokens')")).toBe("Tokens not reported")
          expect(yield* text(page, ".model-call:first-child .field:has-text('Timing')")).toMatch(
            /^Timing \d{4}-.* · \d/
          )
          expect(yield* text(page, ".model-call:first-child .prompt pre")).toContain("<user_request>")
          expect(JSON.parse(yield* text(page, ".model-call:first-child .raw-output pre"))).toMatchObject({
            terminal: true
          })
          expect(yield* text(page, ".final-response pre")).toBe("Here is what the tools returned.")
          expect(yield* text(page, ".raw-draft pre")).toBe("Here is what the tools returned.")
          yield* screenshot(page, "detail")
          expect(incidents).toEqual({ dialogs: [], pageErrors: [], cspViolations: [], consoleErrors: [] })
        }),
      60_000
    )

    it.scopedLive(
      "a request the required boundary refused: its cards, no DAG, the failure",
      () =>
        Effect.gen(function*() {
          const served = yield* serve()
          yield* submit(served, { request: "trade ACME now", requestId: "denied-1" })
          const browser = yield* launch
          const { page } = yield* openPage(browser)
          yield* act(() => page.goto(`${served.url}/#/records/denied-1`))
          yield* act(() => page.waitForSelector(".pre-execution [data-hook=plan-policy]"))
          expect(yield* text(page, ".record-status")).toBe("failed")
          expect(yield* text(page, ".lifecycle-error")).toMatch(/^RequiredAfterPlanningError: .*trades are not allowed/)
          const card = ".pre-execution [data-stage=after_planning] [data-hook=plan-policy]"
          expect(yield* text(page, `${card} .card-head .badge`)).toBe("failed")
          expect(yield* text(page, `${card} .decision`)).toBe("Decision fail_closed / terminate / hook_error")
          expect(yield* text(page, `${card} .error-text`)).toContain("trades are not allowed by this application")
          expect(yield* text(page, ".phases")).toBe("No accepted plan (no tools ran).")
          expect(yield* act(() => page.locator("svg.dag").count())).toBe(0)
          expect(yield* text(page, ".post-execution [data-stage=after_execution]")).toBe("not recorded")
          expect(yield* text(page, ".post-execution [data-stage=after_synthesis]")).toBe("not recorded")
          yield* screenshot(page, "rejected")
        }),
      60_000
    )

    it.scopedLive(
      "while a request runs, its effect card changes status in place: one card, the same element",
      () =>
        Effect.gen(function*() {
          const served = yield* serve()
          const running = yield* Effect.fork(submit(served, { request: "hold please", requestId: "live-1" }))
          const browser = yield* launch
          const { incidents, page } = yield* openPage(browser)
          // The record exists from the request's start.
          yield* act(() => page.goto(`${served.url}/#/records/live-1`))
          const card = `[data-effect-id="${liveEffectId}"]`
          yield* act(() => page.waitForSelector(`${card} .effect-status:text-is("pending")`, { timeout: 10_000 }))
          expect(yield* text(page, ".record-status")).toBe("running")
          expect(yield* text(page, ".live-note")).toBe("live")
          yield* act(() => page.waitForSelector("svg.dag g.status-running[data-step-id=h1]", { timeout: 10_000 }))
          const element = yield* act(() => page.$(card))
          yield* screenshot(page, "live-pending")

          yield* Deferred.succeed(served.gates.effect, undefined)
          yield* act(() => page.waitForSelector(`${card} .effect-status:text-is("succeeded")`, { timeout: 10_000 }))
          expect(yield* act(() => page.locator(card).count())).toBe(1)
          // The very element that showed "pending" now shows "succeeded".
          expect(
            yield* act(() => element!.evaluate((e) => [e.isConnected, e.querySelector(".effect-status")?.textContent]))
          )
            .toEqual([true, "succeeded"])
          expect(yield* text(page, `${card} .field:has-text('Summary')`)).toBe("Summary audit writer acknowledged")
          expect(yield* text(page, ".record-status")).toBe("running")

          yield* Deferred.succeed(served.gates.tool, undefined)
          expect((yield* Fiber.join(running)).body["_tag"]).toBe("Completed")
          yield* act(() => page.waitForSelector(".record-status:text-is('succeeded')", { timeout: 10_000 }))
          expect(yield* act(() => page.locator(card).count())).toBe(1)
          expect(yield* act(() => element!.evaluate((e) => e.isConnected))).toBe(true)
          expect(yield* text(page, ".live-note")).toBe("")
          yield* screenshot(page, "live-done")
          expect(incidents).toEqual({ dialogs: [], pageErrors: [], cspViolations: [], consoleErrors: [] })
        }),
      60_000
    )
  })
}
