/**
 * Issue 17, class 2 — "leaked keys": an API key never serializes.
 *
 * A canary key is driven through every way a provider call fails — 404,
 * 401, 429, 500, a timeout, a refused and a reset connection, a body that
 * is not JSON, a body that is JSON but not the provider's shape — for
 * OpenAI (Responses), an OpenAI-compatible server over Chat Completions
 * (vLLM's shapes) and Anthropic (planning, buffered and streamed synthesis)
 * and OpenAI embeddings, over real HTTP on loopback (the fake servers). For
 * each, every surface a key could reach is read — the typed error through
 * `JSON.stringify`, `util.inspect` (depth Infinity, hidden properties),
 * `String` and `Cause.pretty` (with and without the cause chain), the
 * stored execution record, every log line (the pipeline's own, at every
 * level, and the failure logged as a user would, through Effect's logfmt,
 * JSON and structured loggers) and every exported span (attributes,
 * events, status) — for the key, `Bearer <key>`, and its base64 and
 * base64url forms. The typed error must also hold no credential header
 * field at all, and still say what happened: method, URL, status and a
 * body excerpt.
 *
 * The last test shows the checks bite: the same surfaces of `@effect/ai`'s
 * own error, taken below the provider boundary, do contain the key.
 */
import { AiError, EmbeddingModel, type LanguageModel } from "@effect/ai"
import { OpenAiClient } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  ConfigProvider,
  Context,
  Effect,
  Exit,
  Layer,
  Logger,
  LogLevel,
  Option,
  Redacted,
  Scope,
  Stream
} from "effect"
import {
  Agent,
  type ExecutionRecord,
  ExecutionStore,
  Hook,
  OfflineModel,
  Pipeline,
  type PipelineError,
  ProviderEndpoint
} from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as OpenAi from "effect-agent-pipeline/openai"
import * as OpenAiCompat from "effect-agent-pipeline/openai-compat"
import { randomBytes } from "node:crypto"
import * as util from "node:util"
import { allTools } from "../../examples/shared/DemoTools.js"
import * as FakeAnthropic from "../support/FakeAnthropic.js"
import * as FakeChatCompletions from "../support/FakeChatCompletions.js"
import * as FakeOpenAi from "../support/FakeOpenAi.js"
import { plan } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"
import * as WireServer from "../support/WireServer.js"

const CANARY = `sk-canary-${randomBytes(16).toString("hex")}`
const KEY = Redacted.make(CANARY)

const base64 = (text: string) => Buffer.from(text).toString("base64").replace(/=+$/, "")

/** Every form the key could be printed in. */
const FORMS: Readonly<Record<string, string>> = {
  "the key": CANARY,
  "Bearer <key>": `Bearer ${CANARY}`,
  "base64(key)": base64(CANARY),
  "base64url(key)": Buffer.from(CANARY).toString("base64url"),
  "base64(Bearer <key>)": base64(`Bearer ${CANARY}`)
}

/** `form in surface` for each form of the key found in each surface. */
const leaksIn = (surfaces: Readonly<Record<string, string>>): ReadonlyArray<string> =>
  Object.entries(surfaces).flatMap(([surface, text]) =>
    Object.entries(FORMS).flatMap(([form, value]) => (text.includes(value) ? [`${form} in ${surface}`] : []))
  )

const CREDENTIAL_FIELD = /^(?:authorization|x-api-key|proxy-authorization|cookie)$/i

/** Paths of fields named like a credential header anywhere in a value's object graph (data properties only). */
const credentialFields = (value: unknown): ReadonlyArray<string> => {
  const found: Array<string> = []
  const seen = new Set<object>()
  const walk = (u: unknown, path: string, depth: number): void => {
    if (typeof u !== "object" || u === null || seen.has(u) || depth > 64) return
    seen.add(u)
    for (const key of Reflect.ownKeys(u)) {
      if (typeof key !== "string") continue
      const descriptor = Object.getOwnPropertyDescriptor(u, key)
      if (descriptor === undefined || !("value" in descriptor)) continue
      if (CREDENTIAL_FIELD.test(key)) found.push(`${path}.${key}`)
      walk(descriptor.value, `${path}.${key}`, depth + 1)
    }
  }
  walk(value, "error", 0)
  return found
}

const inspect = (u: unknown) => util.inspect(u, { depth: Infinity, showHidden: true })

/** What a failed call shows of itself. */
const errorSurfaces = (error: unknown, cause: Cause.Cause<unknown>): Record<string, string> => ({
  "JSON.stringify(error)": JSON.stringify(error) ?? "",
  "util.inspect(error)": inspect(error),
  "String(error)": String(error),
  "Cause.pretty": Cause.pretty(cause),
  "Cause.pretty (renderErrorCause)": Cause.pretty(cause, { renderErrorCause: true }),
  "util.inspect(cause)": inspect(cause)
})

/** Every log line, as the loggers a user installs would print it. */
const capturingLogger = (lines: Array<string>) =>
  Logger.make((options) => {
    lines.push(
      Logger.logfmtLogger.log(options),
      Logger.jsonLogger.log(options),
      inspect(Logger.structuredLogger.log(options)),
      inspect(options.message),
      Cause.pretty(options.cause, { renderErrorCause: true })
    )
  })

const spanText = (span: InMemoryTracing.ReadableSpan): string =>
  JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
    status: span.status,
    links: span.links.map((link) => link.attributes)
  })

/** A test's observers: a tracer exporting in memory and a logger keeping every line, at every level. */
const observing = () => {
  const logs: Array<string> = []
  const tracing = InMemoryTracing.make()
  const layer = Layer.mergeAll(
    tracing.layer,
    Logger.replace(Logger.defaultLogger, capturingLogger(logs)),
    Logger.minimumLogLevel(LogLevel.All)
  )
  return { logs, tracing, layer }
}

// ---------------------------------------------------------------------------
// The failures, per provider
// ---------------------------------------------------------------------------

const FAILURES = [
  "404",
  "401",
  "401 echoing the key",
  "429",
  "500",
  "timeout",
  "connection refused",
  "connection reset",
  "non-JSON body",
  "schema-violating body"
] as const
type Failure = (typeof FAILURES)[number]

const STATUS: Partial<Record<Failure, number>> = {
  "404": 404,
  "401": 401,
  "401 echoing the key": 401,
  "429": 429,
  "500": 500
}

/** What the server answers said, so the error's body excerpt can be found. */
const SERVER_MESSAGE = "the fake server turned this call down"

/** The key as a server quoting it back would: plain, as a bearer token, encoded. */
const ECHOED = `key ${CANARY}, header Bearer ${CANARY}, token ${base64(CANARY)}, url-safe ${
  Buffer.from(CANARY).toString("base64url")
}`

type Path = "planning" | "buffered synthesis" | "streamed synthesis"
const PATHS: ReadonlyArray<Path> = ["planning", "buffered synthesis", "streamed synthesis"]

interface Provider {
  readonly name: "OpenAI" | "Anthropic" | "OpenAI-compatible"
  readonly server: Effect.Effect<WireServer.WireServer & { readonly apiUrl: string }, never, Scope.Scope>
  /** The base URL a client gets for a server at `url` (`/v1` or not). */
  readonly apiUrlOf: (url: string) => string
  readonly model: (apiUrl: string) => Layer.Layer<LanguageModel.LanguageModel>
  readonly error: (code: number, message: string) => WireServer.Reply
  readonly plan: WireServer.Reply
  readonly brokenBody: WireServer.Reply
  /** Whether a request carried the canary the way this provider sends keys. */
  readonly carriedKey: (request: WireServer.ReceivedRequest) => boolean
}

const OPENAI: Provider = {
  name: "OpenAI",
  server: FakeOpenAi.make,
  apiUrlOf: (url) => `${url}/v1`,
  model: (apiUrl) => OpenAi.layer({ model: "gpt-test", apiUrl, apiKey: KEY }),
  error: FakeOpenAi.error,
  plan: FakeOpenAi.plan(plan([])),
  brokenBody: FakeOpenAi.brokenBody,
  carriedKey: (request) => request.headers["authorization"] === `Bearer ${CANARY}`
}

const CHAT_COMPLETIONS: Provider = {
  name: "OpenAI-compatible",
  server: FakeChatCompletions.make("vllm"),
  apiUrlOf: (url) => `${url}/v1`,
  model: (apiUrl) => OpenAiCompat.layer({ model: "gpt-test", apiUrl, apiKey: KEY }),
  error: (status, message) => FakeChatCompletions.error("vllm", { status, message }),
  plan: FakeChatCompletions.plan("vllm", plan([])),
  brokenBody: WireServer.status(200, { body: { id: "chatcmpl-1", object: "chat.completion", choices: "nope" } }),
  carriedKey: (request) => request.headers["authorization"] === `Bearer ${CANARY}`
}

const ANTHROPIC: Provider = {
  name: "Anthropic",
  server: FakeAnthropic.make,
  apiUrlOf: (url) => url,
  model: (apiUrl) => Anthropic.layer({ model: "claude-test", apiUrl, apiKey: KEY }),
  error: FakeAnthropic.error,
  plan: FakeAnthropic.plan(plan([])),
  brokenBody: FakeAnthropic.brokenBody,
  carriedKey: (request) => request.headers["x-api-key"] === CANARY
}

/** SSE frames whose data is not JSON. */
const sseNotJson: WireServer.Reply = WireServer.reply(() => ({
  _tag: "Sse",
  headers: {},
  events: [{ event: "message", data: "{\"type\": not json" }, { data: "[DONE" }],
  eventDelay: undefined,
  cut: undefined
}))

/** SSE events that are JSON but not the provider's events. */
const sseWrongShape: WireServer.Reply = WireServer.reply(() =>
  WireServer.sseOf([{ type: "message_start", message: 42 }, { type: "response.created", response: "nope" }])
)

/** The reply one failing attempt gets (the policy allows one retry: each is queued twice). */
const failing = (provider: Provider, failure: Failure, streamed: boolean): WireServer.Reply | undefined => {
  const status = STATUS[failure]
  // A proxy or a careless server may quote the key back, plain or encoded.
  if (failure === "401 echoing the key") return provider.error(401, `${SERVER_MESSAGE}: ${ECHOED}`)
  if (status !== undefined) return provider.error(status, SERVER_MESSAGE)
  switch (failure) {
    case "timeout":
      return WireServer.hang
    case "connection reset":
      return WireServer.reset
    case "non-JSON body":
      return streamed ? sseNotJson : WireServer.notJson()
    case "schema-violating body":
      return streamed ? sseWrongShape : provider.brokenBody
    default:
      return undefined
  }
}

const OPTIONS: Pipeline.PipelineOptions = {
  modelTimeout: "250 millis",
  modelRetries: 1,
  modelRetryDelay: "1 millis",
  planReasks: 0
}

/**
 * Only the hanging server needs the short model timeout: elsewhere a call
 * that a loaded machine slows past 250 ms would be retried and take the
 * reply meant for the next call (the planning call would get synthesis's 401).
 */
const optionsFor = (failure: Failure | undefined): Pipeline.PipelineOptions =>
  failure === "timeout" ? OPTIONS : { ...OPTIONS, modelTimeout: "10 seconds" }

const agentOn = (
  model: Layer.Layer<LanguageModel.LanguageModel>,
  hooks: ReadonlyArray<Hook.Hook<never>> = [],
  failure?: Failure
) =>
  Effect.map(
    Layer.build(Agent.layer({ model, tools: allTools, hooks, options: optionsFor(failure) })),
    (context) => ({
      pipeline: Context.get(context, Pipeline.Pipeline),
      store: Context.get(context, ExecutionStore.ExecutionStore)
    })
  )

/** What a provider error kept must still say: method, URL, status, a body excerpt — and no request header. */
const expectInformative = (error: PipelineError.PipelineError, failure: Failure) => {
  const cause: unknown = "cause" in error ? error.cause : undefined
  const status = STATUS[failure]
  // An HTTP status is kept as what it is: a response error with that status.
  if (status !== undefined) expect(AiError.isAiError(cause) && cause._tag).toBe("HttpResponseError")
  // A connection that failed is a transport failure, said as such.
  if (failure === "connection refused" || failure === "connection reset") {
    expect(AiError.isAiError(cause) && cause._tag === "HttpRequestError" && cause.reason).toBe("Transport")
  }
  if (!AiError.isAiError(cause)) return
  if (cause._tag === "HttpRequestError" || cause._tag === "HttpResponseError") {
    expect(cause.request.headers).toEqual({})
    expect(cause.request.method).toBe("POST")
    expect(cause.request.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\//)
  }
  if (status !== undefined && cause._tag === "HttpResponseError") {
    expect(cause.response.status).toBe(status)
    expect(cause.body ?? cause.description ?? "").toContain(SERVER_MESSAGE)
    // A key the server quoted back is scrubbed from the excerpt, the rest kept.
    if (failure === "401 echoing the key") expect(cause.body ?? "").toContain("<redacted>")
  }
}

interface Outcome {
  readonly exit: Exit.Exit<unknown, PipelineError.PipelineError>
  readonly record: ExecutionRecord.ExecutionRecord | undefined
  readonly received: ReadonlyArray<WireServer.ReceivedRequest>
}

/** Runs one request on `path` whose model call fails with `failure`. */
const runFailing = (provider: Provider, path: Path, failure: Failure, requestId: string) =>
  Effect.gen(function*() {
    const streamed = path === "streamed synthesis"
    // The server lives in a scope of its own: "connection refused" on synthesis closes it after planning.
    const serverScope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(serverScope, Exit.void))
    const server = yield* Scope.extend(provider.server, serverScope)
    const reply = failing(provider, failure, streamed)
    if (path !== "planning") yield* server.enqueue(provider.plan)
    if (reply !== undefined) yield* server.enqueue(reply, reply)
    const refusedAtOnce = failure === "connection refused" && path === "planning"
    const apiUrl = refusedAtOnce ? provider.apiUrlOf(yield* WireServer.refusingUrl) : server.apiUrl
    const hooks = failure === "connection refused" && path !== "planning"
      ? [Hook.make({ name: "server-goes-away", afterExecution: () => Scope.close(serverScope, Exit.void) })]
      : []
    const agent = yield* agentOn(provider.model(apiUrl), hooks, failure)
    const request = { request: "What is the quote for ACME?", requestId }
    const exit: Exit.Exit<unknown, PipelineError.PipelineError> = streamed
      ? yield* Effect.exit(Stream.runDrain(agent.pipeline.stream(request)))
      : yield* Effect.exit(agent.pipeline.process(request))
    const record = Option.getOrUndefined(yield* Effect.orDie(agent.store.get(requestId)))
    const outcome: Outcome = { exit, record, received: refusedAtOnce ? [] : yield* server.requests }
    return outcome
  })

/** Logs a failure the way a user's program would. */
const logAsAUserWould = (cause: Cause.Cause<unknown>, error: unknown) =>
  Effect.zipRight(Effect.logError("request failed", cause), Effect.logError(error))

/** Asserts no surface of `outcome` holds the key. */
const expectNoLeak = (
  observed: ReturnType<typeof observing>,
  cause: Cause.Cause<unknown>,
  error: unknown,
  record: unknown
) => {
  const surfaces = {
    ...errorSurfaces(error, cause),
    "the execution record": JSON.stringify(record) ?? "",
    "the log output": observed.logs.join("\n"),
    "the exported spans": observed.tracing.spans().map(spanText).join("\n")
  }
  expect(leaksIn(surfaces)).toEqual([])
  expect(credentialFields(error)).toEqual([])
}

for (const provider of [OPENAI, CHAT_COMPLETIONS, ANTHROPIC]) {
  for (const path of PATHS) {
    describe(`leaked keys: ${provider.name}, ${path}`, () => {
      for (const failure of FAILURES) {
        it.scopedLive(
          `leaked keys: a ${failure} from ${provider.name} (${path}) never serializes the API key (JSON, inspect, Cause.pretty, record, logs, spans)`,
          () => {
            const observed = observing()
            return Effect.gen(function*() {
              const requestId = `leak-${provider.name}-${path.replace(/ /g, "-")}-${failure.replace(/ /g, "-")}`
              const { exit, received, record } = yield* runFailing(provider, path, failure, requestId)

              // The key really went out (the checks below are about a key that was sent).
              if (received.length > 0) expect(received.every(provider.carriedKey)).toBe(true)
              // The request has a record, whatever happened to it.
              expect(record?.requestId).toBe(requestId)

              if (Exit.isSuccess(exit)) {
                // OpenAI skips stream events it cannot decode: the stream ends, empty.
                expect(path === "streamed synthesis" && failure.endsWith("body") && provider.name === "OpenAI").toBe(
                  true
                )
                expectNoLeak(observed, Cause.empty, undefined, record)
                return
              }
              const error = Option.getOrThrowWith(
                Cause.failureOption(exit.cause),
                () => new Error(Cause.pretty(exit.cause))
              )
              expect(error._tag).toBe(path === "planning" ? "PlanningError" : "SynthesisError")
              if ("reason" in error) expect(error.reason).toBe(failure === "timeout" ? "timed_out" : "model_failed")
              expectInformative(error, failure)
              expect(record?.lifecycle).toMatchObject({ status: "failed", errorTag: error._tag })
              expect(record?.modelCalls?.some((call) => call.error !== undefined)).toBe(true)

              yield* logAsAUserWould(exit.cause, error)
              // The failure reached the logs (the log check is not vacuous).
              expect(observed.logs.join("\n")).toContain(error._tag)
              // Spans were exported, the model call's among them (the span check is not vacuous).
              expect(observed.tracing.spans().some((span) => span.name.startsWith("chat "))).toBe(true)
              expectNoLeak(observed, exit.cause, error, record)
            }).pipe(Effect.provide(observed.layer))
          }
        )
      }
    })
  }
}

// ---------------------------------------------------------------------------
// Embeddings
// ---------------------------------------------------------------------------

describe("leaked keys: OpenAI embeddings (OpenAi.layerEmbeddings)", () => {
  for (const failure of FAILURES) {
    it.scopedLive(
      `leaked keys: a ${failure} from the embeddings server never serializes the API key (JSON, inspect, Cause.pretty, record, logs, spans)`,
      () => {
        const observed = observing()
        return Effect.gen(function*() {
          const server = yield* FakeOpenAi.make
          const reply = failing(OPENAI, failure, false)
          if (reply !== undefined) yield* server.enqueue(reply, reply)
          const apiUrl = failure === "connection refused" ? `${yield* WireServer.refusingUrl}/v1` : server.apiUrl
          const embeddings = Context.get(
            yield* Layer.build(OpenAi.layerEmbeddings({ model: "text-embedding-test", apiUrl, apiKey: KEY })),
            EmbeddingModel.EmbeddingModel
          )
          // A hook that embeds the request (as a semantic cache would): its failure is recorded.
          // The short bound only against the hanging server (see `optionsFor`).
          const bound = failure === "timeout" ? "250 millis" : "10 seconds"
          const cacheProbe = Hook.make({
            name: "semantic-cache-probe",
            timeout: bound,
            beforePlanning: (context) => Effect.asVoid(embeddings.embed(context.request))
          })
          const agent = yield* agentOn(OfflineModel.layer, [cacheProbe])
          yield* agent.pipeline.process({ request: "What is the quote for ACME?", requestId: "leak-embeddings" })
          const record = Option.getOrUndefined(yield* Effect.orDie(agent.store.get("leak-embeddings")))
          const invocation = record?.hookInvocations.find((i) => i.name === "semantic-cache-probe")
          expect(invocation?.outcome).toBe("failed")

          // The same failure, called directly.
          const exit = yield* Effect.exit(Effect.timeout(embeddings.embed("direct call"), bound))
          if (Exit.isSuccess(exit)) throw new Error("expected the embedding call to fail")
          const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
          if (failure !== "timeout") {
            expect(AiError.isAiError(error)).toBe(true)
            if (error !== undefined && AiError.isAiError(error) && error._tag === "HttpResponseError") {
              expect(error.request.headers).toEqual({})
              if (STATUS[failure] !== undefined) expect(error.response.status).toBe(STATUS[failure])
            }
          }
          const received = yield* server.requests
          if (received.length > 0) expect(received.every(OPENAI.carriedKey)).toBe(true)

          yield* logAsAUserWould(exit.cause, error)
          expectNoLeak(observed, exit.cause, error, record)
        }).pipe(Effect.provide(observed.layer))
      }
    )
  }
})

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

describe("leaked keys: configuration", () => {
  const env = (values: Record<string, string>) =>
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(values))))

  it.effect("leaked keys: OPENAI_API_KEY and ANTHROPIC_API_KEY are read as Redacted; the endpoints never print them", () =>
    Effect.gen(function*() {
      const openai = yield* Effect.orDie(ProviderEndpoint.openAi.pipe(env({ OPENAI_API_KEY: CANARY })))
      const anthropic = yield* Effect.orDie(ProviderEndpoint.anthropic.pipe(env({ ANTHROPIC_API_KEY: CANARY })))
      for (const endpoint of [openai, anthropic]) {
        expect(Redacted.isRedacted(endpoint.apiKey)).toBe(true)
        expect(endpoint.apiKey && Redacted.value(endpoint.apiKey)).toBe(CANARY)
        expect(leaksIn({ JSON: JSON.stringify(endpoint), inspect: inspect(endpoint), String: String(endpoint.apiKey) }))
          .toEqual([])
      }
    }))

  it.effect("leaked keys: a base URL carrying credentials is refused, and the ConfigError does not echo them", () =>
    Effect.gen(function*() {
      for (
        const url of [
          `https://user:${CANARY}@api.example.com/v1`,
          `https://${CANARY}@api.example.com/v1`,
          `${CANARY}:not a url`
        ]
      ) {
        const error = yield* Effect.flip(
          ProviderEndpoint.openAi.pipe(env({ OPENAI_BASE_URL: url, OPENAI_API_KEY: "sk-x" }))
        )
        expect(String(error)).toContain("OPENAI_BASE_URL")
        expect(leaksIn({ String: String(error), JSON: JSON.stringify(error), inspect: inspect(error) })).toEqual([])
      }
    }))
})

// ---------------------------------------------------------------------------
// The checks bite
// ---------------------------------------------------------------------------

describe("leaked keys: the checks find a key where one is", () => {
  it.scopedLive("leaked keys: @effect/ai's own error, below the provider boundary, does hold the key (the detector works)", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.error(429, SERVER_MESSAGE))
      const raw = Context.get(
        yield* Layer.build(
          OpenAiClient.layer({ apiKey: KEY, apiUrl: server.apiUrl }).pipe(Layer.provide(NodeHttpClient.layerUndici))
        ),
        OpenAiClient.OpenAiClient
      )
      const error = yield* Effect.flip(raw.createResponse({ model: "gpt-test", input: "hi" }))
      const found = leaksIn(errorSurfaces(error, Cause.fail(error)))
      expect(found).toContain("Bearer <key> in JSON.stringify(error)")
      expect(found).toContain("the key in util.inspect(error)")
      expect(credentialFields(error).length).toBeGreaterThan(0)
    }))
})
