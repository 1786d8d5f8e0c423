/**
 * A request as a durable workflow (issue 24): the same lifecycle as
 * `Pipeline.process`, with each non-deterministic region an activity of
 * `@effect/workflow` — the BeforePlanning hooks, each phase (inside it, its
 * planning and each tool call), AfterExecution, synthesis with
 * AfterSynthesis — and a human approval a `DurableDeferred` bound to the
 * plan's digest. The body between them is deterministic, so a replay (after
 * a crash, in any process; or after an approval) returns the stored result
 * of every completed region without running it: no completed hook or tool
 * runs again and no invocation is recorded twice.
 *
 * The execution record stays truthful across processes: each execution
 * takes the stored record over (`running`, under its own lease), every
 * region writes the record before its result is stored, and a region that
 * starts again — its process died inside it — says so in the record's
 * diagnostics (`durable: <region> started (attempt n)`), next to the runs
 * its earlier attempt left.
 */
import { DurableDeferred, Workflow } from "@effect/workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { type Context, Effect, Exit, Option, Schema } from "effect"
import * as Synthesizer from "../../ai/Synthesizer.js"
import { Completed, Rejected } from "../../domain/AgentResponse.js"
import { PhaseRecord as PhaseRecordSchema } from "../../domain/ExecutionRecord.js"
import type { PhaseRecord } from "../../domain/ExecutionRecord.js"
import { HookContractError } from "../../domain/HookError.js"
import type { CallRef } from "../../domain/Operation.js"
import { CheckpointError, InvalidRequest, PipelineError } from "../../domain/PipelineError.js"
import type { RoutingPlan } from "../../domain/RoutingPlan.js"
import { durableApprovalId, type PipelineParts } from "../../pipeline/internal/pipelineParts.js"
import { preparePromptEnrichments } from "../../pipeline/internal/promptValues.js"
import { alreadyValidated, finalize, type RequestState } from "../../pipeline/internal/requestRecord.js"
import { spanned } from "../../runtime/internal/spans.js"
import { makeRegion, stepActivities } from "./durableRegions.js"
import {
  ApprovalSignal,
  BeforePlanningResult,
  DurableResult,
  PhaseResult,
  PlannedPhase,
  RequestPayload
} from "./durableSchemas.js"

/** The workflow a durable request runs as. */
export const makeRequestWorkflow = (name: string) =>
  Workflow.make({
    name,
    payload: RequestPayload,
    success: DurableResult,
    error: PipelineError,
    // One execution per request id: submitting the same request again joins it.
    idempotencyKey: (payload) => payload.requestId
  })

/** The workflow of {@link makeRequestWorkflow}. */
export type RequestWorkflow = ReturnType<typeof makeRequestWorkflow>

/** The approval of phase `phase`, as the workflow awaits it. */
export const approvalOf = (phase: number) => DurableDeferred.make(`approval/${phase}`, { success: ApprovalSignal })

/** The workflow's payload, decoded. */
type Payload = Schema.Schema.Type<Schema.Struct<typeof RequestPayload>>

/** Builds the workflow's body over a pipeline's parts. */
export const makeDurableRequest = (parts: PipelineParts, workflow: RequestWorkflow) => {
  const { begin, checkpointKey, checkpoints, inference, maxPhases, operations, phases, promptValues, stages, store } =
    parts
  const region = makeRegion(stages.hookScope)
  const { hookScope } = stages

  /** The request's record: created by its first execution, taken over by every later one. */
  const open = Effect.fnUntraced(function*(payload: Payload) {
    const stored = yield* store.get(payload.requestId).pipe(
      // A store that cannot answer: the create below finds out whether the id is taken.
      Effect.catchTags({
        ExecutionStoreError: () => Effect.succeed(Option.none()),
        // Fail closed: a record that does not decode is not continued.
        RecordDecodeError: (error) =>
          new InvalidRequest({
            reason: "request_id_in_use",
            path: "requestId",
            detail: `the stored record of "${payload.requestId}" does not decode: ${error.message}`
          })
      })
    )
    if (Option.isNone(stored)) return yield* begin(payload, "durable")
    const record = stored.value
    if (record.mode !== "durable" || record.request !== payload.request) {
      return yield* new InvalidRequest({
        reason: "request_id_in_use",
        path: "requestId",
        detail: `"${payload.requestId}" already names the stored record of another request`
      })
    }
    return yield* begin(payload, "durable", {
      record,
      note: `durable: execution continued (the record was ${record.lifecycle?.status ?? "unknown"})`
    })
  })

  /** A phase's steps under its run (`parent`), each tool call an activity. */
  const runSteps = (
    state: RequestState,
    phase: number,
    plan: RoutingPlan,
    done: ReadonlyArray<PhaseRecord>,
    parent: CallRef | undefined,
    context: Context.Context<WorkflowEngine | WorkflowInstance>
  ) =>
    phases.executePhase(state, phase, plan, done, parent, stepActivities(state, phase, context)).pipe(
      spanned("pipeline.execution", { captureStackTrace: false, attributes: { "pipeline.phase": phase } })
    )

  /** Phase `phase`: its plan (an activity of its own), then its steps — or the plan's approval checkpoint. */
  const phaseRegion = (state: RequestState, phase: number, done: ReadonlyArray<PhaseRecord>) =>
    region(
      state,
      `phase/${phase}`,
      PhaseResult,
      Effect.flatMap(Effect.context<WorkflowEngine | WorkflowInstance>(), (context) =>
        phases.withPhaseRun(state, phase, false, (parent) =>
          Effect.gen(function*() {
            const planned = yield* region(
              state,
              `phase/${phase}/plan`,
              PlannedPhase,
              phases.planPhase(state, phase, done, parent)
            ).pipe(Effect.provide(context))
            if (planned.suspend !== undefined) {
              // Sealed and saved as any checkpoint is (its approver sees it
              // where HITL approvers look); the decision comes back as the
              // approval's signal.
              const checkpoint = checkpointKey.seal({
                checkpointId: durableApprovalId(state.context.requestId, phase),
                requestId: state.context.requestId,
                request: state.context.request,
                metadata: state.context.metadata,
                enrichments: state.context.enrichments,
                phase,
                plan: planned.plan,
                priorPhases: [...done],
                reason: planned.suspend,
                createdAt: yield* Effect.clockWith((clock) =>
                  clock.currentTimeMillis
                )
              })
              yield* checkpoints.save(checkpoint).pipe(
                Effect.mapError((e) =>
                  new CheckpointError({ reason: "not_saved", checkpointId: checkpoint.checkpointId, detail: e.message })
                )
              )
              yield* state.recorder.modify((r) => ({ ...r, checkpointId: checkpoint.checkpointId }))
              return {
                _tag: "AwaitingApproval",
                checkpointId: checkpoint.checkpointId,
                plan: planned.plan,
                planDigest: checkpoint.planDigest
              } as const
            }
            const record = yield* runSteps(state, phase, planned.plan, done, parent, context)
            return { _tag: "Executed", record, terminal: planned.plan.terminal } as const
          }))).pipe(spanned("pipeline.phase", { captureStackTrace: false, attributes: { "pipeline.phase": phase } }))
    )

  const body = Effect.fnUntraced(function*(state: RequestState) {
    const requestId = state.context.requestId
    const before = yield* region(
      state,
      "before_planning",
      BeforePlanningResult,
      Effect.gen(function*() {
        const outcome = yield* stages.runBeforePlanning(state)
        if (outcome.shortCircuit !== undefined) {
          const response = yield* stages.shortCircuitResponse(state, outcome.shortCircuit, outcome.enrichments)
          return { _tag: "ShortCircuit", response } as const
        }
        if (outcome.tools !== undefined && outcome.tools.length > 0) {
          return yield* new HookContractError({
            hookName: outcome.tools.map((t) => `${t.namespace}/${t.agent}/${t.tool.name}`).join(", "),
            stage: "before_planning",
            reason: "not_durable",
            detail: "a durable request cannot use tools a hook added (extra_tools): another process resuming it " +
              "would not have them; register them with the agent"
          })
        }
        if (promptValues === undefined) return { _tag: "Plan", enrichments: outcome.enrichments } as const
        const promptEnrichments = yield* preparePromptEnrichments(
          { ...state, context: { ...state.context, enrichments: outcome.enrichments } },
          promptValues,
          outcome.enrichments
        )
        return { _tag: "Plan", enrichments: outcome.enrichments, promptEnrichments } as const
      })
    )
    if (before._tag === "ShortCircuit") return new Completed({ response: before.response }, alreadyValidated)

    // Every phase's prompt and every later stage sees this request-start snapshot.
    const context = Object.freeze({ ...state.context, enrichments: Object.freeze({ ...before.enrichments }) })
    const request: RequestState = { ...state, context, promptEnrichments: before.promptEnrichments }
    const done: Array<PhaseRecord> = []
    for (let phase = 1; phase <= maxPhases; phase++) {
      const outcome = yield* phaseRegion(request, phase, done)
      let executed: PhaseRecord
      let terminal: boolean
      if (outcome._tag === "AwaitingApproval") {
        const signal = yield* DurableDeferred.await(approvalOf(phase))
        // Bound to the plan: a decision about any other plan decides nothing.
        if (signal.planDigest !== outcome.planDigest) {
          return yield* new CheckpointError({
            reason: "plan_mismatch",
            checkpointId: outcome.checkpointId,
            detail: "the approval was given for another plan"
          })
        }
        if (signal.decision === "reject") {
          return new Rejected({ requestId, checkpointId: outcome.checkpointId, phase, reason: "rejected by approver" })
        }
        // The approved plan as is, as a resumed run of the phase.
        const approved = outcome.plan
        executed = yield* region(
          request,
          `phase/${phase}/approved`,
          PhaseRecordSchema,
          Effect.flatMap(
            Effect.context<WorkflowEngine | WorkflowInstance>(),
            (context) =>
              phases.withPhaseRun(request, phase, true, (parent) => {
                // The required boundary again, as a HITL resume runs it: its
                // rule may have changed while the plan awaited its approver.
                const priorStepIds = done.flatMap((p) => p.steps.map((s) => s.step_id))
                return Effect.zipRight(
                  parts.afterPlanning.runRequired(request, approved, {
                    phase,
                    priorStepIds,
                    validation: phases.validationFor(new Set(priorStepIds))
                  }),
                  runSteps(request, phase, approved, done, parent, context)
                )
              })
          )
        )
        terminal = outcome.plan.terminal
      } else {
        executed = outcome.record
        terminal = outcome.terminal
      }
      done.push(executed)
      // What the region's stored result says ran is in the record, whichever execution wrote it.
      yield* request.recorder.modify((r) =>
        r.phases.some((p) => p.phase === phase) ? r : { ...r, phases: [...r.phases, executed] }
      )
      if (terminal) break
      if (phase === maxPhases) {
        const note = `phase limit ${maxPhases} reached before a terminal plan; synthesizing`
        yield* Effect.logWarning(note)
        // Once, whichever execution gets here first.
        yield* state.recorder.modify((r) =>
          r.diagnostics.includes(note) ? r : { ...r, diagnostics: [...r.diagnostics, note] }
        )
      }
    }
    yield* region(request, "after_execution", Schema.Void, stages.runAfterExecution(request, done))
    const response = yield* region(
      request,
      "synthesis",
      Completed.fields.response,
      Effect.gen(function*() {
        const draft = yield* Synthesizer.synthesize(inference, {
          prompt: stages.synthesisPrompt(context, done, before.promptEnrichments),
          coordinates: { requestId },
          parent: state.call
        }).pipe(spanned("pipeline.synthesis", { captureStackTrace: false }))
        return yield* stages.complete(request, context, done, draft)
      })
    )
    yield* state.recorder.modify((r) => r.finalResponse === undefined ? { ...r, finalResponse: response.response } : r)
    return new Completed({ response }, alreadyValidated)
  })

  /**
   * One execution of the workflow: the record opened (or taken over), the
   * body as the execution's run of the `request` operation, and the record
   * finalized on its exit — `suspended` while the workflow awaits an
   * approval (the engine interrupts a suspended execution).
   */
  const execute = (payload: Payload) =>
    Effect.gen(function*() {
      const instance = yield* WorkflowInstance
      const context = yield* Effect.context<WorkflowEngine | WorkflowInstance>()
      const state = yield* open(payload)
      const provided = Effect.provide(body(state), context)
      const run = state.call === undefined ? provided : operations.run(state.call, provided)
      return yield* hookScope(state, run).pipe(
        Effect.onExit((exit) =>
          instance.suspended && Exit.isInterrupted(exit)
            ? finalize(state, Exit.void, true)
            : finalize(state, exit, false)
        ),
        spanned("pipeline.request", {
          captureStackTrace: false,
          attributes: { "pipeline.request.id": state.context.requestId, "pipeline.mode": "durable" }
        })
      )
    })

  return { workflow, execute }
}
