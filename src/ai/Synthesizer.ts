/**
 * Synthesis: the answer drafted from the step results, buffered or streamed,
 * through the `Inference` seam (so inference hooks see the call). Model
 * failures are `SynthesisError`, an answer over the model policy's
 * `maxOutputBytes` too (`output_too_large`: a stream stops at the limit,
 * what was sent staying sent).
 *
 * @since 0.1.0
 */
import type { Effect, Stream } from "effect"
import type { HookDenied, HookFailed, SynthesisError } from "../domain/PipelineError.js"
import { withSpan } from "../runtime/internal/spans.js"
import type { Inference, InferenceRequest, StreamPart } from "./Inference.js"

/**
 * The buffered draft.
 *
 * @since 0.1.0
 * @category utils
 */
export const synthesize = (
  inference: Inference.Service,
  request: InferenceRequest
): Effect.Effect<string, SynthesisError | HookDenied | HookFailed> =>
  withSpan(inference.complete(request), "Synthesizer.synthesize", spanOptions)

const spanOptions = { captureStackTrace: false } as const

/**
 * The streamed draft: text deltas (a surrogate pair split across deltas is
 * re-joined, so no delta ends in half a character), then the full text.
 *
 * @since 0.1.0
 * @category utils
 */
export const stream = (
  inference: Inference.Service,
  request: InferenceRequest
): Stream.Stream<StreamPart, SynthesisError | HookDenied | HookFailed> => inference.stream(request)
