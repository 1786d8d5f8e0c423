/**
 * Model selection by configuration (`ModelConfig`): every `AGENT_MODEL` /
 * `AGENT_EMBEDDINGS` form, endpoint variables and their errors (a
 * `ConfigError` naming the variable), `Agent.layerConfig` picking the
 * configured provider (over HTTP to the fake servers), and the providers'
 * packages staying out of the static import graph of the main entry point.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Config, ConfigError, ConfigProvider, Context, Effect, Exit, Layer, Redacted } from "effect"
import { Agent, ModelConfig, OfflineModel, Pipeline, ProviderEndpoint } from "effect-agent-pipeline"
import { readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { fileURLToPath } from "node:url"
import { allTools } from "../../../examples/shared/DemoTools.js"
import * as FakeAnthropic from "../../support/FakeAnthropic.js"
import * as FakeChatCompletions from "../../support/FakeChatCompletions.js"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"
import { quoteStep } from "../../support/Harness.js"

const withEnv = (env: Readonly<Record<string, string>>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const read = <A>(config: Config.Config<A>, env: Readonly<Record<string, string>>) => withEnv(env)(Effect.either(config))

const configError = <A>(config: Config.Config<A>, env: Readonly<Record<string, string>>) =>
  withEnv(env)(Effect.flip(config))

/** The variables a ConfigError names (every leaf of an And / Or). */
const variablesOf = (error: ConfigError.ConfigError): ReadonlyArray<string> =>
  ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, left, right) => [...left, ...right],
    orCase: (_, left, right) => [...left, ...right],
    invalidDataCase: (_, path) => [path.join(".")],
    missingDataCase: (_, path) => [path.join(".")],
    sourceUnavailableCase: (_, path) => [path.join(".")],
    unsupportedCase: (_, path) => [path.join(".")]
  })

describe("AGENT_MODEL", () => {
  it.effect("offline by default; offline, openai:<model>, anthropic:<model> (the model name may contain ':')", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Record<string, string>, ModelConfig.ModelChoice]> = [
        [{}, { provider: "offline" }],
        [{ AGENT_MODEL: "offline" }, { provider: "offline" }],
        [{ AGENT_MODEL: "openai:gpt-4.1-mini" }, { provider: "openai", model: "gpt-4.1-mini" }],
        [{ AGENT_MODEL: "openai:qwen2.5:7b" }, { provider: "openai", model: "qwen2.5:7b" }],
        [{ AGENT_MODEL: " anthropic:claude-sonnet-4-5 " }, { provider: "anthropic", model: "claude-sonnet-4-5" }],
        [{ AGENT_MODEL: "openai-compat:qwen2.5:7b-instruct" }, {
          provider: "openai-compat",
          model: "qwen2.5:7b-instruct"
        }],
        [
          { AGENT_MODEL: "openai-compat:Qwen/Qwen2.5-7B-Instruct" },
          { provider: "openai-compat", model: "Qwen/Qwen2.5-7B-Instruct" }
        ]
      ]
      for (const [env, expected] of cases) {
        const result = yield* read(ModelConfig.model, env)
        expect(result._tag === "Right" && result.right, JSON.stringify(env)).toEqual(expected)
      }
    }))

  it.effect("anything else is a ConfigError naming AGENT_MODEL and the accepted forms", () =>
    Effect.gen(function*() {
      for (
        const value of [
          "gpt-4",
          "openai:",
          "openai: ",
          ":gpt-4",
          "azure:gpt-4",
          "OFFLINE",
          "",
          "openai-compat:",
          "compat:x"
        ]
      ) {
        const error = yield* configError(ModelConfig.model, { AGENT_MODEL: value })
        expect(variablesOf(error)).toEqual(["AGENT_MODEL"])
        expect(String(error)).toContain(
          "AGENT_MODEL must be one of offline, openai:<model>, anthropic:<model>, openai-compat:<model>"
        )
      }
    }))
})

describe("AGENT_EMBEDDINGS", () => {
  it.effect("offline by default, or openai:<model>; anthropic has no embeddings", () =>
    Effect.gen(function*() {
      expect(yield* Effect.orDie(read(ModelConfig.embeddings, {}))).toMatchObject({ right: { provider: "offline" } })
      expect(yield* Effect.orDie(read(ModelConfig.embeddings, { AGENT_EMBEDDINGS: "openai:text-embedding-3-small" })))
        .toMatchObject({ right: { provider: "openai", model: "text-embedding-3-small" } })
      const error = yield* configError(ModelConfig.embeddings, { AGENT_EMBEDDINGS: "anthropic:x" })
      expect(variablesOf(error)).toEqual(["AGENT_EMBEDDINGS"])
      expect(String(error)).toContain("AGENT_EMBEDDINGS must be one of offline, openai:<model>")
    }))
})

describe("provider endpoints", () => {
  it.effect("OpenAI: api.openai.com by default, where OPENAI_API_KEY is required", () =>
    Effect.gen(function*() {
      const missing = yield* configError(ProviderEndpoint.openAi, {})
      expect(variablesOf(missing)).toEqual(["OPENAI_API_KEY"])
      expect(String(missing)).toContain("OPENAI_API_KEY is required for https://api.openai.com/v1")
      expect(variablesOf(yield* configError(ProviderEndpoint.openAi, { OPENAI_API_KEY: "  " }))).toEqual([
        "OPENAI_API_KEY"
      ])
      const hosted = yield* Effect.orDie(withEnv({ OPENAI_API_KEY: "sk-1" })(ProviderEndpoint.openAi))
      expect(hosted.apiUrl).toBe("https://api.openai.com/v1")
      expect(hosted.apiKey && Redacted.value(hosted.apiKey)).toBe("sk-1")
      // The key is redacted wherever the endpoint is printed.
      expect(JSON.stringify(hosted)).not.toContain("sk-1")
    }))

  it.effect("OpenAI-compatible servers: OPENAI_BASE_URL without a key; a bad URL names OPENAI_BASE_URL", () =>
    Effect.gen(function*() {
      const local = yield* Effect.orDie(
        withEnv({ OPENAI_BASE_URL: "http://localhost:11434/v1/" })(ProviderEndpoint.openAi)
      )
      expect(local).toEqual({ apiUrl: "http://localhost:11434/v1", apiKey: undefined })
      for (const url of ["localhost:11434/v1", "ftp://example.com/v1", "not a url"]) {
        const error = yield* configError(ProviderEndpoint.openAi, { OPENAI_BASE_URL: url, OPENAI_API_KEY: "k" })
        expect(variablesOf(error)).toEqual(["OPENAI_BASE_URL"])
        expect(String(error)).toContain("OPENAI_BASE_URL must be an http(s) URL")
      }
    }))

  it.effect("Anthropic: api.anthropic.com by default, where ANTHROPIC_API_KEY is required; ANTHROPIC_BASE_URL", () =>
    Effect.gen(function*() {
      expect(variablesOf(yield* configError(ProviderEndpoint.anthropic, {}))).toEqual(["ANTHROPIC_API_KEY"])
      const hosted = yield* Effect.orDie(withEnv({ ANTHROPIC_API_KEY: "sk-ant" })(ProviderEndpoint.anthropic))
      expect(hosted.apiUrl).toBe("https://api.anthropic.com")
      const proxy = yield* Effect.orDie(
        withEnv({ ANTHROPIC_BASE_URL: "http://proxy:8080" })(ProviderEndpoint.anthropic)
      )
      expect(proxy).toEqual({ apiUrl: "http://proxy:8080", apiKey: undefined })
      expect(variablesOf(yield* configError(ProviderEndpoint.anthropic, { ANTHROPIC_BASE_URL: "proxy" }))).toEqual([
        "ANTHROPIC_BASE_URL"
      ])
    }))

  it.effect("the chosen provider's endpoint is read only when it is chosen", () =>
    Effect.gen(function*() {
      // No key anywhere: fine for the offline model, an error naming the key for openai.
      const offline = yield* withEnv({})(Effect.flatMap(ModelConfig.model, ModelConfig.layerLanguageModelFor))
      expect(Layer.isLayer(offline)).toBe(true)
      const openai = yield* withEnv({ AGENT_MODEL: "openai:gpt-x" })(
        Effect.flip(Effect.flatMap(ModelConfig.model, ModelConfig.layerLanguageModelFor))
      )
      expect(variablesOf(openai)).toEqual(["OPENAI_API_KEY"])
      const anthropic = yield* withEnv({ AGENT_MODEL: "anthropic:claude-x" })(
        Effect.flip(Effect.flatMap(ModelConfig.model, ModelConfig.layerLanguageModelFor))
      )
      expect(variablesOf(anthropic)).toEqual(["ANTHROPIC_API_KEY"])
      // openai-compat reads the OpenAI endpoint: api.openai.com by default, where the key is required.
      const compat = yield* withEnv({ AGENT_MODEL: "openai-compat:gpt-x" })(
        Effect.flip(Effect.flatMap(ModelConfig.model, ModelConfig.layerLanguageModelFor))
      )
      expect(variablesOf(compat)).toEqual(["OPENAI_API_KEY"])
    }))
})

// ---------------------------------------------------------------------------
// Agent.layerConfig picks the configured model
// ---------------------------------------------------------------------------

const processWith = (env: Readonly<Record<string, string>>, request: string) =>
  withEnv({ AGENT_STORE: "memory", ...env })(
    Effect.flatMap(
      Layer.build(Agent.layerConfig({ tools: allTools })),
      (context) => Context.get(context, Pipeline.Pipeline).process({ request })
    )
  )

describe("Agent.layerConfig: the model from AGENT_MODEL", () => {
  it.scoped("offline by default: no provider, no key, no network", () =>
    Effect.gen(function*() {
      const result = yield* processWith({}, "What is the stock quote for ACME?")
      expect(result._tag === "Completed" && result.response.response).toContain("stock_quote")
    }))

  it.scoped("openai:<model> on OPENAI_BASE_URL with OPENAI_API_KEY", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.plan({ steps: [quoteStep("q1")] }), FakeOpenAi.text("from the configured model"))
      const result = yield* processWith(
        { AGENT_MODEL: "openai:gpt-configured", OPENAI_BASE_URL: server.apiUrl, OPENAI_API_KEY: "sk-configured" },
        "quote ACME"
      )
      expect(result._tag === "Completed" && result.response.response).toBe("from the configured model")
      const requests = yield* server.requests
      expect(requests.map((r) => [r.path, r.headers["authorization"]])).toEqual([
        ["/v1/responses", "Bearer sk-configured"],
        ["/v1/responses", "Bearer sk-configured"]
      ])
      expect(requests.every((r) =>
        typeof r.body === "object" && r.body !== null && "model" in r.body && r.body.model === "gpt-configured"
      ))
        .toBe(true)
    }))

  it.scoped("anthropic:<model> on ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY", () =>
    Effect.gen(function*() {
      const server = yield* FakeAnthropic.make
      yield* server.enqueue(FakeAnthropic.plan({ steps: [quoteStep("q1")] }), FakeAnthropic.text("from claude"))
      const result = yield* processWith(
        {
          AGENT_MODEL: "anthropic:claude-configured",
          ANTHROPIC_BASE_URL: server.apiUrl,
          ANTHROPIC_API_KEY: "sk-ant-cfg"
        },
        "quote ACME"
      )
      expect(result._tag === "Completed" && result.response.response).toBe("from claude")
      const requests = yield* server.requests
      expect(requests.map((r) => r.headers["x-api-key"])).toEqual(["sk-ant-cfg", "sk-ant-cfg"])
    }))

  it.scopedLive("openai-compat:<model> on OPENAI_BASE_URL (a Chat Completions server), with or without OPENAI_API_KEY", () =>
    Effect.gen(function*() {
      const server = yield* FakeChatCompletions.make("ollama")
      yield* server.enqueue(
        FakeChatCompletions.plan("ollama", { steps: [quoteStep("q1")] }),
        FakeChatCompletions.text("ollama", "from the compatible server"),
        FakeChatCompletions.plan("ollama", { steps: [] }),
        FakeChatCompletions.text("ollama", "without a key")
      )
      const env = { AGENT_MODEL: "openai-compat:qwen2.5:7b", OPENAI_BASE_URL: `${server.apiUrl}/` }
      const result = yield* processWith({ ...env, OPENAI_API_KEY: "sk-compat-configured" }, "quote ACME")
      expect(result._tag === "Completed" && result.response.response).toBe("from the compatible server")
      const keyless = yield* processWith(env, "hi")
      expect(keyless._tag === "Completed" && keyless.response.response).toBe("without a key")
      const requests = yield* server.requests
      expect(requests.map((r) => [r.path, r.headers["authorization"]])).toEqual([
        ["/v1/chat/completions", "Bearer sk-compat-configured"],
        ["/v1/chat/completions", "Bearer sk-compat-configured"],
        ["/v1/chat/completions", undefined],
        ["/v1/chat/completions", undefined]
      ])
      expect(requests.map((r) => typeof r.body === "object" && r.body !== null && "model" in r.body && r.body.model))
        .toEqual(Array(4).fill("qwen2.5:7b"))
    }))

  it.scoped("a bad AGENT_MODEL fails the agent's Layer with a ConfigError naming it", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(processWith({ AGENT_MODEL: "gpt-4" }, "hi"))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(ConfigError.isConfigError(error) && variablesOf(error)).toEqual(["AGENT_MODEL"])
    }))

  it.scoped("a given model wins: AGENT_MODEL is not read", () =>
    Effect.gen(function*() {
      const context = yield* withEnv({ AGENT_STORE: "memory", AGENT_MODEL: "not valid" })(
        Layer.build(Agent.layerConfig({ tools: allTools, model: OfflineModel.layer }))
      )
      const result = yield* Context.get(context, Pipeline.Pipeline).process({
        request: "What is the stock quote for ACME?"
      })
      expect(result._tag).toBe("Completed")
    }))
})

// ---------------------------------------------------------------------------
// A program on the offline model loads no provider package
// ---------------------------------------------------------------------------

const src = fileURLToPath(new URL("../../../src", import.meta.url))

/** Every module reachable from `entry` by static imports, and the packages they import. */
const staticGraph = (entry: string) => {
  const modules = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (modules.has(file)) return
    modules.add(file)
    const text = readFileSync(file, "utf8")
    // An import / export clause is names, braces, commas and `*` (so a JSDoc example is not read).
    for (const m of text.matchAll(/^(?:import|export)\s[\w$*\s{},]*?\sfrom\s+"([^"]+)"/gm)) {
      const spec = m[1]!
      if (spec.startsWith(".")) visit(normalize(join(dirname(file), spec.replace(/\.js$/, ".ts"))))
      else packages.add(spec)
    }
  }
  visit(join(src, entry))
  return { modules, packages }
}

describe("providers are loaded only when chosen", () => {
  it("the main entry point's static imports reach neither a provider module nor a provider package", () => {
    const { modules, packages } = staticGraph("index.ts")
    // The walk reaches the library (ModelConfig included) and its packages.
    expect(modules.size).toBeGreaterThan(40)
    expect([...modules].some((m) => m.endsWith("/ai/ModelConfig.ts"))).toBe(true)
    expect(packages).toContain("@effect/ai")
    expect([...modules].some((m) => m.includes("/ai/providers/"))).toBe(false)
    for (const pkg of ["@effect/ai-openai", "@effect/ai-anthropic", "@effect/platform-node", "@effect/platform"]) {
      expect([...packages].filter((p) => p === pkg || p.startsWith(`${pkg}/`)), pkg).toEqual([])
    }
    // …while ModelConfig does load them, dynamically.
    const config = readFileSync(join(src, "ai", "ModelConfig.ts"), "utf8")
    expect(config).toContain("import(\"./providers/OpenAi.js\")")
    expect(config).toContain("import(\"./providers/Anthropic.js\")")
    expect(config).toContain("import(\"./providers/OpenAiCompat.js\")")
  })

  it("the provider subpaths import their packages", () => {
    expect(staticGraph("ai/providers/OpenAi.ts").packages).toContain("@effect/ai-openai")
    expect(staticGraph("ai/providers/Anthropic.ts").packages).toContain("@effect/ai-anthropic")
    // The Chat Completions provider is written over @effect/platform's HttpClient: no provider package.
    const compat = staticGraph("ai/providers/OpenAiCompat.ts").packages
    expect(compat).toContain("@effect/platform-node")
    expect(compat).toContain("@effect/platform")
    expect([...compat].filter((p) => p.startsWith("@effect/ai-"))).toEqual([])
  })
})
