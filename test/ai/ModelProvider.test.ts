/**
 * `ModelProvider` (DESIGN §2, the model seam): one provider's functions
 * served as `@effect/ai`'s `LanguageModel` and as the pipeline's narrow
 * `DirectModel`, which `Inference` calls when the model Layer provides it.
 *
 * The direct path must be indistinguishable from the `LanguageModel` path
 * built by `LanguageModel.make` from the same params: the same provider
 * calls, plans, answers and records; the same `PlanningError` /
 * `SynthesisError` (tag, reason, the AI error behind it) for the same
 * provider output; the same `LanguageModel.*` spans when a tracer collects
 * them. Where the error detail texts legitimately differ (the direct path
 * names the problem itself, `LanguageModel` reports its Schema's parse
 * error), each path's detail is checked to name the problem.
 */
import { AiError, LanguageModel, type Response, Telemetry } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import { Cause, Context, Effect, Exit, Layer, Option, ParseResult, Stream } from "effect"
import {
  Agent,
  type AgentResponse,
  type ExecutionRecord,
  ExecutionStore,
  Hook,
  ModelProvider,
  type Operation,
  Pipeline,
  type PipelineError,
  RoutingPlan
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { plan, quoteStep, weatherStep } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"

// ---------------------------------------------------------------------------
// A provider answering from functions of the call number
// ---------------------------------------------------------------------------

const NO_USAGE = { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
const FINISH: Response.PartEncoded = { type: "finish", reason: "stop", usage: NO_USAGE }
const text = (t: string): Response.PartEncoded => ({ type: "text", text: t })

/** An answer: the provider's parts (anything: providers may be JavaScript), or the AI error it fails with. */
type Answer = unknown

/** What a provider written in JavaScript may return: the types are not checked. */
const untypedParts = (parts: unknown): Array<Response.PartEncoded> => parts as Array<Response.PartEncoded>

/** What a provider call received, without its span. */
interface Received {
  readonly prompt: LanguageModel.ProviderOptions["prompt"]
  readonly tools: LanguageModel.ProviderOptions["tools"]
  readonly toolChoice: LanguageModel.ProviderOptions["toolChoice"]
  readonly responseFormat: LanguageModel.ProviderOptions["responseFormat"]
}

interface Scripted {
  readonly params: LanguageModel.ConstructorParams
  readonly received: Array<Received>
}

/**
 * A provider: plan calls (JSON response format) answer `plan(n)` for the
 * n-th plan call, text calls `answer(n)`. It annotates the span it is given.
 */
const scripted = (plan: (n: number) => Answer, answer: (n: number) => Answer): Scripted => {
  const received: Array<Received> = []
  let plans = 0
  let texts = 0
  return {
    received,
    params: {
      generateText: (options) =>
        Effect.suspend(() => {
          received.push({
            prompt: options.prompt,
            tools: options.tools,
            toolChoice: options.toolChoice,
            responseFormat: options.responseFormat
          })
          options.span.attribute("provider.format", options.responseFormat.type)
          const out = options.responseFormat.type === "json" ? plan(plans++) : answer(texts++)
          return AiError.isAiError(out) ? Effect.fail(out) : Effect.succeed(untypedParts(out))
        }),
      streamText: () => Stream.empty
    }
  }
}

const planText = (p: unknown) => JSON.stringify(p)

// ---------------------------------------------------------------------------
// Running a request on either path
// ---------------------------------------------------------------------------

type Path = "direct" | "languageModel"

/** The DirectModel calls `Inference` made (empty on the LanguageModel path). */
const counted = (provider: ModelProvider.Provider, calls: Array<string>): ModelProvider.Provider => ({
  languageModel: provider.languageModel,
  direct: {
    generatePlan: (prompt) => Effect.suspend(() => (calls.push("plan"), provider.direct.generatePlan(prompt))),
    generateText: (prompt) => Effect.suspend(() => (calls.push("text"), provider.direct.generateText(prompt)))
  }
})

const modelLayer = (
  path: Path,
  params: LanguageModel.ConstructorParams,
  directCalls: Array<string>
): Layer.Layer<LanguageModel.LanguageModel> =>
  path === "direct"
    ? ModelProvider.layer(Effect.map(ModelProvider.make(params), (provider) => counted(provider, directCalls)))
    : Layer.effect(LanguageModel.LanguageModel, LanguageModel.make(params))

interface Ran {
  readonly path: Path
  readonly exit: Exit.Exit<AgentResponse.PipelineResult, PipelineError.PipelineError>
  readonly record: ExecutionRecord.ExecutionRecord
  readonly received: ReadonlyArray<Received>
  readonly directCalls: ReadonlyArray<string>
}

const REQUEST_ID = "model-1"

const runOn = (
  path: Path,
  provider: () => Scripted,
  options: { readonly hooks?: ReadonlyArray<Hook.Hook<never>>; readonly request?: string } = {}
) =>
  Effect.gen(function*() {
    const { params, received } = provider()
    const directCalls: Array<string> = []
    const context = yield* Effect.scoped(
      Layer.build(
        Agent.layer({ model: modelLayer(path, params, directCalls), tools: allTools, hooks: options.hooks ?? [] })
      )
    )
    const pipeline = Context.get(context, Pipeline.Pipeline)
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    const exit = yield* Effect.exit(
      pipeline.process({ request: options.request ?? "quote ACME", requestId: REQUEST_ID })
    )
    const stored = yield* Effect.orDie(store.get(REQUEST_ID))
    const record = Option.getOrThrowWith(stored, () => new Error(`${path}: no record`))
    return { path, exit, record, received, directCalls } satisfies Ran
  })

/** The record without timings and call ids. */
const stripRecord = (record: ExecutionRecord.ExecutionRecord) => {
  const { hookInvocations, lifecycle, modelCalls, writer: _writer, ...rest } = record
  const invocations = hookInvocations.map(({ callId: _c, duration: _d, startedAt: _s, ...invocation }) => invocation)
  const calls = (modelCalls ?? []).map(({ durationMs: _d, startedAt: _s, ...call }) => call)
  if (lifecycle === undefined) return { ...rest, hookInvocations: invocations, modelCalls: calls }
  const { endedAt: _endedAt, startedAt: _startedAt, ...evidence } = lifecycle
  return { ...rest, hookInvocations: invocations, modelCalls: calls, lifecycle: evidence }
}

const errorOf = (ran: Ran): PipelineError.PipelineError => {
  const failure = Exit.isFailure(ran.exit) ? Cause.failureOption(ran.exit.cause) : Option.none()
  if (Option.isNone(failure)) throw new Error(`${ran.path}: expected a typed failure, got ${ran.exit._tag}`)
  return failure.value
}

/** The AI error a model error carries. */
const aiErrorOf = (error: PipelineError.PipelineError): AiError.AiError => {
  const cause = "cause" in error ? error.cause : undefined
  if (!AiError.isAiError(cause)) throw new Error(`${error._tag} carries no AiError`)
  return cause
}

const detailOf = (error: PipelineError.PipelineError): string => ("detail" in error ? error.detail : "")

// ---------------------------------------------------------------------------
// Both faces of one provider
// ---------------------------------------------------------------------------

describe("ModelProvider.make: both faces of one provider", () => {
  it.effect("DESIGN §2: languageModel and direct call the provider with the same ProviderOptions and answer the same text and plan", () =>
    Effect.gen(function*() {
      const routing = { steps: [quoteStep("q1")], terminal: true }
      const { params, received } = scripted(
        () => [text(planText(routing).slice(0, 10)), text(planText(routing).slice(10)), FINISH],
        () => [{ type: "reasoning", text: "thinking" }, text("Hello, "), text("world"), FINISH]
      )
      const provider = yield* ModelProvider.make(params)

      const viaModel = yield* provider.languageModel.generateText({ prompt: "say hi" })
      const viaDirect = yield* provider.direct.generateText("say hi")
      expect(viaModel.text).toBe("Hello, world")
      expect(viaDirect.text).toBe(viaModel.text)

      const objectViaModel = yield* provider.languageModel.generateObject({
        prompt: "plan it",
        schema: ModelProvider.PlanRequest,
        objectName: "routing_plan"
      })
      const planViaDirect = yield* provider.direct.generatePlan("plan it")
      // The direct path answers the text; the pipeline decodes it.
      expect(planViaDirect.text).toBe(objectViaModel.text)
      expect(yield* RoutingPlan.decodeText(planViaDirect.text)).toEqual(
        yield* RoutingPlan.decodeUnknown(objectViaModel.value)
      )
      expect((yield* RoutingPlan.decodeText(planViaDirect.text)).steps.map((s) => s.step_id)).toEqual(["q1"])

      // Text calls, then plan calls: each pair received the same options.
      expect(received).toHaveLength(4)
      expect(received[1]).toEqual(received[0])
      expect(received[3]).toEqual(received[2])
      expect(received[0]!.responseFormat).toEqual({ type: "text" })
      expect(received[2]!.responseFormat).toMatchObject({ type: "json", objectName: "routing_plan" })
    }))

  it.effect("DESIGN §2: through the pipeline, an agent on ModelProvider.layer plans and answers as one on LanguageModel.make from the same params (results and records); Inference used the direct interface", () =>
    Effect.gen(function*() {
      const provider = () =>
        scripted(
          (n) =>
            n === 0
              ? [text(planText(plan([quoteStep("q1")], false))), FINISH]
              : [{ type: "reasoning", text: "second phase" }, text(planText(plan([weatherStep("w1")])))],
          () => [text("ACME is up; "), text("Paris is sunny."), FINISH]
        )
      const hooks = (purposes: Array<string>): ReadonlyArray<Hook.Hook<never>> => [
        Hook.make({
          name: "tag",
          beforeInference: (_call, prompt) => Effect.succeed(`${prompt}\n[tag]`),
          afterInference: (call, t) => Effect.succeed(call.payload.purpose === "synthesis" ? t.toUpperCase() : t),
          around: {
            inference: (call: Operation.Call<"inference">) =>
              Effect.sync(() => (result: Operation.Result) =>
                Effect.sync(() => void purposes.push(`${call.payload.purpose}:${result.outcome}`))
              )
          }
        })
      ]
      const directPurposes: Array<string> = []
      const modelPurposes: Array<string> = []
      const direct = yield* runOn("direct", provider, {
        hooks: hooks(directPurposes),
        request: "quote ACME, then Paris weather"
      })
      const model = yield* runOn("languageModel", provider, {
        hooks: hooks(modelPurposes),
        request: "quote ACME, then Paris weather"
      })

      expect(direct.directCalls).toEqual(["plan", "plan", "text"])
      expect(model.directCalls).toEqual([])
      expect(Exit.isSuccess(direct.exit)).toBe(true)
      expect(direct.exit).toEqual(model.exit)
      if (Exit.isSuccess(direct.exit) && direct.exit.value._tag === "Completed") {
        const response = direct.exit.value.response
        expect(response.response).toBe("ACME IS UP; PARIS IS SUNNY.")
        expect(response.phases.map((p) => p.plan.steps.map((s) => s.step_id))).toEqual([["q1"], ["w1"]])
      }
      expect(stripRecord(direct.record)).toEqual(stripRecord(model.record))
      expect(direct.record.hookInvocations.length).toBeGreaterThan(0)
      // The provider got the same calls (the hooked prompts, the same plan
      // request: `ModelProvider.PlanRequest`, described by the strict wire
      // JSON Schema) on both paths.
      expect(direct.received).toEqual(model.received)
      const schemas = (received: ReadonlyArray<Received>) =>
        received.flatMap((r) => (r.responseFormat.type === "json" ? [r.responseFormat.schema] : []))
      expect(schemas(direct.received)).toEqual([ModelProvider.PlanRequest, ModelProvider.PlanRequest])
      expect(direct.received.map((r) => r.responseFormat.type)).toEqual(["json", "json", "text"])
      expect(directPurposes).toEqual(modelPurposes)
      expect(directPurposes).toEqual(["planning:completed", "planning:completed", "synthesis:completed"])
    }))
})

// ---------------------------------------------------------------------------
// Errors: the same PipelineError for the same provider output
// ---------------------------------------------------------------------------

const GOOD_PLAN = [text(planText(plan([]))), FINISH]
const GOOD_ANSWER = [text("fine"), FINISH]

interface ErrorCase {
  readonly name: string
  readonly plan: Answer
  readonly answer?: Answer
  readonly expected:
    | { readonly _tag: "PlanningError"; readonly reason: "invalid_plan" | "model_failed" }
    | { readonly _tag: "SynthesisError" }
  /** The AI error behind the failure; `ParseError` for output that is not a plan (decoded by the pipeline). */
  readonly aiError: "MalformedOutput" | "UnknownError" | "ParseError"
  /** Both paths' details are the same text, containing this. */
  readonly sameDetail?: string
  /** Otherwise: what the direct path's detail says … */
  readonly direct?: string
  /** … and what the LanguageModel path's detail and parse error say. */
  readonly languageModel?: { readonly detail: string; readonly parseError: string }
}

/** The text of a scripted plan answer's text parts. */
const planTextOf = (answer: Answer): string =>
  Array.isArray(answer)
    ? answer.flatMap((part: unknown) =>
      typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" ? [part.text] : []
    ).join("")
    : ""

const providerDown = () =>
  new AiError.UnknownError({ module: "TestProvider", method: "generateText", description: "provider down" })

/**
 * `PipelineError` reasons: a response the provider plumbing cannot read (not
 * a list of parts, a part without a type, no text) is a provider fault,
 * `model_failed`; text the pipeline cannot decode as a plan is
 * `invalid_plan` (after a re-ask), its cause the decoder's `ParseError`.
 */
const ERROR_CASES: ReadonlyArray<ErrorCase> = [
  {
    name: "a response that is not a list of parts (planning)",
    plan: { text: planText(plan([])) },
    expected: { _tag: "PlanningError", reason: "model_failed" },
    aiError: "MalformedOutput",
    direct: "the response is not a list of parts",
    languageModel: { detail: "Expected ReadonlyArray<TextPart", parseError: "actual {\"text\":" }
  },
  {
    name: "a part without a type (planning)",
    plan: [{ text: planText(plan([])) }],
    expected: { _tag: "PlanningError", reason: "model_failed" },
    aiError: "MalformedOutput",
    direct: "a response part has no type",
    languageModel: { detail: "0.type: is missing", parseError: "0.type: is missing" }
  },
  {
    name: "a text part without string text (planning)",
    plan: [{ type: "text", text: 5 }],
    expected: { _tag: "PlanningError", reason: "model_failed" },
    aiError: "MalformedOutput",
    direct: "a text part has no text",
    languageModel: { detail: "0.text: Expected string, actual 5", parseError: "Expected string, actual 5" }
  },
  {
    name: "no text part for a plan",
    plan: [FINISH],
    expected: { _tag: "PlanningError", reason: "model_failed" },
    aiError: "MalformedOutput",
    sameDetail: "No object was generated by the large language model"
  },
  {
    name: "plan text that is not JSON",
    plan: [text("{not json"), FINISH],
    expected: { _tag: "PlanningError", reason: "invalid_plan" },
    aiError: "ParseError",
    sameDetail: "Expected property name or '}' in JSON"
  },
  {
    name: "a plan the RoutingPlan Schema refuses",
    plan: [text("{\"steps\": 3}"), FINISH],
    expected: { _tag: "PlanningError", reason: "invalid_plan" },
    aiError: "ParseError",
    sameDetail: "Expected ReadonlyArray<RoutingStep>, actual 3"
  },
  {
    name: "a provider failure while planning",
    plan: providerDown(),
    expected: { _tag: "PlanningError", reason: "model_failed" },
    aiError: "UnknownError",
    sameDetail: "provider down"
  },
  {
    name: "a response that is not a list of parts (synthesis)",
    plan: GOOD_PLAN,
    answer: 42,
    expected: { _tag: "SynthesisError" },
    aiError: "MalformedOutput",
    direct: "the response is not a list of parts",
    languageModel: { detail: "Expected ReadonlyArray<TextPart", parseError: "actual 42" }
  },
  {
    name: "a part without a type (synthesis)",
    plan: GOOD_PLAN,
    answer: [{ text: "hi" }],
    expected: { _tag: "SynthesisError" },
    aiError: "MalformedOutput",
    direct: "a response part has no type",
    languageModel: { detail: "0.type: is missing", parseError: "is missing" }
  },
  {
    name: "a text part without string text (synthesis)",
    plan: GOOD_PLAN,
    answer: [{ type: "text", text: null }],
    expected: { _tag: "SynthesisError" },
    aiError: "MalformedOutput",
    direct: "a text part has no text",
    languageModel: { detail: "0.text: Expected string, actual null", parseError: "Expected string, actual null" }
  },
  {
    name: "a provider failure while answering",
    plan: GOOD_PLAN,
    answer: providerDown(),
    expected: { _tag: "SynthesisError" },
    aiError: "UnknownError",
    sameDetail: "provider down"
  }
]

describe("ModelProvider direct path: model errors", () => {
  for (const c of ERROR_CASES) {
    it.effect(`DESIGN §2: ${c.name} fails the request with ${c.expected._tag}${"reason" in c.expected ? ` (${c.expected.reason})` : ""} on both paths`, () =>
      Effect.gen(function*() {
        const provider = () => scripted(() => c.plan, () => c.answer ?? GOOD_ANSWER)
        const direct = yield* runOn("direct", provider)
        const model = yield* runOn("languageModel", provider)
        expect(direct.directCalls.length).toBeGreaterThan(0)
        const directError = errorOf(direct)
        const modelError = errorOf(model)
        for (const error of [directError, modelError]) {
          expect(error).toMatchObject(c.expected)
          if (error._tag === "PlanningError") expect(error.phase).toBe(1)
          if (c.aiError === "ParseError") {
            // Not a plan: re-asked once, then the error keeps the raw output.
            expect("cause" in error && ParseResult.isParseError(error.cause)).toBe(true)
            expect(error._tag === "PlanningError" && error.output).toBe(planTextOf(c.plan))
          } else {
            expect(aiErrorOf(error)._tag).toBe(c.aiError)
          }
          expect(detailOf(error).length).toBeGreaterThan(0)
        }
        expect(modelError._tag).toBe(directError._tag)
        // A plan call answered with text that is not a plan is asked again (once, by default).
        const asks = c.aiError === "ParseError" ? 2 : 1
        expect(direct.directCalls.filter((call) => call === "plan")).toHaveLength(asks)
        expect(model.received.filter((r) => r.responseFormat.type === "json")).toHaveLength(asks)
        expect("reason" in modelError && modelError.reason).toBe("reason" in directError && directError.reason)
        // The failed records agree too (their error message is the error's, detail included).
        // (and so do the model calls' error texts: each path names the problem itself).
        const withoutMessage = (record: ExecutionRecord.ExecutionRecord) => {
          const calls = record.modelCalls?.map(({ error, ...call }) => ({ ...call, failed: error !== undefined }))
          const bare = { ...record, modelCalls: calls }
          if (record.lifecycle === undefined) return stripRecord(bare)
          const { errorMessage: _errorMessage, ...evidence } = record.lifecycle
          return stripRecord({ ...bare, lifecycle: evidence })
        }
        expect(withoutMessage(direct.record)).toEqual(withoutMessage(model.record))
        for (const [ran, error] of [[direct, directError], [model, modelError]] as const) {
          expect(ran.record.lifecycle).toMatchObject({ status: "failed", errorTag: c.expected._tag })
          expect(ran.record.lifecycle?.errorMessage).toContain(detailOf(error))
        }

        if (c.sameDetail !== undefined) {
          expect(detailOf(directError)).toBe(detailOf(modelError))
          expect(detailOf(directError)).toContain(c.sameDetail)
        } else {
          expect(detailOf(directError)).toContain(c.direct ?? "?")
          expect(detailOf(modelError)).toContain(c.languageModel?.detail ?? "?")
          // LanguageModel reports the parse error of its response Schema; the
          // pipeline keeps it described, not the ParseError (whose input may
          // be huge or nested too deeply to print: issue 17).
          const kept = aiErrorOf(modelError)
          expect(kept.cause).toBeUndefined()
          expect(kept.description).toContain(c.languageModel?.parseError ?? "?")
        }
      }))
  }

  it.effect("DESIGN §2: a synthesis response without text parts answers the empty string on both paths", () =>
    Effect.gen(function*() {
      const provider = () => scripted(() => GOOD_PLAN, () => [FINISH])
      const direct = yield* runOn("direct", provider)
      const model = yield* runOn("languageModel", provider)
      expect(direct.directCalls).toEqual(["plan", "text"])
      expect(direct.exit).toEqual(model.exit)
      expect(
        Exit.isSuccess(direct.exit) && direct.exit.value._tag === "Completed" && direct.exit.value.response.rawDraft
      ).toBe("")
    }))
})

// ---------------------------------------------------------------------------
// Spans
// ---------------------------------------------------------------------------

const modelSpansOn = (path: Path, provider: () => Scripted) => {
  const tracing = InMemoryTracing.make()
  return Effect.gen(function*() {
    const ran = yield* runOn(path, provider)
    const spans = tracing.spans()
    // A model call's span (`chat`: the scripted provider names no model), and any `LanguageModel.*` span left unmerged.
    const model = spans
      .filter((s) => s.name === "chat" || s.name.startsWith("LanguageModel."))
      .map((s) => ({
        name: s.name,
        kind: s.kind,
        attributes: s.attributes,
        status: s.status.code,
        ancestors: InMemoryTracing.ancestorsOf(spans, s).map((a) => a.name)
      }))
    return { ran, model }
  }).pipe(Effect.provide(tracing.layer))
}

describe("ModelProvider direct path: spans", () => {
  it.effect("C17: with a collecting tracer, a model call is one GenAI client span on either path (same attributes, kind, parents, status): the LanguageModel span is merged into it, the provider's annotations land on it", () =>
    Effect.gen(function*() {
      const provider = () => scripted(() => [text(planText(plan([quoteStep("q1")]))), FINISH], () => GOOD_ANSWER)
      const direct = yield* modelSpansOn("direct", provider)
      const model = yield* modelSpansOn("languageModel", provider)
      expect(direct.ran.directCalls).toEqual(["plan", "text"])
      expect(direct.model).toEqual(model.model)
      // No identity from this Layer: the span names the operation only.
      expect(direct.model.map((s) => [s.name, s.kind])).toEqual([["chat", SpanKind.CLIENT], ["chat", SpanKind.CLIENT]])
      const [planning, synthesis] = direct.model
      expect(planning!.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.output.type": "json",
        "pipeline.inference.purpose": "planning",
        "provider.format": "json"
      })
      expect(planning!.ancestors).toContain("Planner.plan")
      expect(synthesis!.attributes).toMatchObject({ "gen_ai.output.type": "text", "provider.format": "text" })
      for (const s of direct.model) {
        // `LanguageModel`'s call options and the deprecated `gen_ai.system` are not merged.
        for (const key of ["objectName", "concurrency", "toolChoice", "gen_ai.system", "gen_ai.provider.name"]) {
          expect(s.attributes).not.toHaveProperty(key)
        }
      }
      expect(synthesis!.ancestors).toContain("Synthesizer.synthesize")
      for (const s of direct.model) expect(s.status).toBe(InMemoryTracing.SpanStatusCode.OK)
    }))

  it.effect("C17: a failed model call ends its GenAI span with an error (and error.type) on both paths", () =>
    Effect.gen(function*() {
      const provider = () => scripted(() => providerDown(), () => GOOD_ANSWER)
      const direct = yield* modelSpansOn("direct", provider)
      const model = yield* modelSpansOn("languageModel", provider)
      expect(direct.ran.directCalls).toEqual(["plan"])
      expect(direct.model).toEqual(model.model)
      expect(direct.model.map((s) => [s.name, s.status, s.attributes["error.type"]])).toEqual([
        ["chat", InMemoryTracing.SpanStatusCode.ERROR, "UnknownError"]
      ])
    }))

  it.effect("C17: a model that answered something that is not a plan: the re-ask has its own span; both paths' spans end OK (the model answered; the pipeline rejects the plan)", () =>
    Effect.gen(function*() {
      const provider = () => scripted(() => [text("{not json")], () => GOOD_ANSWER)
      const direct = yield* modelSpansOn("direct", provider)
      const model = yield* modelSpansOn("languageModel", provider)
      expect(direct.ran.directCalls).toEqual(["plan", "plan"])
      const { OK } = InMemoryTracing.SpanStatusCode
      expect(direct.model.map((s) => [s.name, s.status])).toEqual([["chat", OK], ["chat", OK]])
      expect(model.model.map((s) => [s.name, s.status])).toEqual([["chat", OK], ["chat", OK]])
      expect(direct.model.map((s) => s.ancestors)).toEqual(model.model.map((s) => s.ancestors))
    }))
})

describe("ModelProvider direct path: @effect/ai telemetry", () => {
  it.effect("C17: with @effect/ai's span transformer installed, the direct interface answers through LanguageModel, so the transformer sees every call", () =>
    Effect.gen(function*() {
      const formats: Array<string> = []
      const transformer = Layer.succeed(Telemetry.CurrentSpanTransformer, (options) => {
        formats.push(options.responseFormat.type)
      })
      const { params } = scripted(() => GOOD_PLAN, () => GOOD_ANSWER)
      const model = ModelProvider.layer(ModelProvider.make(params)).pipe(Layer.provide(transformer))
      const context = yield* Effect.scoped(Layer.build(Agent.layer({ model, tools: allTools })))
      const result = yield* Context.get(context, Pipeline.Pipeline).process({ request: "quote ACME" })
      expect(result._tag).toBe("Completed")
      expect(formats).toEqual(["json", "text"])
    }))
})
