/**
 * The viewer shows the memory hooks' evidence (issue 22 "Done when"): an
 * offline agent with `MemoryHooks` records two requests in a SQLite file —
 * the weather in Lisbon (a tool call the recorder files) and a follow-up
 * answered from memory — the file is opened read-only (`ReadOnlyStore`, as
 * the `viewer` command does) behind `AgentServer.layerViewer`, and Chromium
 * shows, in the follow-up's page, the `memory-enrichment` card with its
 * effect cards (`memory_planning_context`, `memory_episodic_read`,
 * `memory_digest_window`) and the memory view it injected, and in the first
 * request's page the `memory-record` card with `episodic_memory_records` —
 * each effect's data as text. Screenshots go to `test-results/viewer/`.
 */
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Agent, MemoryHooks, OfflineModel, Pipeline } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { weatherForecast } from "../../examples/shared/DemoTools.js"
import * as ReadOnlyStore from "../../src/cli/internal/ReadOnlyStore.js"
import { act, browserUnavailable, launch, openPage, screenshot } from "../support/Browser.js"

const skipped = browserUnavailable()

const weather = "What's the weather forecast in Lisbon?"
const followUp = "Remind me what you found out about Lisbon."

/** Two requests of an offline agent with the memory hooks, recorded in `filename`; the store is closed after. */
const record = (filename: string) =>
  Effect.scoped(
    Effect.gen(function*() {
      const stores = Sqlite.layer({ filename })
      const agent = Agent.layer({
        model: OfflineModel.layer,
        tools: [weatherForecast],
        hooks: Effect.map(MemoryHooks.build({ domain: "travel", summarizer: "heuristic" }), (m) => m.hooks),
        executionStore: stores,
        checkpointStore: stores
      }).pipe(Layer.provideMerge(stores), Layer.orDie)
      const pipeline = yield* Effect.provide(Pipeline.Pipeline, yield* Layer.build(agent))
      yield* pipeline.process({ request: weather, requestId: "memory-1" })
      yield* pipeline.process({ request: followUp, requestId: "memory-2" })
    })
  )

/** The text of the first element matching `selector`. */
const text = (page: Page, selector: string) =>
  act(async () => ((await page.locator(selector).first().textContent()) ?? "").trim())

/** The data block of effect `effectId` in hook `hook`'s card, parsed back from the text the page shows. */
const effectData = (page: Page, hook: string, effectId: string) =>
  Effect.map(
    text(page, `[data-hook=${hook}] [data-effect-id=${effectId}] pre.data`),
    (shown) => JSON.parse(shown) as unknown
  )

if (skipped !== undefined) {
  describe("the viewer shows the memory effects", () => it.skip(`skipped: ${skipped}`, () => {}))
} else {
  describe("the viewer shows the memory effects", () => {
    it.scopedLive(
      "memory-enrichment and memory-record, with their effect cards and data as text",
      () =>
        Effect.gen(function*() {
          const folder = mkdtempSync(join(tmpdir(), "eap-viewer-memory-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(folder, { recursive: true, force: true })))
          const filename = join(folder, "memory.db")
          yield* record(filename)
          const server = yield* Layer.build(
            AgentServer.layerViewer({ port: 0, host: "127.0.0.1", rateLimit: false }).pipe(
              Layer.provide(ReadOnlyStore.layer(ReadOnlyStore.parse(filename))),
              Layer.orDie
            )
          )
          const address = Context.get(server, HttpServer.HttpServer).address
          if (address._tag !== "TcpAddress") return expect.unreachable(address._tag)
          const url = `http://127.0.0.1:${address.port}`
          const browser = yield* launch
          const { incidents, page } = yield* openPage(browser)

          // The follow-up: the enrichment read the event the first request filed.
          yield* act(() => page.goto(`${url}/#/records/memory-2`))
          const enrichment = "[data-hook=memory-enrichment]"
          yield* act(() =>
            page.waitForSelector(`${enrichment} [data-effect-id=${MemoryHooks.planningContextEffectId}]`)
          )
          for (
            const id of [
              MemoryHooks.planningContextEffectId,
              MemoryHooks.episodicReadEffectId,
              MemoryHooks.digestWindowEffectId
            ]
          ) {
            expect(yield* text(page, `${enrichment} [data-effect-id=${id}] .effect-status`), id).toBe("succeeded")
          }
          expect(yield* effectData(page, "memory-enrichment", MemoryHooks.planningContextEffectId)).toMatchObject({
            domain: "travel",
            entities: ["Lisbon"],
            section_count: 1,
            view: { outcome: "rendered", sections: { recent: 1, related: 0, knowledge: 0 } }
          })
          expect(yield* effectData(page, "memory-enrichment", MemoryHooks.episodicReadEffectId)).toMatchObject({
            status: "read_succeeded",
            returned_events: 1
          })
          expect(yield* effectData(page, "memory-enrichment", MemoryHooks.digestWindowEffectId)).toMatchObject({
            digest_path: "recent_window",
            cache_entry_found: true,
            returned_events: 1
          })
          // The view the planning prompt got is the hook's enrichment, shown as text.
          const injected = yield* text(page, `${enrichment} .enrichments pre`)
          expect(injected).toContain("Memory of earlier requests in domain \"travel\"")
          expect(injected).toContain("tool=weather_forecast; entities=Lisbon;")
          // The answer quotes the memory line.
          expect(yield* act(() => page.locator("body").textContent())).toContain("From earlier requests")
          yield* screenshot(page, "memory-enrichment")

          // The first request: the recorder filed its step.
          yield* act(() => page.goto(`${url}/#/records/memory-1`))
          const recorder = `[data-hook=memory-record] [data-effect-id=${MemoryHooks.recordsEffectId}]`
          yield* act(() => page.waitForSelector(recorder))
          expect(yield* text(page, `${recorder} .effect-status`)).toBe("succeeded")
          expect(yield* effectData(page, "memory-record", MemoryHooks.recordsEffectId)).toMatchObject({
            domain: "travel",
            steps: 1,
            submitted: 1,
            write_errors: 0,
            events: [{ step_id: "s1", event_id: "memory-1:s1", outcome: "succeeded", entities: ["Lisbon"] }]
          })
          yield* screenshot(page, "memory-record")

          expect(incidents.dialogs).toEqual([])
          expect(incidents.pageErrors).toEqual([])
          expect(incidents.cspViolations).toEqual([])
        }),
      90_000
    )
  })
}
