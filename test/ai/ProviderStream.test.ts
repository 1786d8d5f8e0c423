/**
 * `ModelProvider.make`'s direct stream decodes a provider's parts as
 * `LanguageModel.streamText` does: text deltas are built without the parts'
 * Schema (the common case, made cheap), and whatever comes out — parts,
 * or the failure of a part that does not decode — is what the
 * `LanguageModel` path gives for the same provider output.
 */
import { AiError, IdGenerator, LanguageModel, type Response } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import { streamDirect } from "../../src/ai/internal/providerStream.js"

const FINISH = { type: "finish", reason: "stop", usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } }

/** The parts (chunks as given) each path streams for a provider answering `chunks`. */
const bothPaths = (chunks: ReadonlyArray<ReadonlyArray<unknown>>) =>
  Effect.gen(function*() {
    const params: LanguageModel.ConstructorParams = {
      generateText: () => Effect.succeed([]),
      // The provider's output is untrusted: parts of any shape.
      streamText: () =>
        Stream.fromChunks(
          ...chunks.map((parts) => Chunk.fromIterable(parts as ReadonlyArray<Response.StreamPartEncoded>))
        )
    }
    const languageModel = yield* LanguageModel.make(params)
    const collect = (stream: Stream.Stream<Response.StreamPart<{}>, AiError.AiError>) =>
      Effect.either(Stream.runCollect(stream).pipe(Effect.map(Chunk.toReadonlyArray)))
    const direct = yield* collect(
      streamDirect(params, languageModel, IdGenerator.defaultIdGenerator, () => false)("hi")
    )
    const viaLanguageModel = yield* collect(languageModel.streamText({ prompt: "hi" }))
    return { direct, viaLanguageModel }
  })

describe("ModelProvider's direct stream: parts decoded as LanguageModel decodes them", () => {
  it.effect("text deltas among other parts, over several chunks: the same parts", () =>
    Effect.gen(function*() {
      const { direct, viaLanguageModel } = yield* bothPaths([
        [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "Hel" }],
        [{ type: "text-delta", id: "t", delta: "lo" }, { type: "text-delta", id: "t", delta: ", world" }],
        [{ type: "text-end", id: "t" }, FINISH]
      ])
      expect(Either.isRight(direct)).toBe(true)
      expect(direct).toEqual(viaLanguageModel)
      if (Either.isRight(direct)) {
        expect(direct.right.filter((p) => p.type === "text-delta").map((p) => p.type === "text-delta" && p.delta))
          .toEqual(["Hel", "lo", ", world"])
      }
    }))

  it.effect("a delta with metadata, or with members the Schema drops: the same parts", () =>
    Effect.gen(function*() {
      const { direct, viaLanguageModel } = yield* bothPaths([
        [{ type: "text-delta", id: "t", delta: "a", metadata: { provider: { k: 1 } } }],
        [{ type: "text-delta", id: "t", delta: "b", extra: "dropped" }]
      ])
      expect(Either.isRight(direct)).toBe(true)
      expect(direct).toEqual(viaLanguageModel)
    }))

  it.effect("a delta that does not decode fails the stream as MalformedOutput, as LanguageModel's does", () =>
    Effect.gen(function*() {
      for (const bad of [{ type: "text-delta", id: "t", delta: 5 }, { type: "text-delta", delta: "x" }, null]) {
        const { direct, viaLanguageModel } = yield* bothPaths([[{ type: "text-delta", id: "t", delta: "ok" }, bad]])
        expect(Either.isLeft(direct)).toBe(true)
        expect(Either.isLeft(viaLanguageModel)).toBe(true)
        if (Either.isLeft(direct) && Either.isLeft(viaLanguageModel)) {
          expect(direct.left).toBeInstanceOf(AiError.MalformedOutput)
          expect(direct.left.message).toEqual(viaLanguageModel.left.message)
        }
      }
    }))
})
