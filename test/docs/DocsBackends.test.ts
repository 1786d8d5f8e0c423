/**
 * The documentation's programs that need a server or a configuration, run
 * against `src/`: the stores from configuration (a fresh SQLite file),
 * PostgreSQL and Redis, the model providers against the local fake OpenAI and
 * Anthropic servers, embeddings over HTTP, and the model policy whose primary
 * refuses. Each prints what its page says (where the page shows it).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Embeddings, Pipeline } from "effect-agent-pipeline"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { vi } from "vitest"
import { postgresUrl, redisUrl, unavailable } from "../support/Backends.js"
import * as FakeAnthropic from "../support/FakeAnthropic.js"
import * as FakeOpenAi from "../support/FakeOpenAi.js"
import { shownExamples } from "./DocPages.js"
import { type Captured, load, printed, withConfig } from "./RunExample.js"

import { freePort } from "../durable/crashHarness.js"
import { dropClusterTables } from "../durable/durableSupport.js"

const captured = vi.hoisted((): Captured => [])
// `NodeRuntime.runMain` hands the programs' effects over instead of running them.
vi.mock(
  "@effect/platform-node",
  async (importOriginal) => (await import("./RunExample.js")).mockRunMain(captured)(importOriginal)
)

const printsOf = (file: string): string => {
  const shown = shownExamples().find((s) => s.example === `examples/readme/${file}`)
  expect(shown?.prints, `the page of ${file} shows no output`).toBeDefined()
  return shown!.prints!
}

/** A plan step for the examples' quote tool (`examples/readme/tools.ts`). */
const quoteStep = {
  step_id: "q1",
  namespace: "market-data",
  agent: "stock-service",
  capability: "stock_quote",
  parameters: { symbol: "ACME" }
}

const answerOn = <E>(agent: Layer.Layer<Pipeline.Pipeline, E>) =>
  Effect.flatMap(Layer.build(agent), (context) =>
    Effect.map(
      Context.get(context, Pipeline.Pipeline).process({ request: "What is the stock quote for ACME?" }),
      (result) => (result._tag === "Completed" ? result.response.response : result._tag)
    ))

describe("docs/stores.md", () => {
  it.live("deploy-config.ts: SQLITE_PATH picks the file; the listing shows the one stored request", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-deploy-"))
      const { main } = yield* load(captured, "deploy-config.ts")
      const output = yield* printed(main).pipe(withConfig({ SQLITE_PATH: path.join(dir, "agent.db") }))
      expect(output).toMatch(/^[0-9a-f-]{36} succeeded$/)
      expect(fs.existsSync(path.join(dir, "agent.db"))).toBe(true)
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  const skipped = unavailable("postgres") ?? unavailable("redis")
  it.live.skipIf(skipped !== undefined)(
    `deploy-postgres.ts: PostgreSQL and Redis from DATABASE_URL and REDIS_URL${
      skipped ? ` (skipped: ${skipped})` : ""
    }`,
    () =>
      Effect.gen(function*() {
        const { main } = yield* load(captured, "deploy-postgres.ts")
        // Every process shares one checkpoint key (the page's deployment reads it from the environment).
        const key = "a1".repeat(32)
        const env = { DATABASE_URL: postgresUrl ?? "", REDIS_URL: redisUrl ?? "", AGENT_CHECKPOINT_KEY: key }
        expect(yield* printed(main).pipe(withConfig(env))).toBe(printsOf("deploy-postgres.ts"))
        // Without DATABASE_URL the agent's Layer fails with a ConfigError naming it.
        const missing = yield* Effect.flip(
          printed(main).pipe(withConfig({ REDIS_URL: redisUrl ?? "", AGENT_CHECKPOINT_KEY: key }))
        )
        expect(String(missing)).toContain("DATABASE_URL")
      })
  )
})

describe("docs/durable.md", () => {
  const skipped = unavailable("postgres")
  it.live.skipIf(skipped !== undefined)(
    `durable-postgres.ts: a runner of the PostgreSQL pool from DATABASE_URL and RUNNER_PORT${
      skipped ? ` (skipped: ${skipped})` : ""
    }`,
    () =>
      Effect.gen(function*() {
        const { main } = yield* load(captured, "durable-postgres.ts")
        const port = yield* Effect.promise(() => freePort())
        const env = {
          DATABASE_URL: postgresUrl ?? "",
          RUNNER_PORT: String(port),
          AGENT_CHECKPOINT_KEY: "a1".repeat(32)
        }
        expect(yield* printed(main).pipe(withConfig(env))).toBe(printsOf("durable-postgres.ts"))
      }).pipe(Effect.ensuring(Effect.promise(() => dropClusterTables("eap_cluster")))),
    60_000
  )
})

describe("docs/models.md", () => {
  it.scoped("providers.ts: AGENT_MODEL=openai:<model> with OPENAI_BASE_URL (a compatible server, no key)", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.plan({ steps: [quoteStep] }), FakeOpenAi.text("ACME is up."))
      const { main } = yield* load(captured, "providers.ts")
      const output = yield* printed(main).pipe(
        withConfig({ AGENT_STORE: "memory", AGENT_MODEL: "openai:qwen2.5:7b-instruct", OPENAI_BASE_URL: server.apiUrl })
      )
      expect(output).toBe("ACME is up.")
      expect((yield* server.requests).map((r) => r.headers["authorization"])).toEqual([undefined, undefined])
    }))

  it.scoped("providers.ts: AGENT_MODEL=anthropic:<model>; ClaudeAgent reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.plan({ steps: [quoteStep] }),
        FakeAnthropic.text("from AGENT_MODEL"),
        FakeAnthropic.plan({ steps: [] }),
        FakeAnthropic.text("from ClaudeAgent")
      )
      const { main, module } = yield* load(captured, "providers.ts")
      const env = { AGENT_STORE: "memory", ANTHROPIC_BASE_URL: server.apiUrl, ANTHROPIC_API_KEY: "sk-ant-docs" }
      expect(yield* printed(main).pipe(withConfig({ ...env, AGENT_MODEL: "anthropic:claude-sonnet-4-5" })))
        .toBe("from AGENT_MODEL")
      const ClaudeAgent = module["ClaudeAgent"] as Layer.Layer<Pipeline.Pipeline>
      expect(yield* answerOn(ClaudeAgent).pipe(withConfig(env))).toBe("from ClaudeAgent")
      const requests = yield* server.requests
      expect(requests.map((r) => r.headers["x-api-key"])).toEqual(Array.from({ length: 4 }, () => "sk-ant-docs"))
      expect(requests.every((r) => JSON.stringify(r.body).includes("\"model\":\"claude-sonnet-4-5\""))).toBe(true)
    }))

  it.scoped("embeddings.ts: AGENT_EMBEDDINGS=openai:<model> asks the server", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const { main } = yield* load(captured, "embeddings.ts")
      const output = yield* printed(main).pipe(withConfig({
        AGENT_EMBEDDINGS: "openai:text-embedding-3-small",
        OPENAI_BASE_URL: server.apiUrl,
        OPENAI_API_KEY: "sk-docs"
      }))
      expect((yield* server.requests).map((r) => r.path)).toEqual(["/v1/embeddings", "/v1/embeddings"])
      // The fake server embeds with the offline embedding at its own dimensions.
      const dims = FakeOpenAi.EMBEDDING_DIMENSIONS
      const cosine = (a: string, b: string) =>
        Embeddings.cosine(Embeddings.embedOffline(a, dims), Embeddings.embedOffline(b, dims)).toFixed(2)
      expect(output).toBe(
        `related: ${cosine("weather in Paris", "Paris weather forecast")}, unrelated: ${
          cosine("weather in Paris", "quarterly earnings report")
        }`
      )
    }))

  it.scoped("model-policy.ts: the primary refuses (400, not retried), the offline fallback answers; the record keeps the calls' metadata", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.error(400, "model not found"), FakeOpenAi.error(400, "model not found"))
      const { main } = yield* load(captured, "model-policy.ts")
      const output = yield* printed(main).pipe(
        withConfig({ OPENAI_BASE_URL: server.apiUrl, OPENAI_API_KEY: "sk-docs" })
      )
      expect(output).toBe(printsOf("model-policy.ts"))
      expect(yield* server.requests).toHaveLength(2)
    }))
})
