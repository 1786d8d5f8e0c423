/**
 * The phase loop (seed 000 §3, DESIGN §4 steps 3–6): each phase plans,
 * runs AfterPlanning once on the final validated plan (C8, C9), lets the
 * HITL policy suspend with a checkpoint, then executes the steps; phases
 * follow until a terminal plan, a suspension or the phase limit. A
 * suspension saves a checkpoint sealed with the agent's checkpoint key (its
 * plan's digest and a MAC over all it holds: DESIGN §7). A HITL resume
 * executes the approved plan as is.
 */
import { Clock, type Duration, Effect, Option } from "effect"
import type { Inference } from "../../ai/Inference.js"
import * as Planner from "../../ai/Planner.js"
import * as ToolCalls from "../../ai/ToolCalls.js"
import type { ToolRegistry } from "../../ai/ToolRegistry.js"
import type { PhaseRecord, StepResult } from "../../domain/ExecutionRecord.js"
import type { CallRef } from "../../domain/Operation.js"
import { CheckpointError } from "../../domain/PipelineError.js"
import type * as PlanValidation from "../../domain/PlanValidation.js"
import type { RoutingPlan } from "../../domain/RoutingPlan.js"
import { spanned } from "../../runtime/internal/spans.js"
import type { Operations } from "../../runtime/Operations.js"
import type { CheckpointKey } from "../../stores/CheckpointKey.js"
import type { CheckpointStore } from "../../stores/CheckpointStore.js"
import type { AfterPlanning } from "../AfterPlanning.js"
import type { ApprovalPolicy } from "../Approval.js"
import type * as PromptBuilder from "../PromptBuilder.js"
import * as PlanExecutor from "./planExecutor.js"
import { newId, recordPhase, type RequestState, updatePhase } from "./requestRecord.js"

/** What the phase loop needs, resolved once when the pipeline is built. */
export interface PhaseLoopDeps {
  readonly concurrency: number
  readonly maxPhases: number
  readonly toolTimeout: Duration.Duration
  /** The largest tool result kept (its JSON text, bytes); a larger one fails its step. */
  readonly maxToolResultBytes: number
  readonly inference: Inference.Service
  readonly tools: ToolRegistry.Service
  readonly operations: Operations
  readonly afterPlanning: AfterPlanning.Service
  readonly checkpoints: CheckpointStore["Type"]
  /** Seals every checkpoint this loop saves. */
  readonly checkpointKey: CheckpointKey.Service
  readonly approval: Option.Option<ApprovalPolicy["Type"]>
  readonly prompts: PromptBuilder.PromptBuilder.Service
}

/** Builds the phase loop over its services. */
export const makePhaseLoop = (deps: PhaseLoopDeps) => {
  const {
    afterPlanning,
    approval,
    checkpointKey,
    checkpoints,
    concurrency,
    inference,
    maxPhases,
    operations,
    prompts,
    toolTimeout,
    tools
  } = deps
  // The registered tools' caller is built once; a request with tools of its
  // own (added by a BeforePlanning hook) gets one over its extended registry.
  const registeredCaller = ToolCalls.make(tools, operations, toolTimeout, deps.maxToolResultBytes)
  const callerOf = (state: RequestState) =>
    state.tools === undefined
      ? registeredCaller
      : ToolCalls.make(state.tools, operations, toolTimeout, deps.maxToolResultBytes)

  const validationFor = (
    priorStepIds: ReadonlySet<string>,
    registry: ToolRegistry.Service = tools
  ): PlanValidation.ValidationContext => ({
    hasTool: registry.has,
    priorStepIds
  })

  const executePhase = Effect.fnUntraced(function*(
    state: RequestState,
    phase: number,
    plan: RoutingPlan,
    prior: ReadonlyArray<PhaseRecord>,
    parent?: CallRef | undefined,
    /** Wraps each tool call (a durable request runs each as an activity). */
    around?: ((call: ToolCalls.Caller) => ToolCalls.Caller) | undefined
  ) {
    const priorResults = new Map<string, StepResult>()
    for (const p of prior) for (const s of p.steps) priorResults.set(s.step_id, s)
    // The phase is in the record from now on: its plan, each step's
    // result as it ends and the steps in flight (an interrupted request,
    // or one whose process died, keeps them).
    const progress = state.recorder.enabled && plan.steps.length > 0
    if (progress) yield* recordPhase(state, { phase, plan, steps: [], running: [] })
    const steps = yield* PlanExecutor.execute(state.tools ?? tools, plan, priorResults, {
      concurrency,
      callTool: around === undefined ? callerOf(state) : around(callerOf(state)),
      phase: { requestId: state.context.requestId, phase, parent }
    })
    const record: PhaseRecord = { phase, plan, steps }
    yield* progress ? updatePhase(state, phase, () => record) : recordPhase(state, record)
    return record
  })

  /** Runs a phase's body as one run of the `phase` operation. */
  const withPhaseRun = <A, E>(
    state: RequestState,
    phase: number,
    resumed: boolean,
    body: (parent: CallRef | undefined) => Effect.Effect<A, E>
  ) =>
    operations.withOperation({
      operation: "phase",
      coordinates: { requestId: state.context.requestId, phase },
      parent: state.call,
      payload: { phase, resumed }
    })(body)

  /**
   * A phase's plan: the planning call, AfterPlanning on its validated plan,
   * then the HITL policy's verdict on it (`suspend`: its reason, when the
   * policy suspends).
   */
  const planPhase = Effect.fnUntraced(function*(
    state: RequestState,
    phase: number,
    phases: ReadonlyArray<PhaseRecord>,
    parent: CallRef | undefined
  ) {
    const priorStepIds = new Set(phases.flatMap((p) => p.steps.map((s) => s.step_id)))
    const input: PromptBuilder.PromptInput = {
      request: state.context.request,
      // Prepared once per request snapshot (`PromptPreparation`); the raw snapshot with the identity.
      enrichments: { ...(state.promptEnrichments ?? state.context.enrichments) },
      tools: (state.tools ?? tools).descriptors,
      phase,
      priorResults: phases.flatMap((p) => p.steps)
    }
    const prompt = phases.length === 0
      ? prompts.buildPlanningPrompt(input)
      : prompts.buildContinuationPrompt(input)
    const validation = validationFor(priorStepIds, state.tools ?? tools)
    const candidate = yield* Planner.plan(
      inference,
      {
        prompt,
        coordinates: { requestId: state.context.requestId, phase },
        parent
      },
      phase,
      validation
    )
    const plan = yield* afterPlanning.run(state, candidate, { phase, priorStepIds: [...priorStepIds], validation })
    if (Option.isNone(approval)) return { plan, suspend: undefined }
    const verdict = yield* approval.value.evaluate(state.context, plan, phase)
    return { plan, suspend: verdict._tag === "Suspend" ? verdict.reason : undefined }
  })

  /**
   * One phase: plan, AfterPlanning, HITL, execute. With `approved`, the phase
   * executes that plan as is (a HITL resume: no planning, no AfterPlanning,
   * no HITL).
   */
  const phaseBody = Effect.fnUntraced(function*(
    state: RequestState,
    phase: number,
    phases: ReadonlyArray<PhaseRecord>,
    approved: RoutingPlan | undefined,
    parent: CallRef | undefined
  ) {
    let plan: RoutingPlan
    if (approved !== undefined) {
      plan = approved
    } else {
      const planned = yield* planPhase(state, phase, phases, parent)
      plan = planned.plan
      if (planned.suspend !== undefined) {
        // Sealed: the plan's digest (what the approver is shown) and a
        // MAC over everything a resume will act on.
        const checkpoint = checkpointKey.seal({
          checkpointId: newId(),
          requestId: state.context.requestId,
          request: state.context.request,
          metadata: state.context.metadata,
          enrichments: state.context.enrichments,
          phase,
          plan,
          priorPhases: [...phases],
          reason: planned.suspend,
          createdAt: yield* Clock.currentTimeMillis
        })
        yield* checkpoints.save(checkpoint).pipe(
          Effect.mapError((e) =>
            new CheckpointError({ reason: "not_saved", checkpointId: checkpoint.checkpointId, detail: e.message })
          )
        )
        yield* state.recorder.modify((r) => ({ ...r, checkpointId: checkpoint.checkpointId }))
        return { _tag: "Suspended", checkpoint } as const
      }
    }
    const executed = yield* executePhase(state, phase, plan, phases, parent).pipe(
      spanned("pipeline.execution", { captureStackTrace: false, attributes: { "pipeline.phase": phase } })
    )
    return { _tag: "Executed", executed, terminal: plan.terminal } as const
  })
  const runPhase = (
    state: RequestState,
    phase: number,
    phases: ReadonlyArray<PhaseRecord>,
    approved: RoutingPlan | undefined
  ) =>
    withPhaseRun(state, phase, approved !== undefined, (parent) => phaseBody(state, phase, phases, approved, parent))
      .pipe(
        spanned("pipeline.phase", {
          captureStackTrace: false,
          attributes: { "pipeline.phase": phase, "pipeline.phase.resumed": approved !== undefined }
        })
      )

  /** Runs phases from `startPhase` until a terminal plan, a suspension or the phase limit. */
  const runPhases = Effect.fnUntraced(function*(
    state: RequestState,
    startPhase: number,
    priorPhases: ReadonlyArray<PhaseRecord>,
    approved: RoutingPlan | undefined
  ) {
    const phases: Array<PhaseRecord> = [...priorPhases]
    for (let phase = startPhase; phase <= maxPhases; phase++) {
      const outcome = yield* runPhase(state, phase, phases, phase === startPhase ? approved : undefined)
      if (outcome._tag === "Suspended") return outcome
      phases.push(outcome.executed)
      if (outcome.terminal) break
      if (phase === maxPhases) {
        const note = `phase limit ${maxPhases} reached before a terminal plan; synthesizing`
        yield* Effect.logWarning(note)
        yield* state.recorder.modify((r) => ({ ...r, diagnostics: [...r.diagnostics, note] }))
      }
    }
    return { _tag: "Done", phases } as const
  })

  return { validationFor, executePhase, planPhase, withPhaseRun, runPhases }
}

/** The phase loop built by {@link makePhaseLoop}. */
export type PhaseLoop = ReturnType<typeof makePhaseLoop>
