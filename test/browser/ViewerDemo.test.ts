/**
 * The viewer over the demo's records, as a user sees it after `npm start`:
 * the demo runs in a fresh folder (its `./data/agent.db`), the store is
 * opened read-only (`ReadOnlyStore`, as the `viewer` command does) behind
 * `AgentServer.layerViewer`, and Chromium shows the list and a request's
 * detail — with the offline model's token counts, and the suspended
 * conversion without decision buttons. The screenshots are kept in
 * `test-results/viewer/`; with `EAP_UPDATE_SCREENSHOTS=1` they also replace
 * the README's `docs/images/viewer-list.png` and `viewer-detail.png`.
 */
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as AgentServer from "effect-agent-pipeline/server"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Page } from "playwright-core"
import * as ReadOnlyStore from "../../src/cli/internal/ReadOnlyStore.js"
import { act, browserUnavailable, launch, openPage, screenshot } from "../support/Browser.js"

const skipped = browserUnavailable()
const root = fileURLToPath(new URL("../../", import.meta.url))
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm")).href
const updateDocs = process.env["EAP_UPDATE_SCREENSHOTS"] === "1"

/** `npm start`'s program, run in `cwd` (its records go to `cwd/data/agent.db`). */
const runDemo = (cwd: string) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) => {
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) =>
          !/^(AGENT_|SQLITE_PATH$|DATABASE_URL$|ACTIVITY_STORE$|OTEL_)/.test(name)
        )
      )
      const child = spawn(process.execPath, ["--import", tsx, join(root, "examples/demo/main.ts")], {
        cwd,
        env: { ...env, TSX_TSCONFIG_PATH: join(root, "tsconfig.json") },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let err = ""
      child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")))
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the demo failed (${code}): ${err}`))))
    })
  )

/** The page's viewport as a docs image (the README shows the top of the page). */
const docsImage = (page: Page, name: string) =>
  updateDocs ? act(() => page.screenshot({ path: join(root, "docs", "images", `${name}.png`) })) : Effect.void

const text = (page: Page, selector: string) =>
  act(async () => ((await page.locator(selector).first().textContent()) ?? "").trim())

if (skipped !== undefined) {
  describe("the viewer over the demo's records", () => it.skip(`skipped: ${skipped}`, () => {}))
} else {
  describe("the viewer over the demo's records", () => {
    it.scopedLive("list and detail, read-only, with the offline model's tokens", () =>
      Effect.gen(function*() {
        const folder = mkdtempSync(join(tmpdir(), "eap-viewer-demo-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(folder, { recursive: true, force: true })))
        yield* runDemo(folder)
        const server = yield* Layer.build(
          AgentServer.layerViewer({ port: 0, host: "127.0.0.1", rateLimit: false }).pipe(
            Layer.provide(ReadOnlyStore.layer(ReadOnlyStore.parse(join(folder, "data", "agent.db")))),
            Layer.orDie
          )
        )
        const address = Context.get(server, HttpServer.HttpServer).address
        if (address._tag !== "TcpAddress") return expect.unreachable(address._tag)
        const url = `http://127.0.0.1:${address.port}`
        const browser = yield* launch
        const { incidents, page } = yield* openPage(browser)

        yield* act(() => page.goto(`${url}/`))
        yield* act(() => page.waitForSelector("table.records tbody tr:nth-child(5)"))
        expect(yield* act(() => page.locator("table.records tbody tr").count())).toBe(5)
        expect(yield* text(page, "#banner")).toBe("read-only")
        yield* screenshot(page, "demo-list")
        yield* docsImage(page, "viewer-list")

        yield* act(() => page.click("tr:has-text('What is the stock quote for ACME?') a.open"))
        yield* act(() => page.waitForSelector(".post-execution [data-effect-id=audit-write]"))
        expect(yield* text(page, "[data-hook=allowed-operations] .decision")).toBe(
          "Decision fail_closed / continue / accepted"
        )
        expect(yield* text(page, "[data-hook=desk-context] .enrichments pre")).toBe(
          "Desk notes for demo-user: quotes are delayed 15 minutes."
        )
        expect(yield* text(page, ".model-call:first-child .field:has-text('Tokens')")).toMatch(
          /^Tokens \d+ in · \d+ out · \d+ total$/
        )
        yield* screenshot(page, "demo-detail")
        yield* docsImage(page, "viewer-detail")

        // The conversion waits for a human; a read-only viewer offers no decision.
        yield* act(() => page.goto(`${url}/#/`))
        yield* act(() => page.click("tr:has-text('Convert 100 USD to EUR') a.open"))
        yield* act(() => page.waitForSelector(".record-status:text-is('suspended')"))
        yield* act(() => page.waitForSelector(".suspended-panel .approval > :not(.muted)"))
        expect(yield* act(() => page.locator(".suspended-panel button").count())).toBe(0)
        expect(incidents.dialogs).toEqual([])
        expect(incidents.pageErrors).toEqual([])
        expect(incidents.cspViolations).toEqual([])
      }), 90_000)
  })
}
