/**
 * The buffered path (seed 000 §3, DESIGN §4): everything before synthesis,
 * then the whole draft at once, then AfterSynthesis — or the short-circuit
 * answer, or the HITL suspension. The request's record is finalized on every
 * exit (`owned`).
 */
import { Effect } from "effect"
import type { Inference } from "../../ai/Inference.js"
import * as Synthesizer from "../../ai/Synthesizer.js"
import { Completed, Suspended } from "../../domain/AgentResponse.js"
import type { Checkpoint } from "../../domain/Checkpoint.js"
import type { PipelineError } from "../../domain/PipelineError.js"
import type * as PipelineRequest from "../../domain/PipelineRequest.js"
import { spanned } from "../../runtime/internal/spans.js"
import type { Operations } from "../../runtime/Operations.js"
import { alreadyValidated, type Begin, owned, type RequestState } from "./requestRecord.js"
import type { RequestStages } from "./requestStages.js"

/** What the buffered path needs, resolved once when the pipeline is built. */
export interface BufferedRequestDeps {
  readonly begin: Begin
  readonly inference: Inference.Service
  readonly stages: RequestStages
  readonly operations: Operations
}

/** Builds the buffered path: `buffered` runs an opened request, `process` opens one and runs it. */
export const makeBufferedRequest = (deps: BufferedRequestDeps) => {
  const { begin, inference, operations } = deps
  const { complete, hookScope, preSynthesis, shortCircuitResponse, synthesisPrompt } = deps.stages

  // The request's scope is opened once around the whole path (the stages
  // and the synthesis call find it open).
  const body = Effect.fnUntraced(function*(state: RequestState, resume?: { readonly checkpoint: Checkpoint }) {
    const pre = yield* preSynthesis(state, resume)
    switch (pre._tag) {
      case "ShortCircuit":
        return new Completed(
          { response: yield* shortCircuitResponse(state, pre.accepted, pre.enrichments) },
          alreadyValidated
        )
      case "Suspended":
        return new Suspended({ requestId: state.context.requestId, checkpoint: pre.checkpoint }, alreadyValidated)
      case "Synthesize": {
        const draft = yield* Synthesizer.synthesize(inference, {
          prompt: synthesisPrompt(pre.context, pre.phases, pre.promptEnrichments),
          coordinates: { requestId: state.context.requestId },
          parent: state.call
        }).pipe(
          spanned("pipeline.synthesis", { captureStackTrace: false })
        )
        return new Completed({ response: yield* complete(state, pre.context, pre.phases, draft) }, alreadyValidated)
      }
    }
  })
  const buffered = (state: RequestState, resume?: { readonly checkpoint: Checkpoint }) =>
    hookScope(state, body(state, resume))

  const process = (input: PipelineRequest.Input): Effect.Effect<Completed | Suspended, PipelineError> =>
    Effect.flatMap(
      begin(input, "pipeline"),
      (state) => owned(state, buffered(state), "pipeline", operations, hookScope)
    )

  return { buffered, process }
}
