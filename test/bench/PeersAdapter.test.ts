/**
 * The bench-peers adapter (`bench/peers/eap-adapter.mjs`) still drives the
 * library's public API: built against the sources, it answers the expected
 * redacted text and every counter (model calls, enrichment and tool result
 * seen by the model, each hook instance) matches what it declares —
 * the checks bench-peers itself makes before timing anything.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import path from "node:path"
import { pathToFileURL } from "node:url"

interface Counters {
  [key: string]: number | Uint32Array
}

interface Scenario {
  readonly run: () => Promise<string>
  readonly expected: Readonly<Record<string, number>>
}

interface AdapterModule {
  readonly build: (H: number, C: Counters, options: unknown) => Promise<Scenario>
}

const root = path.resolve(__dirname, "../..")

/** Where the adapter finds the library (the sources here) and its dependencies. */
const locate = () => ({
  root,
  version: "test",
  mainUrl: pathToFileURL(path.join(root, "src/index.ts")).href,
  dep: (name: string) => {
    const pj = path.join(root, "node_modules", name, "package.json")
    const pkg: { version: string; exports: Record<string, { import?: { default?: string } | string }> } = JSON.parse(
      readFileSync(pj, "utf8")
    )
    const entry = pkg.exports["."]?.import
    const file = typeof entry === "string" ? entry : entry?.default
    return { url: pathToFileURL(path.join(path.dirname(pj), file ?? "dist/esm/index.js")).href, version: pkg.version }
  }
})

const SECRET = "SECRET"
const REDACTED = "[redacted]"
const CONTEXT_MARKER = "<<ENRICHED-CONTEXT>>"
const toolResultFor = (q: string) => `lookup-result(${q}): 42 widgets`
const finalAnswerFor = (toolResult: string) =>
  (`Final answer based on ${toolResult}. The ${SECRET} codename must not leak. ` + "filler ".repeat(40)).slice(0, 200)
const scenario = {
  CONTEXT_MARKER,
  CONTEXT_1KB: (CONTEXT_MARKER + " " + "ctx ".repeat(256)).slice(0, 1024),
  USER_MSG: "What does the lookup say about bench?",
  TOOL_Q: "bench",
  toolResultFor,
  finalAnswerFor,
  EXPECTED_FINAL: finalAnswerFor(toolResultFor("bench")).replaceAll(SECRET, REDACTED),
  redact: (s: string) => s.replaceAll(SECRET, REDACTED)
}

const counters = (H: number): Counters => ({
  model: 0,
  modelSawEnrichment: 0,
  modelSawToolResult: 0,
  tool: 0,
  enrich: 0,
  redact: 0,
  before: new Uint32Array(H),
  after: new Uint32Array(H),
  aroundTool: new Uint32Array(H)
})

const total = (value: number | Uint32Array | undefined): number =>
  value === undefined ? 0 : typeof value === "number" ? value : value.reduce((a, b) => a + b, 0)

describe("bench-peers adapter", () => {
  for (const handlers of ["sync", "effect"] as const) {
    for (const recording of [true, false]) {
      for (const H of [0, 3]) {
        it(`issue 7: ${handlers} handlers, H=${H}, recording ${recording ? "on" : "off"}: the expected answer and every counter, per hook instance`, async () => {
          const adapter: AdapterModule = await import(
            pathToFileURL(path.join(root, "bench/peers/eap-adapter.mjs")).href
          )
          const C = counters(H)
          // The adapter reads its handler style when it builds.
          if (handlers === "effect") process.env["EAP_HANDLERS"] = "effect"
          else delete process.env["EAP_HANDLERS"]
          const sc = await adapter.build(H, C, { recording, locate, scenario })
          delete process.env["EAP_HANDLERS"]
          for (const key of Object.keys(C)) {
            const value = C[key]
            if (typeof value === "number") C[key] = 0
            else value?.fill(0)
          }
          const requests = 5
          for (let i = 0; i < requests; i++) expect(await sc.run()).toBe(scenario.EXPECTED_FINAL)
          for (const [key, perRequest] of Object.entries(sc.expected)) {
            expect(total(C[key]), key).toBe(perRequest * requests)
            const value = C[key]
            // Each of the H instances fired its share.
            if (value instanceof Uint32Array) {
              for (const n of value) expect(n, key).toBe((perRequest / H) * requests)
            }
          }
          expect(sc.expected).toEqual({
            model: 2,
            modelSawEnrichment: 2,
            modelSawToolResult: 1,
            tool: 1,
            enrich: 1,
            redact: 1,
            before: 2 * H,
            after: 2 * H,
            aroundTool: H
          })
        })
      }
    }
  }
})
