/**
 * The streamed side of `ModelProvider.make`'s direct path: the provider's
 * own `streamText`, its encoded parts decoded with a Schema built once —
 * `LanguageModel.streamText` builds
 * `Schema.ChunkFromSelf(Response.StreamPart(Toolkit.empty))`, and so its
 * parser, on every call — inside a `LanguageModel.streamText` span with the
 * attributes `LanguageModel.make` gives it when spans are collected, with
 * the provider's `IdGenerator`, and a part that does not decode failing as
 * `MalformedOutput`, as `LanguageModel` reports it. While `@effect/ai`'s
 * span transformer is installed the stream goes through `LanguageModel`
 * (which applies it).
 */
import { AiError, IdGenerator, type LanguageModel, Prompt, Response, Toolkit } from "@effect/ai"
import { Chunk, Effect, Either, type Fiber, ParseResult, Schema, Stream } from "effect"
import { collects, inertSpan } from "../../runtime/internal/spans.js"

const decodePart = Schema.decodeEither(Response.StreamPart(Toolkit.empty))
// A chunk with a part that does not decode is decoded whole again, for `LanguageModel`'s own error (its paths index the chunk).
const decodeChunk = Schema.decode(Schema.ChunkFromSelf(Response.StreamPart(Toolkit.empty)))

/**
 * A text delta as the Schema decodes it — `type`, `id`, `delta`, empty
 * `metadata`; nothing else is kept — or `undefined` for any other part.
 */
const plainDelta = (part: Response.StreamPartEncoded): Response.TextDeltaPart | undefined =>
  // Checked as the Schema would check them: a provider's parts are not trusted to match their type.
  typeof part === "object" && part !== null && part.type === "text-delta" && typeof part.id === "string" &&
    typeof part.delta === "string" && part.metadata === undefined
    ? Response.textDeltaPart({ id: part.id, delta: part.delta })
    : undefined

/**
 * The encoded parts of a chunk, decoded. Text deltas — nearly every part
 * of a stream — are built directly (decoding one through the parts' union
 * Schema cost about 12 µs, a fifth of a streamed token's whole cost); any
 * other part goes through the Schema, and a chunk with a part that does not
 * decode fails as `LanguageModel.streamText` fails it.
 */
const decodeParts = (
  parts: Chunk.Chunk<Response.StreamPartEncoded>
): Effect.Effect<Chunk.Chunk<Response.StreamPart<{}>>, ParseResult.ParseError> => {
  const decoded: Array<Response.StreamPart<{}>> = []
  for (const part of parts) {
    const delta = plainDelta(part)
    if (delta !== undefined) decoded.push(delta)
    else {
      const other = decodePart(part)
      if (Either.isLeft(other)) return decodeChunk(parts)
      decoded.push(other.right)
    }
  }
  return Effect.succeed(Chunk.unsafeFromArray(decoded))
}

// The attributes `LanguageModel.make` puts on its span, kept identical.
const streamSpan = { captureStackTrace: false, attributes: { concurrency: undefined, toolChoice: undefined } }
const textFormat = { type: "text" } as const

/**
 * The direct `streamText` of a provider built from `params`: `transformed`
 * says, on the calling fiber, whether `@effect/ai`'s span transformer is
 * installed (then `languageModel` streams it).
 */
export const streamDirect = (
  params: LanguageModel.ConstructorParams,
  languageModel: LanguageModel.Service,
  idGenerator: IdGenerator.Service,
  transformed: (fiber: Fiber.RuntimeFiber<unknown, unknown>) => boolean
) =>
(prompt: string): Stream.Stream<Response.StreamPart<{}>, AiError.AiError> =>
  Stream.unwrapScoped(Effect.withFiberRuntime((fiber) => {
    if (transformed(fiber)) return Effect.succeed(languageModel.streamText({ prompt }))
    const opened = collects(fiber)
      ? Effect.makeSpanScoped("LanguageModel.streamText", streamSpan)
      : Effect.succeed(inertSpan)
    return Effect.map(
      opened,
      (span) =>
        params.streamText({
          prompt: Prompt.make(prompt),
          tools: [],
          toolChoice: "none",
          responseFormat: textFormat,
          span
        })
          .pipe(
            Stream.mapChunksEffect(decodeParts),
            Stream.mapError((error) =>
              ParseResult.isParseError(error)
                ? AiError.MalformedOutput.fromParseError({ module: "LanguageModel", method: "streamText", error })
                : error
            ),
            Stream.provideService(IdGenerator.IdGenerator, idGenerator)
          )
    )
  }))
