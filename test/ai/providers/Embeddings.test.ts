/**
 * Embeddings through `@effect/ai`'s `EmbeddingModel`: the offline embedder
 * (deterministic, normalised, similar texts closer than unrelated ones) and
 * `AGENT_EMBEDDINGS=openai:<model>` over HTTP to the fake OpenAI server's
 * `POST /v1/embeddings`.
 */
import { EmbeddingModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, FastCheck, Layer, Redacted } from "effect"
import { Embeddings, ModelConfig } from "effect-agent-pipeline"
import * as OpenAi from "effect-agent-pipeline/openai"
import * as FakeOpenAi from "../../support/FakeOpenAi.js"

const norm = (v: ReadonlyArray<number>) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))

const modelIn = <E>(layer: Layer.Layer<EmbeddingModel.EmbeddingModel, E>) =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, EmbeddingModel.EmbeddingModel))

describe("the offline embedder", () => {
  it("same text, same vector: 256 numbers of L2 norm 1", () => {
    const a = Embeddings.embedOffline("What's the weather in Paris?")
    expect(a).toHaveLength(256)
    expect(Embeddings.embedOffline("What's the weather in Paris?")).toEqual(a)
    expect(norm(a)).toBeCloseTo(1, 12)
    // Case and punctuation do not matter; words do.
    expect(Embeddings.embedOffline("what's THE weather, in paris")).toEqual(a)
    expect(Embeddings.embedOffline("weather in Paris")).not.toEqual(a)
  })

  it("similar texts are closer than unrelated ones", () => {
    const query = Embeddings.embedOffline("weather forecast for Paris tomorrow")
    const similar = Embeddings.embedOffline("Paris weather forecast")
    const partial = Embeddings.embedOffline("forecasting the weather")
    const unrelated = Embeddings.embedOffline("buy ten shares of ACME stock")
    expect(Embeddings.cosine(query, similar)).toBeGreaterThan(0.6)
    expect(Embeddings.cosine(query, similar)).toBeGreaterThan(Embeddings.cosine(query, partial))
    expect(Embeddings.cosine(query, partial)).toBeGreaterThan(Embeddings.cosine(query, unrelated))
    expect(Math.abs(Embeddings.cosine(query, unrelated))).toBeLessThan(0.25)
    // Word parts count: an inflected word is closer than an unrelated one.
    expect(Embeddings.cosine(Embeddings.embedOffline("forecasts"), Embeddings.embedOffline("forecast")))
      .toBeGreaterThan(Embeddings.cosine(Embeddings.embedOffline("forecasts"), Embeddings.embedOffline("shares")))
  })

  it("any text: deterministic, unit norm (or all zeros without letters or digits), cosine with itself 1", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.string({ maxLength: 80 }),
        FastCheck.integer({ min: 1, max: 64 }),
        (text, dimensions) => {
          const v = Embeddings.embedOffline(text, dimensions)
          expect(v).toHaveLength(dimensions)
          expect(Embeddings.embedOffline(text, dimensions)).toEqual(v)
          if (/[\p{L}\p{N}]/u.test(text)) {
            expect(norm(v)).toBeCloseTo(1, 9)
            expect(Embeddings.cosine(v, v)).toBeCloseTo(1, 9)
          } else {
            expect(v.every((x) => x === 0)).toBe(true)
            expect(Embeddings.cosine(v, v)).toBe(0)
          }
        }
      )
    )
  })

  it("refuses a dimension that is not a positive integer, and vectors of different lengths", () => {
    expect(() => Embeddings.embedOffline("x", 0)).toThrow(RangeError)
    expect(() => Embeddings.embedOffline("x", 1.5)).toThrow(RangeError)
    expect(() => Embeddings.cosine([1], [1, 0])).toThrow(RangeError)
  })

  it.scoped("as an EmbeddingModel Layer: embed and embedMany answer the same vectors", () =>
    Effect.gen(function*() {
      const model = yield* modelIn(Embeddings.layerOffline({ dimensions: 32 }))
      const one = yield* model.embed("hello world")
      expect(one).toEqual(Embeddings.embedOffline("hello world", 32))
      const many = yield* model.embedMany(["a", "hello world", "b"])
      expect(many).toEqual(["a", "hello world", "b"].map((t) => Embeddings.embedOffline(t, 32)))
    }))

  it.scoped("AGENT_EMBEDDINGS unset: ModelConfig's embedding model is the offline one", () =>
    Effect.gen(function*() {
      const model = yield* modelIn(ModelConfig.layerEmbeddingModel).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
      )
      expect(yield* model.embed("hello")).toEqual(Embeddings.embedOffline("hello"))
    }))
})

const at = (body: unknown, key: string): unknown =>
  typeof body === "object" && body !== null && key in body ? (body as Record<string, unknown>)[key] : undefined

describe("OpenAI embeddings over HTTP", () => {
  it.scoped("AGENT_EMBEDDINGS=openai:<model>: one batched POST /v1/embeddings, vectors in input order", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      const env = new Map([
        ["AGENT_EMBEDDINGS", "openai:text-embedding-3-small"],
        ["OPENAI_BASE_URL", server.apiUrl],
        ["OPENAI_API_KEY", "sk-embed"]
      ])
      const model = yield* modelIn(ModelConfig.layerEmbeddingModel).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(env))
      )
      const vectors = yield* model.embedMany(["first text", "second text"])
      // The fake answers unscripted embeddings with the offline embedder's 8-dimension vectors.
      expect(vectors).toEqual(
        ["first text", "second text"].map((t) => Embeddings.embedOffline(t, FakeOpenAi.EMBEDDING_DIMENSIONS))
      )

      const requests = yield* server.requests
      expect(requests).toHaveLength(1)
      const [request] = requests
      expect(`${request?.method} ${request?.path}`).toBe("POST /v1/embeddings")
      expect(request?.headers["authorization"]).toBe("Bearer sk-embed")
      expect(at(request?.body, "model")).toBe("text-embedding-3-small")
      expect(at(request?.body, "input")).toEqual(["first text", "second text"])
    }))

  it.scoped("OpenAi.layerEmbeddings sends dimensions and returns the server's vectors", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.embeddings([[1, 0], [0, 1]]))
      const model = yield* modelIn(
        OpenAi.layerEmbeddings({
          model: "nomic-embed-text",
          dimensions: 2,
          apiUrl: server.apiUrl,
          apiKey: Redacted.make("k")
        })
      )
      expect(yield* model.embedMany(["x", "y"])).toEqual([[1, 0], [0, 1]])
      const [request] = yield* server.requests
      expect(at(request?.body, "dimensions")).toBe(2)
      expect(at(request?.body, "model")).toBe("nomic-embed-text")
    }))

  it.scoped("a server error is the EmbeddingModel's AiError", () =>
    Effect.gen(function*() {
      const server = yield* FakeOpenAi.make
      yield* server.enqueue(FakeOpenAi.error(500, "embedding backend down"))
      const model = yield* modelIn(OpenAi.layerEmbeddings({ model: "m", apiUrl: server.apiUrl }))
      const error = yield* Effect.flip(model.embed("x"))
      expect(error._tag === "HttpResponseError" && error.response.status).toBe(500)
    }))
})
