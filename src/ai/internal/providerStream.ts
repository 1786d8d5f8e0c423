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
import { Effect, type Fiber, ParseResult, Schema, Stream } from "effect"
import { collects, inertSpan } from "../../runtime/internal/spans.js"

const decodeParts = Schema.decode(Schema.ChunkFromSelf(Response.StreamPart(Toolkit.empty)))
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
