/**
 * Workflow mode (C20): validates a given plan, executes it as phase 1 and
 * synthesizes the draft as the response. No pipeline hook runs — no
 * BeforePlanning, AfterPlanning, AfterExecution or AfterSynthesis — but the
 * request is still recorded and finalized on every exit, and its tool and
 * model calls still go through their operation hooks (a guard that denies a
 * tool denies it here too).
 */
import { Effect, Either } from "effect"
import type { Inference } from "../../ai/Inference.js"
import * as Synthesizer from "../../ai/Synthesizer.js"
import { AgentResponse } from "../../domain/AgentResponse.js"
import { type PipelineError, PlanningError } from "../../domain/PipelineError.js"
import type * as PipelineRequest from "../../domain/PipelineRequest.js"
import * as PlanValidation from "../../domain/PlanValidation.js"
import type { RoutingPlanInput } from "../../domain/RoutingPlan.js"
import { spanned } from "../../runtime/internal/spans.js"
import type { Operations } from "../../runtime/Operations.js"
import type { PhaseLoop } from "./phaseLoop.js"
import { type ActivePreparer, preparePromptEnrichments } from "./promptValues.js"
import { redactDeep, type TextRedaction } from "./redactValues.js"
import { alreadyValidated, type Begin, confidenceOf, finalize } from "./requestRecord.js"
import type { RequestStages } from "./requestStages.js"

/** What workflow mode needs, resolved once when the pipeline is built. */
export interface WorkflowRequestDeps {
  readonly begin: Begin
  readonly inference: Inference.Service
  readonly operations: Operations
  readonly validationFor: PhaseLoop["validationFor"]
  readonly executePhase: PhaseLoop["executePhase"]
  readonly synthesisPrompt: RequestStages["synthesisPrompt"]
  readonly hookScope: RequestStages["hookScope"]
  /** The prompt-value preparer; `undefined` for the identity (no preparation at all). */
  readonly promptValues: ActivePreparer
  /** The redaction guardrail's text redaction; `undefined`: none. */
  readonly redact: TextRedaction | undefined
}

/** Builds `executePlanWithSynthesis` over its services. */
export const makeWorkflowRequest = (deps: WorkflowRequestDeps) => {
  const {
    begin,
    executePhase,
    hookScope,
    inference,
    operations,
    promptValues,
    redact,
    synthesisPrompt,
    validationFor
  } = deps

  const executePlanWithSynthesis = (
    input: PipelineRequest.Input,
    rawPlan: RoutingPlanInput
  ): Effect.Effect<AgentResponse, PipelineError> =>
    Effect.flatMap(begin(input, "workflow"), (state) => {
      const body = Effect.gen(function*() {
        const validated = PlanValidation.validate(rawPlan, validationFor(new Set()))
        if (Either.isLeft(validated)) {
          return yield* Effect.fail(
            new PlanningError({
              reason: "invalid_plan",
              phase: 1,
              detail: validated.left.message,
              cause: validated.left
            })
          )
        }
        const phase = yield* executePhase(state, 1, validated.right, [], state.call)
        // No hook runs here, but the prompt is still built from prepared values.
        const promptEnrichments = promptValues === undefined
          ? undefined
          : yield* preparePromptEnrichments(state, promptValues, state.context.enrichments)
        const draft = yield* Synthesizer.synthesize(inference, {
          prompt: synthesisPrompt(state.context, [phase], promptEnrichments),
          coordinates: { requestId: state.context.requestId },
          parent: state.call
        })
        yield* state.recorder.modify((r) => ({ ...r, rawDraft: draft }))
        const shown = redact === undefined ? draft : redact(draft)
        return new AgentResponse({
          requestId: state.context.requestId,
          response: shown,
          confidence: confidenceOf([phase]),
          metadata: { phase_count: 1, step_count: phase.steps.length },
          rawDraft: shown,
          phases: redact === undefined ? [phase] : [redactDeep(phase, redact)]
        }, alreadyValidated)
      })
      // The request is one run of the `request` operation here too: its
      // observers and guards apply to workflow calls.
      return hookScope(state, state.call === undefined ? body : operations.run(state.call, body)).pipe(
        Effect.onExit((exit) => finalize(state, exit, false)),
        spanned("pipeline.request", {
          captureStackTrace: false,
          attributes: { "pipeline.request.id": state.context.requestId, "pipeline.mode": "workflow" }
        })
      )
    })

  return executePlanWithSynthesis
}
