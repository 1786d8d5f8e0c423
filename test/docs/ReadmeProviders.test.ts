/**
 * The README's "Model providers" examples do what the README says, against
 * the local fake servers: `AGENT_MODEL` picks OpenAI (or a compatible
 * server) or Anthropic, `Anthropic.layerConfig` reads its key and base URL,
 * and the embeddings example answers the similarity it promises, offline and
 * over HTTP.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Console, Context, Effect, Layer } from "effect"
import { Embeddings, Pipeline } from "effect-agent-pipeline"
import * as EmbeddingsExample from "../../examples/readme/embeddings.js"
import * as ModelPolicyExample from "../../examples/readme/model-policy.js"
import * as Providers from "../../examples/readme/providers.js"
import * as FakeAnthropic from "../support/FakeAnthropic.js"
import * as FakeOpenAi from "../support/FakeOpenAi.js"
import { quoteStep } from "../support/Harness.js"

const withEnv = (env: Readonly<Record<string, string>>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ AGENT_STORE: "memory", ...env }))))

const answerOn = <E>(agent: Layer.Layer<Pipeline.Pipeline, E>) =>
  Effect.flatMap(Layer.build(agent), (context) =>
    Effect.map(
      Context.get(context, Pipeline.Pipeline).process({ request: "What is the stock quote for ACME?" }),
      (result) => (result._tag === "Completed" ? result.response.response : result._tag)
    ))

describe("README: model providers", () => {
  it.scoped("AgentLive: offline without configuration", () =>
    Effect.gen(function*() {
      expect(yield* withEnv({})(answerOn(Providers.AgentLive))).toContain("stock_quote")
    }))

  it.scoped("AgentLive: AGENT_MODEL=openai:<model> with OPENAI_BASE_URL (a compatible server, no key)", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.plan({ steps: [quoteStep("q1")] }), FakeOpenAi.text("ACME is up."))
      const answer = yield* withEnv({ AGENT_MODEL: "openai:qwen2.5:7b-instruct", OPENAI_BASE_URL: server.apiUrl })(
        answerOn(Providers.AgentLive)
      )
      expect(answer).toBe("ACME is up.")
      expect((yield* server.requests).map((r) => r.headers["authorization"])).toEqual([undefined, undefined])
    }))

  it.scoped("AgentLive: AGENT_MODEL=anthropic:<model>; ClaudeAgent reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(
        FakeAnthropic.plan({ steps: [quoteStep("q1")] }),
        FakeAnthropic.text("from AGENT_MODEL"),
        FakeAnthropic.plan({ steps: [] }),
        FakeAnthropic.text("from ClaudeAgent")
      )
      const env = { ANTHROPIC_BASE_URL: server.apiUrl, ANTHROPIC_API_KEY: "sk-ant-readme" }
      expect(yield* withEnv({ ...env, AGENT_MODEL: "anthropic:claude-sonnet-4-5" })(answerOn(Providers.AgentLive)))
        .toBe("from AGENT_MODEL")
      expect(yield* withEnv(env)(answerOn(Providers.ClaudeAgent))).toBe("from ClaudeAgent")
      const requests = yield* server.requests
      expect(requests.map((r) => r.headers["x-api-key"])).toEqual(Array.from({ length: 4 }, () => "sk-ant-readme"))
      expect(requests.every((r) => JSON.stringify(r.body).includes("\"model\":\"claude-sonnet-4-5\""))).toBe(true)
    }))

  it.effect("embeddings: the offline similarity the README states (≈ 0.75)", () =>
    Effect.gen(function*() {
      const similarity = yield* withEnv({})(EmbeddingsExample.program)
      expect(similarity).toBeCloseTo(0.75, 2)
    }))

  it.scoped("embeddings: AGENT_EMBEDDINGS=openai:<model> asks the server", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const similarity = yield* withEnv({
        AGENT_EMBEDDINGS: "openai:text-embedding-3-small",
        OPENAI_BASE_URL: server.apiUrl,
        OPENAI_API_KEY: "sk-readme"
      })(EmbeddingsExample.program)
      const [request] = yield* server.requests
      expect(request?.path).toBe("/v1/embeddings")
      const dims = FakeOpenAi.EMBEDDING_DIMENSIONS
      expect(similarity).toBeCloseTo(
        Embeddings.cosine(
          Embeddings.embedOffline("weather in Paris", dims),
          Embeddings.embedOffline("Paris weather forecast", dims)
        ),
        12
      )
    }))

  it.scoped("Timeouts, retries, re-asks and fallback: the primary refuses (400, not retried), the offline fallback answers; the record keeps the calls' metadata, no prompt", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.error(400, "model not found"), FakeOpenAi.error(400, "model not found"))
      const lines: Array<string> = []
      const run = Effect.gen(function*() {
        const context = yield* Layer.build(ModelPolicyExample.AgentLive)
        const result = yield* Context.get(context, Pipeline.Pipeline).process({
          request: "What is the stock quote for ACME?",
          requestId: "readme-policy"
        })
        expect(result._tag === "Completed" && result.response.response).toContain("stock_quote")
        const base = yield* Effect.console
        yield* ModelPolicyExample.printModelCalls("readme-policy").pipe(
          Effect.provide(context),
          Console.withConsole({
            ...base,
            log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.map(String).join(" ")))
          })
        )
      })
      yield* withEnv({ OPENAI_BASE_URL: server.apiUrl, OPENAI_API_KEY: "sk-readme" })(run)
      expect(lines.map((line) => line.replace(/, \d+ in \/ \d+ out/, ", N in / N out"))).toEqual([
        expect.stringMatching(/^planning \(re-ask 0\) attempt 1 on primary: failed, no usage — .*400/),
        "planning (re-ask 0) attempt 1 on fallback: succeeded, N in / N out",
        expect.stringMatching(/^synthesis \(re-ask 0\) attempt 1 on primary: failed, no usage — .*400/),
        "synthesis (re-ask 0) attempt 1 on fallback: succeeded, N in / N out"
      ])
      expect(yield* server.requests).toHaveLength(2)
    }))
})
