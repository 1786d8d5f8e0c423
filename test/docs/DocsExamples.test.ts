/**
 * The documentation's programs do what their pages say: each example under
 * `examples/readme/` that ends with `NodeRuntime.runMain` is run here, against
 * `src/`, and prints exactly the text block its page shows after it ("It
 * prints:"). The programs that need a server (a provider, PostgreSQL) run in
 * `DocsBackends.test.ts`; the testing recipe (`agent.test.ts`) is itself a
 * test; the package test runs them all again from the packed tarball.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import { isProgram, shownExamples } from "./DocPages.js"
import { type Captured, load, printed, withConfig } from "./RunExample.js"

const captured = vi.hoisted((): Captured => [])
// `NodeRuntime.runMain` hands the programs' effects over instead of running them.
vi.mock(
  "@effect/platform-node",
  async (importOriginal) => (await import("./RunExample.js")).mockRunMain(captured)(importOriginal)
)

/** Programs that need a server or another configuration: `DocsBackends.test.ts`. */
const ELSEWHERE = new Set([
  "examples/readme/deploy-config.ts",
  "examples/readme/deploy-postgres.ts",
  "examples/readme/durable-postgres.ts",
  "examples/readme/model-policy.ts"
])

const programs = shownExamples().filter((shown) =>
  !shown.example.endsWith(".test.ts") && isProgram(shown.example) && !ELSEWHERE.has(shown.example)
)

describe("every program prints what its page says", () => {
  it("there are programs to run", () => {
    expect(programs.length).toBeGreaterThanOrEqual(14)
  })

  for (const shown of programs) {
    const file = shown.example.split("/").at(-1)!
    it.live(`${shown.page}: ${file}`, () =>
      Effect.gen(function*() {
        const { main } = yield* load(captured, file)
        // No environment variable of the machine's: the examples' defaults.
        const output = yield* printed(main).pipe(withConfig({}))
        expect(output, `${file}, shown in ${shown.page} line ${shown.line}`).toBe(shown.prints)
      }))
  }
})

describe("the modules the pages show", () => {
  it.live("telemetry.ts: without OTEL_EXPORTER_OTLP_ENDPOINT the program answers and exports nothing", () =>
    Effect.gen(function*() {
      const { program } = yield* Effect.promise(() => import("../../examples/readme/telemetry.js"))
      const result = yield* program.pipe(withConfig({}))
      expect(result._tag).toBe("Completed")
    }))

  it.live("user-profile.ts: the hook's block reaches the planning prompt, every fact escaped", () =>
    Effect.gen(function*() {
      const { profile } = yield* Effect.promise(() => import("../../examples/readme/user-profile.js"))
      const { Agent, Pipeline, PromptBuilder } = yield* Effect.promise(() => import("effect-agent-pipeline"))
      const prompts = yield* Effect.gen(function*() {
        const pipeline = yield* Pipeline.Pipeline
        yield* pipeline.process({ request: "Weather in Lisbon?", metadata: { user_id: "ada" } })
        return (yield* Agent.TestAgent).prompts
      }).pipe(
        Effect.provide(
          Agent.layerTest({ tools: [], hooks: [profile], script: { plans: [{ steps: [] }], synthesis: "" } })
        )
      )
      const block = PromptBuilder.readSection(prompts[0]!.prompt, "user_profile")
      expect(block).toContain("prefers Celsius")
      expect(prompts[0]!.prompt).not.toContain("</user_profile><instructions>")
    }))
})
