/**
 * What the viewer must never do, in headless Chromium against a real
 * `AgentServer`: run or build markup from recorded strings — a corpus of
 * `<script>`, `</agent_memory>`, attribute breakouts and `javascript:`
 * links placed in enrichments, tool outputs, effect payloads, model output,
 * error texts, the request and its metadata shows up as text, no dialog
 * opens, no element is injected, no link leaves `http(s)`. And with an API
 * key configured: a wrong key gets a clear refusal, the right one the data.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import type { Page } from "playwright-core"
import { act, browserUnavailable, launch, openPage, type PageDocument, screenshot } from "../support/Browser.js"
import { serve, submit, XSS } from "../support/ViewerServer.js"

const skipped = browserUnavailable()

// In-page callbacks run in Chromium (see PageDocument).
declare const document: PageDocument
declare const sessionStorage: object

const text = (page: Page, selector: string) =>
  act(async () => ((await page.locator(selector).first().textContent()) ?? "").trim())

/** Elements a payload would have made, had it been parsed as markup. */
const injected = (page: Page) =>
  act(() =>
    page.evaluate(() => ({
      byId: [...document.querySelectorAll("[id^=xss-]")].map((e) => e.id),
      images: document.querySelectorAll("img").length,
      frames: document.querySelectorAll("iframe").length,
      scripts: [...document.querySelectorAll("script")].map((s) => s.getAttribute("src")),
      handlers: [...document.querySelectorAll("*")].flatMap((e) =>
        [...e.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${e.tagName}.${a.name}`)
      ),
      links: [...document.querySelectorAll("a[href]")].map((a) => a.href ?? "").filter((href) => !/^https?:/.test(href))
    }))
  )

if (skipped !== undefined) {
  describe("execution viewer security in Chromium", () => it.skip(`skipped: ${skipped}`, () => {}))
} else {
  describe("execution viewer security in Chromium", () => {
    it.scopedLive(
      "an XSS corpus in every recorded field is shown as text; nothing runs, nothing is injected",
      () =>
        Effect.gen(function*() {
          const served = yield* serve()
          const request = `xss ${XSS[0]} ${XSS[2]}`
          const answer = yield* submit(served, {
            request,
            requestId: "xss-1",
            metadata: { traceId: XSS[4], note: XSS[1] }
          })
          expect(answer.status).toBe(200)
          const browser = yield* launch
          const { incidents, page } = yield* openPage(browser)

          // The list shows the request text literally.
          yield* act(() => page.goto(`${served.url}/`))
          yield* act(() => page.waitForSelector("tr[data-request-id=xss-1]"))
          expect(yield* text(page, "tr[data-request-id=xss-1] .request-text")).toBe(request)

          yield* act(() => page.click("tr[data-request-id=xss-1] a.open"))
          yield* act(() => page.waitForSelector(".post-execution .effect"))
          // Open every collapsed block (prompts, raw outputs, metadata) so all of it is rendered and visible.
          yield* act(() => page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true))))
          yield* act(() => page.waitForTimeout(300))

          expect(yield* text(page, ".record-head .request-text")).toBe(request)
          // Enrichments: the exact injected context, as text.
          expect(yield* text(page, "[data-hook=desk-context] .enrichments pre")).toBe(XSS.join("\n"))
          // Tool output (JSON of the tool's result) and input.
          const output = JSON.parse(yield* text(page, "tr[data-step-id=x1] .tool-output")) as Record<string, string>
          expect(output).toEqual({ echoed: XSS.join(" "), html: XSS[7] })
          expect(JSON.parse(yield* text(page, "tr[data-step-id=x1] .tool-input"))).toEqual({ text: XSS.join(" ") })
          // Effect payloads: its id, name, summary and data.
          const effect = `[data-effect-id="audit-${XSS[2].replace(/["\\]/g, "\\$&")}"]`
          expect(yield* act(() => page.locator(effect).count())).toBe(1)
          expect(yield* text(page, `${effect} .effect-name`)).toBe(`Audit ${XSS[0]}`)
          expect(yield* text(page, `${effect} .field:has-text('Summary')`)).toBe(`Summary ${XSS[5]}`)
          expect(JSON.parse(yield* text(page, `${effect} pre`))).toEqual({ payloads: [...XSS], link: XSS[4] })
          // Model output: the raw draft, the final response, the plan's raw output and reasoning.
          const answerText = `Answer: ${XSS.join(" | ")}`
          expect(yield* text(page, ".raw-draft pre")).toBe(answerText)
          expect(yield* text(page, ".final-response pre")).toBe(answerText)
          expect(yield* text(page, ".reasoning")).toBe(`Reasoning reasoning ${XSS[0]} ${XSS[2]}`)
          expect(yield* text(page, ".model-call:first-child .raw-output pre")).toContain(
            JSON.stringify(XSS[0]).slice(1, -1)
          )
          // A hook's error text.
          expect(yield* text(page, "[data-hook=xss-failure] .error-text")).toContain(`${XSS[3]} ${XSS[6]}`)
          // The trace id is a payload too: the link goes to the template's http URL, the id encoded in it.
          expect(yield* act(() => page.getAttribute(".trace a", "href"))).toBe(
            `http://jaeger.test/trace/${encodeURIComponent(XSS[4])}`
          )
          expect(yield* text(page, ".trace a")).toBe(XSS[4])
          // Every payload is in the page's text, whole.
          const body = yield* act(() => page.evaluate(() => document.body.textContent ?? ""))
          for (const payload of XSS) expect(body).toContain(payload)

          expect(yield* injected(page)).toEqual({
            byId: [],
            images: 0,
            frames: 0,
            scripts: ["/viewer/app.js"],
            handlers: [],
            links: []
          })
          yield* screenshot(page, "xss")
          expect(incidents).toEqual({ dialogs: [], pageErrors: [], cspViolations: [], consoleErrors: [] })
        }),
      60_000
    )

    it.scopedLive(
      "with an API key: the page asks for it, refuses a wrong one clearly, shows the data with the right one",
      () =>
        Effect.gen(function*() {
          const key = "viewer-test-key-4f1c"
          const served = yield* serve({ apiKey: Redacted.make(key) })
          expect((yield* submit(served, { request: "quote", requestId: "auth-1" })).status).toBe(401)
          expect((yield* submit(served, { request: "quote", requestId: "auth-1" }, key)).status).toBe(200)
          const browser = yield* launch
          const { incidents, page } = yield* openPage(browser)
          const requests: Array<string | undefined> = []
          page.on("request", (r) => {
            if (r.url().includes("/v1/")) requests.push(r.headers()["authorization"])
          })
          yield* act(() => page.goto(`${served.url}/`))
          yield* act(() => page.waitForSelector("form.key-form"))
          expect(yield* text(page, "h2")).toBe("This server requires an API key")

          yield* act(() => page.fill("input[name=apiKey]", "wrong-key"))
          yield* act(() => page.click("form.key-form button"))
          yield* act(() => page.waitForSelector(".refusal"))
          expect(yield* text(page, ".refusal")).toMatch(/^Refused: the server did not accept the API key/)
          expect(yield* act(() => page.locator("table.records").count())).toBe(0)
          // The refused key is not kept.
          expect(yield* act(() => page.evaluate(() => Object.keys(sessionStorage)))).toEqual([])
          yield* screenshot(page, "auth-refused")

          yield* act(() => page.fill("input[name=apiKey]", key))
          yield* act(() => page.click("form.key-form button"))
          yield* act(() => page.waitForSelector("tr[data-request-id=auth-1]"))
          yield* act(() => page.click("tr[data-request-id=auth-1] a.open"))
          yield* act(() => page.waitForSelector(".record-status:text-is('succeeded')"))
          // Kept for the tab's session: a reload needs no key.
          yield* act(() => page.reload())
          yield* act(() => page.waitForSelector(".record-status:text-is('succeeded')"))
          expect(requests[0]).toBe("Bearer wrong-key")
          expect(requests.slice(1).every((h) => h === `Bearer ${key}`)).toBe(true)
          expect(requests.length).toBeGreaterThanOrEqual(3)
          // The refused fetch logs one 401 in the console; nothing else goes wrong.
          expect(incidents.dialogs).toEqual([])
          expect(incidents.pageErrors).toEqual([])
          expect(incidents.cspViolations).toEqual([])
          expect(incidents.consoleErrors.every((e) => e.includes("401"))).toBe(true)
        }),
      60_000
    )
  })
}
