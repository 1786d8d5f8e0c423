/**
 * Synthesis over `@effect/ai`: buffered (`generateText`) or streamed
 * (`streamText`, text deltas only). Model failures become `SynthesisError`.
 *
 * @since 0.1.0
 */
import type { LanguageModel } from "@effect/ai"
import { Effect, Option, Stream } from "effect"
import { SynthesisError } from "../domain/PipelineError.js"
import { joinSurrogates } from "../domain/Utf8Chunks.js"

const toError = (error: { readonly message: string }) =>
  new SynthesisError({ detail: error.message.slice(0, 400), cause: error })

/**
 * The buffered draft.
 *
 * @since 0.1.0
 */
export const synthesize = Effect.fn("Synthesizer.synthesize", { captureStackTrace: false })(function*(model: LanguageModel.Service, prompt: string) {
  const response = yield* Effect.mapError(model.generateText({ prompt }), toError)
  return response.text
})

/**
 * The streamed draft as text deltas; a surrogate pair split across deltas is
 * re-joined so no emitted string ends in half a character.
 *
 * @since 0.1.0
 */
export const stream = (model: LanguageModel.Service, prompt: string): Stream.Stream<string, SynthesisError> =>
  model.streamText({ prompt }).pipe(
    Stream.mapError(toError),
    Stream.filterMap((part) => (part.type === "text-delta" ? Option.some(part.delta) : Option.none())),
    joinSurrogates
  )
