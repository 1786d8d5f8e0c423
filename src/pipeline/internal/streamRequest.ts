/**
 * The streaming path (seed 000 §3, DESIGN §4 step 7): everything before
 * synthesis, then the model's tokens as they come, then the final response
 * after AfterSynthesis (C12: tokens already sent stay sent; the mutated
 * string becomes the final response, the raw draft is kept separately). A
 * short-circuit answer is streamed in UTF-8-safe chunks; a suspension is one
 * event. The record is finalized when the stream ends, and a consumer that
 * stops pulling before the final event leaves an interrupted request.
 */
import { Effect, Exit, FiberId, Option, Stream } from "effect"
import type { Inference } from "../../ai/Inference.js"
import * as Synthesizer from "../../ai/Synthesizer.js"
import { Completed, type StreamEvent, Suspended, Token } from "../../domain/AgentResponse.js"
import { chunkUtf8 } from "../../domain/internal/utf8Chunks.js"
import type { PipelineError } from "../../domain/PipelineError.js"
import type * as PipelineRequest from "../../domain/PipelineRequest.js"
import type { Operations } from "../../runtime/Operations.js"
import { redactStream, type StreamGuard } from "../../runtime/Redaction.js"
import { alreadyValidated, type Begin, finalize } from "./requestRecord.js"
import type { PreSynthesis, RequestStages } from "./requestStages.js"

/** What the streaming path needs, resolved once when the pipeline is built. */
export interface StreamRequestDeps {
  readonly begin: Begin
  readonly inference: Inference.Service
  readonly operations: Operations
  readonly stages: RequestStages
  /** UTF-8 bytes per token event of a streamed short-circuit answer. */
  readonly chunkBytes: number
  /** The redaction guardrail's guard every streamed text passes; `undefined`: none. */
  readonly streamGuard: StreamGuard | undefined
}

/** Builds the streaming path: `stream` opens a request and streams its events. */
export const makeStreamRequest = (deps: StreamRequestDeps) => {
  const { begin, chunkBytes, inference, operations, streamGuard } = deps
  // A secret split across any token boundary is held back until it can be
  // redacted whole: no token event ever carries a part of one.
  const guarded = <E, R>(texts: Stream.Stream<string, E, R>): Stream.Stream<Token, E, R> =>
    (streamGuard === undefined ? texts : redactStream(streamGuard)(texts)).pipe(
      Stream.map((text) => new Token({ text }, alreadyValidated))
    )
  const { complete, enterHookScope, preSynthesis, shortCircuitResponse, synthesisPrompt } = deps.stages

  const stream = (input: PipelineRequest.Input): Stream.Stream<StreamEvent, PipelineError> =>
    Stream.unwrap(
      Effect.map(begin(input, "stream"), (state) => {
        let suspended = false
        // Set when the final event is produced: a consumer that stops pulling
        // earlier ends the stream "successfully", but the request did not finish.
        let delivered = false
        const events = (pre: PreSynthesis): Stream.Stream<StreamEvent, PipelineError> => {
          switch (pre._tag) {
            case "ShortCircuit":
              return Stream.concat(
                guarded(Stream.fromIterable(chunkUtf8(pre.accepted.shortCircuit.response, chunkBytes))),
                Stream.fromEffect(
                  Effect.map(
                    shortCircuitResponse(state, pre.accepted, pre.enrichments),
                    (response) => {
                      delivered = true
                      return new Completed({ response }, alreadyValidated)
                    }
                  )
                )
              )
            case "Suspended":
              suspended = true
              delivered = true
              return Stream.make(
                new Suspended({ requestId: state.context.requestId, checkpoint: pre.checkpoint }, alreadyValidated)
              )
            case "Synthesize": {
              // The full text comes last (after inference transforms): the draft.
              let draft = ""
              // Inference hooks of the streamed synthesis run in the request's scope.
              const tokens = guarded(
                Stream.unwrapScoped(Effect.as(
                  enterHookScope(state),
                  Synthesizer.stream(inference, {
                    prompt: synthesisPrompt(pre.context, pre.phases, pre.promptEnrichments),
                    coordinates: { requestId: state.context.requestId },
                    parent: state.call
                  })
                )).pipe(
                  Stream.filterMap((part) => {
                    if (part._tag === "Done") {
                      draft = part.text
                      return Option.none()
                    }
                    return Option.some(part.text)
                  })
                )
              ).pipe(Stream.withSpan("pipeline.synthesis", { captureStackTrace: false }))
              const final = Stream.fromEffect(
                Effect.suspend(() =>
                  Effect.map(complete(state, pre.context, pre.phases, draft), (response) => {
                    delivered = true
                    return new Completed({ response }, alreadyValidated)
                  })
                )
              )
              return Stream.concat(tokens, final)
            }
          }
        }
        // The request's run spans the whole stream (a consumer that stops
        // early cancels it); its guards wrap what happens before the first
        // token (a whole-run wrap that can still retry).
        const body: Stream.Stream<StreamEvent, PipelineError> = state.call === undefined
          ? Stream.unwrapScoped(Effect.map(preSynthesis(state), events))
          : Stream.unwrapScoped(
            Effect.as(enterHookScope(state), operations.runStream(state.call, preSynthesis(state), events))
          )
        // Every token delivered is in the record (written with the record's
        // next progress write, and kept if the request never finishes).
        let deliveredText = ""
        const recorded = state.recorder.enabled
          ? Stream.tap(body, (event) => {
            if (event._tag !== "Token") return Effect.void
            deliveredText += event.text
            const text = deliveredText
            return state.recorder.modify((r) => ({ ...r, deliveredText: text }))
          })
          : body
        return recorded.pipe(
          Stream.ensuringWith((exit) =>
            finalize(state, Exit.isSuccess(exit) && !delivered ? Exit.interrupt(FiberId.none) : exit, suspended)
          ),
          Stream.withSpan("pipeline.request", {
            captureStackTrace: false,
            attributes: { "pipeline.request.id": state.context.requestId, "pipeline.mode": "stream" }
          })
        )
      })
    )

  return stream
}
