/**
 * The stages around the phase loop, shared by the buffered and streaming
 * paths (seed 000 §3, DESIGN §4 steps 2 and 7): before synthesis,
 * BeforePlanning (the first accepted short-circuit wins, C4) → phases →
 * AfterExecution (C11); after it, the raw draft is recorded and
 * AfterSynthesis chains the final response (C12).
 */
import { Effect, FiberRef, Option, type Scope } from "effect"
import * as ToolRegistry from "../../ai/ToolRegistry.js"
import { AgentResponse } from "../../domain/AgentResponse.js"
import type { Checkpoint } from "../../domain/Checkpoint.js"
import type { PhaseRecord } from "../../domain/ExecutionRecord.js"
import type { JsonObject } from "../../domain/Json.js"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { PipelineError } from "../../domain/PipelineError.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import { spanned } from "../../runtime/internal/spans.js"
import type { Operations } from "../../runtime/Operations.js"
import * as RequestScope from "../../runtime/RequestScope.js"
import type { AfterExecution } from "../AfterExecution.js"
import type { AfterSynthesis } from "../AfterSynthesis.js"
import type { AcceptedShortCircuit, BeforePlanning } from "../BeforePlanning.js"
import type { ExecutionResults } from "../Hook.js"
import type * as PromptBuilder from "../PromptBuilder.js"
import * as ShortCircuit from "../ShortCircuit.js"
import type { PhaseLoop } from "./phaseLoop.js"
import { type ActivePreparer, preparePromptEnrichments } from "./promptValues.js"
import { redactDeep, redactObject, type TextRedaction } from "./redactValues.js"
import { alreadyValidated, confidenceOf, type RequestState } from "./requestRecord.js"

/** Where a request stands when synthesis would start. */
export type PreSynthesis =
  | { readonly _tag: "ShortCircuit"; readonly accepted: AcceptedShortCircuit; readonly enrichments: JsonObject }
  | { readonly _tag: "Suspended"; readonly checkpoint: Checkpoint }
  | {
    readonly _tag: "Synthesize"
    readonly context: PipelineContext
    readonly phases: ReadonlyArray<PhaseRecord>
    /** The prepared enrichments prompts use (`undefined`: the identity preparer, `context.enrichments`). */
    readonly promptEnrichments: JsonObject | undefined
  }

/** What the stages need, resolved once when the pipeline is built. */
export interface RequestStagesDeps {
  readonly recording: boolean
  readonly maxEnrichmentBytes: number
  readonly beforePlanning: BeforePlanning.Service
  readonly afterExecution: AfterExecution.Service
  readonly afterSynthesis: AfterSynthesis.Service
  readonly gate: Option.Option<ShortCircuit.Gate["Type"]>
  readonly prompts: PromptBuilder.PromptBuilder.Service
  /** The prompt-value preparer; `undefined` for the identity (no preparation at all). */
  readonly promptValues: ActivePreparer
  readonly runPhases: PhaseLoop["runPhases"]
  readonly operations: Operations
  readonly tools: ToolRegistry.ToolRegistry.Service
  /** Redacts what leaves the pipeline (the redaction guardrail); `undefined`: nothing is redacted. */
  readonly redact: TextRedaction | undefined
}

/** Sets the request scope and the effect-reporting slot of the running fiber. */
const setScope = (
  request: RequestScope.RequestHandle | undefined,
  slot: HookEffects.InvocationSlot
): Effect.Effect<void> =>
  Effect.zipRight(FiberRef.set(RequestScope.currentRequest, request), FiberRef.set(HookEffects.currentInvocation, slot))

const toResults = (phases: ReadonlyArray<PhaseRecord>): ExecutionResults => ({
  phases,
  steps: phases.flatMap((p) => p.steps)
})

/** A gate that cannot be read: cache reads off (a cache decision is never accepted on a broken gate). */
const closedGate: ShortCircuit.PipelineGate = { cacheReadEnabled: false, cacheVary: {} }

/**
 * The request's gate, checked: a `forRequest` that throws or returns
 * something that is not a gate fails closed — cache reads off for this
 * request — instead of failing it.
 */
const gateFor = (gate: ShortCircuit.Gate["Type"], context: PipelineContext): ShortCircuit.PipelineGate => {
  try {
    const given: unknown = gate.forRequest(context)
    if (typeof given !== "object" || given === null) return closedGate
    const { cacheReadEnabled, cacheVary } = given as Record<string, unknown>
    if (
      typeof cacheReadEnabled !== "boolean" || typeof cacheVary !== "object" || cacheVary === null ||
      Array.isArray(cacheVary)
    ) {
      return closedGate
    }
    const vary: Record<string, string> = {}
    for (const key of Object.keys(cacheVary)) {
      const value = (cacheVary as Record<string, unknown>)[key]
      if (typeof value !== "string") return closedGate
      vary[key] = value
    }
    return { cacheReadEnabled, cacheVary: vary }
  } catch {
    return closedGate
  }
}

/** Builds the stages over their services. */
export const makeRequestStages = (deps: RequestStagesDeps) => {
  const {
    afterExecution,
    afterSynthesis,
    beforePlanning,
    gate,
    maxEnrichmentBytes,
    operations,
    prompts,
    promptValues,
    recording,
    redact,
    runPhases,
    tools
  } = deps

  // Hooks and tools run only inside `preSynthesis` and `complete`: there they
  // see the request scope and the fiber's own effect-reporting slot (with
  // recording off, reporting is disabled — a no-op — once per stage rather
  // than once per invocation).
  const hookScope = <A, E>(state: RequestState, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.withFiberRuntime((fiber) => {
      // Already inside this request's scope (the buffered path opens it once
      // around everything): nothing to set. A request's scope and recorder
      // come from one state (`begin`, a resume's `run`), so the handle set
      // holds `state.recorder` too — what the stages record on.
      const previousRequest = fiber.getFiberRef(RequestScope.currentRequest)
      if (previousRequest?.scope === state.scope) return effect
      // `Effect.locally` twice, in one region: both values set on entry and
      // put back on every exit (about a third of the interpreter steps of two
      // nested `locally`, which each wrap an acquire/use/release).
      const previousSlot = fiber.getFiberRef(HookEffects.currentInvocation)
      return Effect.onExit(
        Effect.zipRight(
          setScope(
            {
              scope: state.scope,
              requestId: state.context.requestId,
              recorder: state.recorder,
              call: state.call,
              operations
            },
            HookEffects.slotFor(recording ? undefined : "disabled")
          ),
          effect
        ),
        () => setScope(previousRequest, previousSlot)
      )
    })

  /**
   * {@link hookScope} for a stream: the request's scope is set on the
   * stream's fiber until the stream's scope closes (its synthesis inference
   * hooks see the request, and report into their own runs).
   */
  const enterHookScope = (state: RequestState): Effect.Effect<void, never, Scope.Scope> =>
    Effect.zipRight(
      Effect.locallyScoped(RequestScope.currentRequest, {
        scope: state.scope,
        requestId: state.context.requestId,
        recorder: state.recorder,
        call: state.call,
        operations
      }),
      Effect.locallyScoped(HookEffects.currentInvocation, HookEffects.slotFor(recording ? undefined : "disabled"))
    )

  /** BeforePlanning over the request, under its span. */
  const runBeforePlanning = (state: RequestState) =>
    beforePlanning.run(state, {
      gate: Option.isSome(gate) ? gateFor(gate.value, state.context) : ShortCircuit.defaultGate,
      maxEnrichmentBytes,
      hasTool: tools.has
    }).pipe(spanned("pipeline.before_planning", { captureStackTrace: false }))

  /** AfterExecution over the executed phases (C11). */
  const runAfterExecution = (state: RequestState, phases: ReadonlyArray<PhaseRecord>) =>
    afterExecution.run(state, toResults(phases))

  const preSynthesisBody = Effect.fnUntraced(function*(
    state: RequestState,
    resume: { readonly checkpoint: Checkpoint } | undefined
  ) {
    let context = state.context
    let promptEnrichments: JsonObject | undefined
    let phasesResult
    if (resume === undefined) {
      const outcome = yield* runBeforePlanning(state)
      if (outcome.shortCircuit !== undefined) {
        return { _tag: "ShortCircuit", accepted: outcome.shortCircuit, enrichments: outcome.enrichments } as const
      }
      // Every phase's prompt and every later stage sees this request-start snapshot.
      context = Object.freeze({ ...state.context, enrichments: Object.freeze({ ...outcome.enrichments }) })
      // Tools hooks added are this request's only.
      const requestTools = outcome.tools === undefined || outcome.tools.length === 0
        ? undefined
        : ToolRegistry.extend(tools, outcome.tools)
      if (promptValues === undefined) {
        phasesResult = yield* runPhases({ ...state, context, tools: requestTools }, 1, [], undefined)
      } else {
        promptEnrichments = yield* preparePromptEnrichments(state, promptValues, context.enrichments)
        phasesResult = yield* runPhases({ ...state, context, tools: requestTools, promptEnrichments }, 1, [], undefined)
      }
    } else {
      // A resume prepares the checkpoint's snapshot again (with this pipeline's preparer).
      if (promptValues !== undefined) {
        promptEnrichments = yield* preparePromptEnrichments(state, promptValues, context.enrichments)
      }
      phasesResult = yield* runPhases(
        promptEnrichments === undefined ? state : { ...state, promptEnrichments },
        resume.checkpoint.phase,
        resume.checkpoint.priorPhases,
        resume.checkpoint.plan
      )
    }
    if (phasesResult._tag === "Suspended") return phasesResult
    const stateWithContext = { ...state, context }
    yield* runAfterExecution(stateWithContext, phasesResult.phases)
    return { _tag: "Synthesize", context, phases: phasesResult.phases, promptEnrichments } as const
  })

  /** Everything before synthesis, shared by the buffered and streaming paths. */
  const preSynthesis = (
    state: RequestState,
    resume?: { readonly checkpoint: Checkpoint }
  ): Effect.Effect<PreSynthesis, PipelineError> => hookScope(state, preSynthesisBody(state, resume))

  const shortCircuitResponse = Effect.fnUntraced(function*(
    state: RequestState,
    accepted: AcceptedShortCircuit,
    enrichments: JsonObject
  ) {
    const record = {
      hookName: accepted.hookName,
      kind: accepted.kind,
      reason: accepted.reason,
      ...(accepted.shortCircuit.source === undefined ? {} : { source: accepted.shortCircuit.source })
    }
    yield* state.recorder.modify((r) => ({
      ...r,
      shortCircuit: record,
      finalResponse: accepted.shortCircuit.response
    }))
    const metadata: JsonObject = { ...(accepted.shortCircuit.metadata ?? {}), ...enrichments }
    return new AgentResponse({
      requestId: state.context.requestId,
      response: redact === undefined ? accepted.shortCircuit.response : redact(accepted.shortCircuit.response),
      confidence: 1.0,
      metadata: redact === undefined ? metadata : redactObject(metadata, redact),
      shortCircuit: record,
      phases: []
    }, alreadyValidated)
  })

  /** The synthesis prompt, from the prepared enrichments when there are any. */
  const synthesisPrompt = (
    context: PipelineContext,
    phases: ReadonlyArray<PhaseRecord>,
    promptEnrichments: JsonObject | undefined
  ) =>
    prompts.buildSynthesisPrompt({
      request: context.request,
      enrichments: { ...(promptEnrichments ?? context.enrichments) },
      steps: phases.flatMap((p) => p.steps)
    })

  const completeBody = Effect.fnUntraced(function*(
    state: RequestState,
    context: PipelineContext,
    phases: ReadonlyArray<PhaseRecord>,
    draft: string
  ) {
    // The model's output is saved before AfterSynthesis runs: a panicking
    // hook still leaves the raw draft in the failed record.
    yield* state.recorder.modify((r) => ({ ...r, rawDraft: draft }))
    const hooked = yield* afterSynthesis.run({ ...state, context }, draft)
    // The guardrail has the last word: no AfterSynthesis hook ordered after
    // its own hook can put a secret back.
    const response = redact === undefined ? hooked : redact(hooked)
    yield* state.recorder.modify((r) => ({ ...r, finalResponse: response }))
    return new AgentResponse({
      requestId: state.context.requestId,
      response,
      confidence: confidenceOf(phases),
      metadata: { phase_count: phases.length, step_count: phases.reduce((n, p) => n + p.steps.length, 0) },
      rawDraft: redact === undefined ? draft : redact(draft),
      // The plans (parameters the model wrote) and step results the caller sees.
      phases: redact === undefined ? phases : redactDeep(phases, redact)
    }, alreadyValidated)
  })
  const complete = (
    state: RequestState,
    context: PipelineContext,
    phases: ReadonlyArray<PhaseRecord>,
    draft: string
  ) => hookScope(state, completeBody(state, context, phases, draft))

  return {
    enterHookScope,
    hookScope,
    preSynthesis,
    runBeforePlanning,
    runAfterExecution,
    shortCircuitResponse,
    synthesisPrompt,
    complete
  }
}

/** The stages built by {@link makeRequestStages}. */
export type RequestStages = ReturnType<typeof makeRequestStages>
