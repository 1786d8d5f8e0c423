/**
 * Issue 20: "No model gets a faster path than a real provider does". A
 * `LanguageModel` service carries its provider's direct functions
 * (`ModelProvider.withDirect`; `ModelProvider.make` attaches them), so a
 * model provided as `LanguageModel` ALONE — as the `eap-lm` benchmark row
 * provides it — is still called on the direct path; a foreign
 * `LanguageModel` (from `LanguageModel.make`, any `@effect/ai` provider) and
 * a copy made by spreading one (a wrapper changing what it does) go through
 * `LanguageModel`; `layerWithDirect` adds direct functions to a library's
 * `LanguageModel` Layer.
 *
 * Which route a call took is seen by the provider: `@effect/ai` always hands
 * it a real span (`LanguageModel.generateText` / `generateObject`), the
 * direct path, when no tracer collects spans, the inert one.
 */
import { IdGenerator, LanguageModel, type Response } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Stream } from "effect"
import { Agent, Inference, ModelProvider, Pipeline } from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { plan, quoteStep } from "../support/Harness.js"

const FINISH: Response.PartEncoded = {
  type: "finish",
  reason: "stop",
  usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }
}

/** A provider recording the span each call was given (its name says the route). */
const recording = () => {
  const spans: Array<string> = []
  const params: LanguageModel.ConstructorParams = {
    generateText: (options) =>
      Effect.sync(() => {
        spans.push(options.span.name)
        return options.responseFormat.type === "json"
          ? [{ type: "text", text: JSON.stringify(plan([quoteStep("q1")])) }, FINISH]
          : [{ type: "text", text: "ACME is at 42." }, FINISH]
      }),
    streamText: () => Stream.empty
  }
  return { spans, params }
}

const DIRECT = ["inert", "inert"]
const THROUGH_LANGUAGE_MODEL = ["LanguageModel.generateObject", "LanguageModel.generateText"]

/** One request on an agent whose model is `model`; the answer must be the provider's. */
const ask = <E>(model: Layer.Layer<LanguageModel.LanguageModel, E>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Agent.layer({ model, tools: allTools }))
    const result = yield* Context.get(context, Pipeline.Pipeline).process({ request: "quote ACME", requestId: "r1" })
    expect(result._tag).toBe("Completed")
    if (result._tag === "Completed") expect(result.response.response).toBe("ACME is at 42.")
  }).pipe(Effect.scoped)

describe("ModelProvider.withDirect / directOf: the direct path of a LanguageModel provided alone", () => {
  it.effect("a LanguageModel built by ModelProvider.make and provided ALONE (the eap-lm row) is called on the direct path", () =>
    Effect.gen(function*() {
      const { params, spans } = recording()
      const provider = yield* ModelProvider.make(params)
      expect(ModelProvider.directOf(provider.languageModel)).toBe(provider.direct)
      yield* ask(Layer.succeed(LanguageModel.LanguageModel, provider.languageModel))
      expect(spans).toEqual(DIRECT)
    }))

  it.effect("its LanguageModel face still answers user code through @effect/ai", () =>
    Effect.gen(function*() {
      const { params, spans } = recording()
      const provider = yield* ModelProvider.make(params)
      const response = yield* provider.languageModel.generateText({ prompt: "hi" })
      expect(response.text).toBe("ACME is at 42.")
      expect(spans).toEqual(["LanguageModel.generateText"])
    }))

  it.effect("a foreign LanguageModel (LanguageModel.make) goes through LanguageModel", () =>
    Effect.gen(function*() {
      const { params, spans } = recording()
      const foreign = yield* LanguageModel.make(params)
      expect(ModelProvider.directOf(foreign)).toBeUndefined()
      yield* ask(Layer.succeed(LanguageModel.LanguageModel, foreign))
      expect(spans).toEqual(THROUGH_LANGUAGE_MODEL)
    }))

  it.effect("a copy made by spreading one (a wrapper changing what it does) does not carry the direct functions", () =>
    Effect.gen(function*() {
      const { params, spans } = recording()
      const provider = yield* ModelProvider.make(params)
      const wrapped: LanguageModel.Service = { ...provider.languageModel }
      expect(ModelProvider.directOf(wrapped)).toBeUndefined()
      yield* ask(Layer.succeed(LanguageModel.LanguageModel, wrapped))
      expect(spans).toEqual(THROUGH_LANGUAGE_MODEL)
    }))

  it.effect("withDirect: a new service with the same methods, carrying the direct functions; the original is unchanged", () =>
    Effect.gen(function*() {
      const { params } = recording()
      const foreign = yield* LanguageModel.make(params)
      const provider = yield* ModelProvider.make(params)
      const served = ModelProvider.withDirect(foreign, provider.direct)
      expect(served).not.toBe(foreign)
      expect([served.generateText, served.generateObject, served.streamText])
        .toEqual([foreign.generateText, foreign.generateObject, foreign.streamText])
      expect(ModelProvider.directOf(served)).toBe(provider.direct)
      expect(ModelProvider.directOf(foreign)).toBeUndefined()
      expect(Object.keys(served).sort()).toEqual(["generateObject", "generateText", "streamText"])
    }))

  it.effect("a DirectModel in context wins over the one the LanguageModel carries", () =>
    Effect.gen(function*() {
      const { params, spans } = recording()
      const provider = yield* ModelProvider.make(params)
      const calls: Array<string> = []
      const direct: ModelProvider.DirectModel.Service = {
        generatePlan: (prompt) => Effect.suspend(() => (calls.push("plan"), provider.direct.generatePlan(prompt))),
        generateText: (prompt) => Effect.suspend(() => (calls.push("text"), provider.direct.generateText(prompt)))
      }
      yield* ask(
        Layer.merge(
          Layer.succeed(LanguageModel.LanguageModel, provider.languageModel),
          Layer.succeed(ModelProvider.DirectModel, direct)
        )
      )
      expect(calls).toEqual(["plan", "text"])
      expect(spans).toEqual(DIRECT)
    }))

  it.effect("Inference.layerFallback takes the direct functions a fallback LanguageModel carries", () =>
    Effect.gen(function*() {
      const { params } = recording()
      const provider = yield* ModelProvider.make(params)
      const fallback = yield* Inference.FallbackModel.pipe(
        Effect.provide(Inference.layerFallback(Layer.succeed(LanguageModel.LanguageModel, provider.languageModel)))
      )
      expect(fallback.direct).toBe(provider.direct)
    }))
})

describe("ModelProvider.layerWithDirect: a library's LanguageModel Layer with direct functions", () => {
  it.effect("provides the library's LanguageModel (its methods) carrying them, and DirectModel; the pipeline calls them", () =>
    Effect.gen(function*() {
      const { params, spans } = recording()
      const library = Layer.effect(LanguageModel.LanguageModel, LanguageModel.make(params))
      let builtWith: LanguageModel.Service | undefined
      const layer = ModelProvider.layerWithDirect(
        library,
        Effect.gen(function*() {
          builtWith = yield* LanguageModel.LanguageModel
          return (yield* ModelProvider.make(params)).direct
        })
      )
      const context = yield* Effect.scoped(Layer.build(layer))
      const served = Context.get(context, LanguageModel.LanguageModel)
      const direct = Context.get(context, ModelProvider.DirectModel)
      expect(ModelProvider.directOf(served)).toBe(direct)
      expect(served.generateText).toBe(builtWith?.generateText)
      expect(ModelProvider.directOf(builtWith!)).toBeUndefined()
      yield* ask(layer)
      expect(spans).toEqual(DIRECT)
      // Provided alone, its LanguageModel still takes the direct path.
      spans.length = 0
      yield* ask(Layer.succeed(LanguageModel.LanguageModel, served))
      expect(spans).toEqual(DIRECT)
    }))
})

describe("ModelProvider.make: its functions run with the IdGenerator it was built with", () => {
  /** A provider whose every answer is its IdGenerator's next id. */
  const idParams: LanguageModel.ConstructorParams = {
    generateText: (options) =>
      Effect.gen(function*() {
        const id = yield* (yield* IdGenerator.IdGenerator).generateId()
        return options.responseFormat.type === "json"
          ? [{ type: "text", text: JSON.stringify(plan([quoteStep("q1")])) }, FINISH]
          : [{ type: "text", text: `id ${id}` }, FINISH]
      }),
    streamText: () => Stream.empty
  }
  let n = 0
  const counting = IdGenerator.IdGenerator.of({ generateId: () => Effect.sync(() => `n${++n}`) })

  it.effect("on the pipeline's direct path (the call's own fiber starts with it), and called directly", () =>
    Effect.gen(function*() {
      n = 0
      const provider = yield* ModelProvider.make(idParams).pipe(
        Effect.provideService(IdGenerator.IdGenerator, counting)
      )
      const context = yield* Layer.build(
        Agent.layer({ model: Layer.succeed(LanguageModel.LanguageModel, provider.languageModel), tools: allTools })
      )
      const result = yield* Context.get(context, Pipeline.Pipeline).process({ request: "quote ACME", requestId: "r1" })
      expect(result._tag === "Completed" && result.response.response).toBe("id n2")
      // Outside the pipeline its direct functions provide it themselves.
      expect((yield* provider.direct.generateText("hi")).text).toBe("id n3")
    }).pipe(Effect.scoped))
})

describe("ModelProvider.make: streams take the direct path too", () => {
  /** A provider whose stream records the span it was given and streams `deltas`, then a finish. */
  const streaming = (deltas: ReadonlyArray<Response.StreamPartEncoded>) => {
    const spans: Array<string> = []
    const params: LanguageModel.ConstructorParams = {
      generateText: () => Effect.succeed([{ type: "text", text: JSON.stringify(plan([quoteStep("q1")])) }, FINISH]),
      streamText: (options) => {
        spans.push(options.span.name)
        return Stream.fromIterable([...deltas, FINISH])
      }
    }
    return { spans, params }
  }
  const deltas: ReadonlyArray<Response.StreamPartEncoded> = [
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "ACME " },
    { type: "text-delta", id: "t", delta: "is at 42." },
    { type: "text-end", id: "t" }
  ]

  /** One streamed request on an agent whose model is `model`: its events. */
  const streamed = <E>(model: Layer.Layer<LanguageModel.LanguageModel, E>) =>
    Effect.gen(function*() {
      const context = yield* Layer.build(Agent.layer({ model, tools: allTools }))
      const pipeline = Context.get(context, Pipeline.Pipeline)
      return yield* Effect.either(Stream.runCollect(pipeline.stream({ request: "quote ACME", requestId: "s1" })))
    }).pipe(Effect.scoped)

  it.effect("provided alone, its stream is called directly: same tokens and final answer as through LanguageModel", () =>
    Effect.gen(function*() {
      const direct = streaming(deltas)
      const provider = yield* ModelProvider.make(direct.params)
      const viaDirect = yield* streamed(Layer.succeed(LanguageModel.LanguageModel, provider.languageModel))
      expect(direct.spans).toEqual(["inert"])
      const foreign = streaming(deltas)
      const viaLanguageModel = yield* streamed(
        Layer.effect(LanguageModel.LanguageModel, LanguageModel.make(foreign.params))
      )
      expect(foreign.spans).toEqual(["LanguageModel.streamText"])
      const texts = (events: typeof viaDirect) =>
        events._tag === "Right"
          ? [...events.right].map((
            e
          ) => (e._tag === "Token" ? e.text : e._tag === "Completed" ? e.response.response : e._tag))
          : [events.left._tag]
      expect(texts(viaDirect)).toEqual(["ACME ", "is at 42.", "ACME is at 42."])
      expect(texts(viaDirect)).toEqual(texts(viaLanguageModel))
    }))

  it.effect("a part that does not decode fails the stream as LanguageModel's MalformedOutput would (a SynthesisError)", () =>
    Effect.gen(function*() {
      const broken: ReadonlyArray<Response.StreamPartEncoded> = [
        // `delta` must be a string: the provider broke the part's shape.
        { type: "text-delta", id: "t", delta: 42 as unknown as string }
      ]
      const direct = streaming(broken)
      const provider = yield* ModelProvider.make(direct.params)
      const result = yield* streamed(Layer.succeed(LanguageModel.LanguageModel, provider.languageModel))
      expect(result._tag === "Left" && result.left._tag).toBe("SynthesisError")
      const foreign = streaming(broken)
      const through = yield* streamed(Layer.effect(LanguageModel.LanguageModel, LanguageModel.make(foreign.params)))
      expect(through._tag === "Left" && through.left._tag).toBe("SynthesisError")
      expect(result._tag === "Left" && result.left.message).toEqual(through._tag === "Left" && through.left.message)
    }))
})
