/**
 * The request lifecycle (seed 000 §3, DESIGN §4): decode → auto-promote →
 * BeforePlanning (may short-circuit) → for each phase: plan, AfterPlanning,
 * HITL, execute → AfterExecution → synthesis (buffered or streamed) →
 * AfterSynthesis. Every step appends evidence to the execution record, which
 * is finalized on every exit — success, failure, interruption, suspension.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@effect/ai"
import { Cause, Clock, Context, Effect, Either, Exit, FiberId, Layer, Option, Scope, Stream } from "effect"
import * as Planner from "../ai/Planner.js"
import * as Synthesizer from "../ai/Synthesizer.js"
import { ToolRegistry } from "../ai/ToolRegistry.js"
import type { ExecutionRecord, Lifecycle, PhaseRecord, RecordMode, StepResult } from "../record/ExecutionRecord.js"
import * as HookEffects from "../record/HookEffects.js"
import * as RequestRecorder from "../record/RequestRecorder.js"
import { CheckpointStore } from "../stores/CheckpointStore.js"
import { ExecutionStore } from "../stores/ExecutionStore.js"
import { AfterExecution } from "./AfterExecution.js"
import { AfterPlanning } from "./AfterPlanning.js"
import { AfterSynthesis } from "./AfterSynthesis.js"
import { AgentResponse, Completed, type PipelineResult, type StreamEvent, Suspended, Token } from "./AgentResponse.js"
import { type ApprovalDecision, ApprovalPolicy, Checkpoint } from "./Approval.js"
import { type AcceptedShortCircuit, BeforePlanning } from "./BeforePlanning.js"
import * as ConversationHistory from "./ConversationHistory.js"
import type { ExecutionResults, StageRequest } from "./Hook.js"
import { failureText } from "./internal/invokeHook.js"
import type { JsonObject } from "./Json.js"
import { type PipelineContext, RequestId } from "./PipelineContext.js"
import {
  CheckpointError,
  InvalidPipelineOptions,
  InvalidRequest,
  type PipelineError,
  PlanningError
} from "./PipelineError.js"
import * as Options from "./PipelineOptions.js"
import * as PipelineRequest from "./PipelineRequest.js"
import * as PlanExecutor from "./PlanExecutor.js"
import * as PlanValidation from "./PlanValidation.js"
import * as PromptBuilder from "./PromptBuilder.js"
import * as RequestScope from "./RequestScope.js"
import type { RoutingPlan, RoutingPlanInput } from "./RoutingPlan.js"
import * as ShortCircuit from "./ShortCircuit.js"
import { chunkUtf8 } from "./Utf8Chunks.js"

/**
 * Pipeline options (see the `PipelineOptions` module for each field and its default).
 *
 * @since 0.1.0
 */
export type PipelineOptions = Options.PipelineOptions

/**
 * The pipeline service.
 *
 * @since 0.1.0
 */
export class Pipeline extends Context.Tag("effect-agent-pipeline/Pipeline")<Pipeline, Pipeline.Service>() {}

/** @since 0.1.0 */
export declare namespace Pipeline {
  /** @since 0.1.0 */
  export interface Service {
    /**
     * Runs a request to completion (`Completed`) or to a HITL suspension
     * (`Suspended`). Untyped input (JSON from the wire) goes through
     * `PipelineRequest.decode` first, or is decoded here with the same checks.
     */
    readonly process: (input: PipelineRequest.Input) => Effect.Effect<PipelineResult, PipelineError>
    /** Streams synthesis tokens, then the final (post-hook) response or the suspension. */
    readonly stream: (input: PipelineRequest.Input) => Stream.Stream<StreamEvent, PipelineError>
    /** Resumes a suspended request. The approved plan runs without AfterPlanning. */
    readonly resume: (checkpointId: string, decision: ApprovalDecision) => Effect.Effect<PipelineResult, PipelineError>
    /** Workflow mode: executes a given plan and synthesizes; runs no pipeline hooks (C20). */
    readonly executePlanWithSynthesis: (
      input: PipelineRequest.Input,
      plan: RoutingPlanInput
    ) => Effect.Effect<AgentResponse, PipelineError>
  }
}

type PreSynthesis =
  | { readonly _tag: "ShortCircuit"; readonly accepted: AcceptedShortCircuit; readonly enrichments: JsonObject }
  | { readonly _tag: "Suspended"; readonly checkpoint: Checkpoint }
  | { readonly _tag: "Synthesize"; readonly context: PipelineContext; readonly phases: ReadonlyArray<PhaseRecord> }

interface RequestState extends StageRequest {
  readonly startedAt: number
  /** The request's own scope: closed with the request's exit, before the record is finalized. */
  readonly scope: Scope.CloseableScope
}

const confidenceOf = (phases: ReadonlyArray<PhaseRecord>): number => {
  const steps = phases.flatMap((p) => p.steps)
  return steps.length === 0 ? 0.5 : steps.filter((s) => s.status === "succeeded").length / steps.length
}

const lifecycleOf = (
  exit: Exit.Exit<unknown, unknown>,
  startedAt: number,
  endedAt: number,
  suspended: boolean
): Lifecycle => {
  if (Exit.isSuccess(exit)) return { status: suspended ? "suspended" : "succeeded", startedAt, endedAt }
  if (Cause.isInterruptedOnly(exit.cause)) return { status: "interrupted", startedAt, endedAt }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
    return { status: "failed", startedAt, endedAt, errorTag: tag, errorMessage: failureText(error) }
  }
  const defect = Cause.dieOption(exit.cause)
  return {
    status: "failed",
    startedAt,
    endedAt,
    errorTag: "Defect",
    errorMessage: `panic: ${Option.isSome(defect) ? failureText(defect.value) : Cause.pretty(exit.cause)}`
  }
}

const newId = (): string => globalThis.crypto.randomUUID()

// Responses, events and checkpoints are built from already-validated data:
// skip the constructor's re-validation on the hot path.
const TRUSTED = { disableValidation: true } as const

/**
 * Builds the pipeline from its services.
 *
 * @since 0.1.0
 */
export const make = (options?: PipelineOptions) =>
  Effect.gen(function*() {
    const resolved = yield* Options.resolve(options)
    const { concurrency, maxEnrichmentBytes, maxPhases, recording } = resolved
    const chunkBytes = resolved.shortCircuitChunkBytes
    const limits: PipelineRequest.Limits = resolved
    const beforePlanning = yield* BeforePlanning
    const afterPlanning = yield* AfterPlanning
    const afterExecution = yield* AfterExecution
    const afterSynthesis = yield* AfterSynthesis
    const model = yield* LanguageModel.LanguageModel
    const tools = yield* ToolRegistry
    const store = yield* ExecutionStore
    const checkpoints = yield* CheckpointStore
    const approval = yield* Effect.serviceOption(ApprovalPolicy)
    const prompts = yield* PromptBuilder.current
    const preparer = yield* ConversationHistory.currentPreparer
    const gate = yield* Effect.serviceOption(ShortCircuit.Gate)

    const validationFor = (priorStepIds: ReadonlySet<string>): PlanValidation.ValidationContext => ({
      hasTool: tools.has,
      priorStepIds
    })

    // ---- request state and record -------------------------------------------------

    const begin = (input: unknown, mode: RecordMode) =>
      Effect.gen(function*() {
        const decoded = yield* PipelineRequest.decode(input, limits).pipe(
          Effect.tapError((refused) =>
            // An oversized request leaves no record (its content is not
            // stored anywhere); operators see this diagnostic instead.
            refused.reason === "too_large"
              ? Effect.logWarning(`request refused: ${refused.message}`).pipe(
                Effect.annotateLogs({ "pipeline.request.refused": refused.reason })
              )
              : Effect.void
          )
        )
        const requestId = decoded.requestId ?? RequestId.make(newId())
        // A reused id would make every write of this request's record stale
        // (the stored one is newer), silently losing its evidence: refuse it.
        // A store that cannot answer does not block the request.
        if (decoded.requestId !== undefined && recording) {
          const existing = yield* Effect.option(store.get(requestId))
          if (Option.isSome(existing) && Option.isSome(existing.value)) {
            return yield* Effect.fail(
              new InvalidRequest({
                reason: "request_id_in_use",
                path: "requestId",
                detail: `"${requestId}" already names a stored execution record`
              })
            )
          }
        }
        const startedAt = yield* Clock.currentTimeMillis
        const initial: ExecutionRecord = {
          schemaVersion: 1,
          requestId,
          recordRevision: 0,
          mode,
          request: decoded.request,
          metadata: decoded.metadata,
          lifecycle: { status: "running", startedAt },
          phases: [],
          hookInvocations: [],
          diagnostics: []
        }
        const context: PipelineContext = {
          requestId,
          request: decoded.request,
          metadata: decoded.metadata,
          enrichments: ConversationHistory.promote(decoded.metadata, preparer)
        }
        const recorder = recording ? RequestRecorder.make(store, initial) : RequestRecorder.disabled(initial)
        const scope = yield* Scope.make()
        return { context, recorder, startedAt, scope } satisfies RequestState
      })

    /** Closes the request scope (its cleanups may still report effects), then finalizes the record. */
    const finalize = (state: RequestState, exit: Exit.Exit<unknown, unknown>, suspended: boolean) =>
      Scope.close(state.scope, exit).pipe(
        Effect.zipRight(Clock.currentTimeMillis),
        Effect.flatMap((now) => state.recorder.finalize(lifecycleOf(exit, state.startedAt, now, suspended)))
      )

    const recordPhase = (state: RequestState, phase: PhaseRecord) =>
      state.recorder.modify((r) => ({ ...r, phases: [...r.phases, phase] }))

    // ---- phases ------------------------------------------------------------------

    const executePhase = (
      state: RequestState,
      phase: number,
      plan: RoutingPlan,
      prior: ReadonlyArray<PhaseRecord>
    ) =>
      Effect.gen(function*() {
        const priorResults = new Map<string, StepResult>()
        for (const p of prior) for (const s of p.steps) priorResults.set(s.step_id, s)
        const steps = yield* PlanExecutor.execute(tools, plan, priorResults, { concurrency })
        const record: PhaseRecord = { phase, plan, steps }
        yield* recordPhase(state, record)
        return record
      })

    /**
     * One phase: plan, AfterPlanning, HITL, execute. With `approved`, the phase
     * executes that plan as is (a HITL resume: no planning, no AfterPlanning,
     * no HITL).
     */
    const runPhase = (
      state: RequestState,
      phase: number,
      phases: ReadonlyArray<PhaseRecord>,
      approved: RoutingPlan | undefined
    ) =>
      Effect.gen(function*() {
        let plan: RoutingPlan
        if (approved !== undefined) {
          plan = approved
        } else {
          const priorStepIds = new Set(phases.flatMap((p) => p.steps.map((s) => s.step_id)))
          const input: PromptBuilder.PromptInput = {
            request: state.context.request,
            enrichments: { ...state.context.enrichments },
            tools: tools.descriptors,
            phase,
            priorResults: phases.flatMap((p) => p.steps)
          }
          const prompt = phases.length === 0
            ? prompts.buildPlanningPrompt(input)
            : prompts.buildContinuationPrompt(input)
          const validation = validationFor(priorStepIds)
          const candidate = yield* Planner.plan(model, prompt, phase, validation)
          plan = yield* afterPlanning.run(state, candidate, { phase, priorStepIds: [...priorStepIds], validation })
          if (Option.isSome(approval)) {
            const verdict = yield* approval.value.evaluate(state.context, plan, phase)
            if (verdict._tag === "Suspend") {
              const checkpoint = new Checkpoint({
                checkpointId: newId(),
                requestId: state.context.requestId,
                request: state.context.request,
                metadata: state.context.metadata,
                enrichments: state.context.enrichments,
                phase,
                plan,
                priorPhases: phases,
                reason: verdict.reason,
                createdAt: yield* Clock.currentTimeMillis
              }, TRUSTED)
              yield* checkpoints.save(checkpoint).pipe(
                Effect.mapError((e) =>
                  new CheckpointError({ reason: "not_saved", checkpointId: checkpoint.checkpointId, detail: e.message })
                )
              )
              yield* state.recorder.modify((r) => ({ ...r, checkpointId: checkpoint.checkpointId }))
              return { _tag: "Suspended", checkpoint } as const
            }
          }
        }
        const executed = yield* executePhase(state, phase, plan, phases).pipe(
          Effect.withSpan("pipeline.execution", { captureStackTrace: false, attributes: { "pipeline.phase": phase } })
        )
        return { _tag: "Executed", executed, terminal: plan.terminal } as const
      }).pipe(
        Effect.withSpan("pipeline.phase", {
          captureStackTrace: false,
          attributes: { "pipeline.phase": phase, "pipeline.phase.resumed": approved !== undefined }
        })
      )

    /** Runs phases from `startPhase` until a terminal plan, a suspension or the phase limit. */
    const runPhases = (
      state: RequestState,
      startPhase: number,
      priorPhases: ReadonlyArray<PhaseRecord>,
      approved: RoutingPlan | undefined
    ) =>
      Effect.gen(function*() {
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

    const toResults = (phases: ReadonlyArray<PhaseRecord>): ExecutionResults => ({
      phases,
      steps: phases.flatMap((p) => p.steps)
    })

    /** Everything before synthesis, shared by the buffered and streaming paths. */
    // Hooks and tools run only inside `preSynthesis` and `complete`: there they
    // see the request scope, and with recording off effect reporting is
    // disabled (a no-op) once per stage rather than once per invocation.
    const hookScope = <A, E>(state: RequestState, effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
      const scoped = Effect.locally(effect, RequestScope.currentRequestScope, Option.some(state.scope))
      return recording ? scoped : Effect.locally(scoped, HookEffects.currentInvocation, "disabled")
    }

    const preSynthesis = (
      state: RequestState,
      resume?: { readonly checkpoint: Checkpoint }
    ): Effect.Effect<PreSynthesis, PipelineError> =>
      hookScope(state, Effect.gen(function*() {
        let context = state.context
        let phasesResult
        if (resume === undefined) {
          const outcome = yield* beforePlanning.run(
            state,
            Option.isSome(gate) ? gate.value.forRequest(state.context) : ShortCircuit.defaultGate,
            maxEnrichmentBytes
          ).pipe(Effect.withSpan("pipeline.before_planning", { captureStackTrace: false }))
          if (outcome.shortCircuit !== undefined) {
            return { _tag: "ShortCircuit", accepted: outcome.shortCircuit, enrichments: outcome.enrichments } as const
          }
          // Every phase's prompt and every later stage sees this request-start snapshot.
          context = Object.freeze({ ...state.context, enrichments: Object.freeze({ ...outcome.enrichments }) })
          phasesResult = yield* runPhases({ ...state, context }, 1, [], undefined)
        } else {
          phasesResult = yield* runPhases(state, resume.checkpoint.phase, resume.checkpoint.priorPhases, resume.checkpoint.plan)
        }
        if (phasesResult._tag === "Suspended") return phasesResult
        const stateWithContext = { ...state, context }
        yield* afterExecution.run(stateWithContext, toResults(phasesResult.phases))
        return { _tag: "Synthesize", context, phases: phasesResult.phases } as const
      }))

    const shortCircuitResponse = (state: RequestState, accepted: AcceptedShortCircuit, enrichments: JsonObject) =>
      Effect.gen(function*() {
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
        return new AgentResponse({
          requestId: state.context.requestId,
          response: accepted.shortCircuit.response,
          confidence: 1.0,
          metadata: { ...(accepted.shortCircuit.metadata ?? {}), ...enrichments },
          shortCircuit: record,
          phases: []
        }, TRUSTED)
      })

    const synthesisPrompt = (context: PipelineContext, phases: ReadonlyArray<PhaseRecord>) =>
      prompts.buildSynthesisPrompt({
        request: context.request,
        enrichments: { ...context.enrichments },
        steps: phases.flatMap((p) => p.steps)
      })

    const complete = (
      state: RequestState,
      context: PipelineContext,
      phases: ReadonlyArray<PhaseRecord>,
      draft: string
    ) =>
      hookScope(state, Effect.gen(function*() {
        // The model's output is saved before AfterSynthesis runs: a panicking
        // hook still leaves the raw draft in the failed record.
        yield* state.recorder.modify((r) => ({ ...r, rawDraft: draft }))
        const response = yield* afterSynthesis.run({ ...state, context }, draft)
        yield* state.recorder.modify((r) => ({ ...r, finalResponse: response }))
        return new AgentResponse({
          requestId: state.context.requestId,
          response,
          confidence: confidenceOf(phases),
          metadata: { phase_count: phases.length, step_count: phases.reduce((n, p) => n + p.steps.length, 0) },
          rawDraft: draft,
          phases
        }, TRUSTED)
      }))

    // ---- buffered ------------------------------------------------------------------

    const buffered = (state: RequestState, resume?: { readonly checkpoint: Checkpoint }) =>
      Effect.gen(function*() {
        const pre = yield* preSynthesis(state, resume)
        switch (pre._tag) {
          case "ShortCircuit":
            return new Completed({ response: yield* shortCircuitResponse(state, pre.accepted, pre.enrichments) }, TRUSTED)
          case "Suspended":
            return new Suspended({ requestId: state.context.requestId, checkpoint: pre.checkpoint }, TRUSTED)
          case "Synthesize": {
            const draft = yield* Synthesizer.synthesize(model, synthesisPrompt(pre.context, pre.phases)).pipe(
              Effect.withSpan("pipeline.synthesis", { captureStackTrace: false })
            )
            return new Completed({ response: yield* complete(state, pre.context, pre.phases, draft) }, TRUSTED)
          }
        }
      })

    const owned = <A extends PipelineResult, E, R>(state: RequestState, body: Effect.Effect<A, E, R>, mode: string) =>
      body.pipe(
        Effect.onExit((exit) => finalize(state, exit, Exit.isSuccess(exit) && exit.value._tag === "Suspended")),
        Effect.withSpan("pipeline.request", {
          captureStackTrace: false,
          attributes: { "pipeline.request.id": state.context.requestId, "pipeline.mode": mode }
        })
      )

    const process = (input: PipelineRequest.Input): Effect.Effect<PipelineResult, PipelineError> =>
      Effect.flatMap(begin(input, "pipeline"), (state) => owned(state, buffered(state), "pipeline"))

    // ---- streaming -----------------------------------------------------------------

    const stream = (input: PipelineRequest.Input): Stream.Stream<StreamEvent, PipelineError> =>
      Stream.unwrap(
        Effect.map(begin(input, "stream"), (state) => {
          let suspended = false
          // Set when the final event is produced: a consumer that stops pulling
          // earlier ends the stream "successfully", but the request did not finish.
          let delivered = false
          const body: Stream.Stream<StreamEvent, PipelineError> = Stream.unwrap(
            Effect.map(preSynthesis(state), (pre): Stream.Stream<StreamEvent, PipelineError> => {
              switch (pre._tag) {
                case "ShortCircuit":
                  return Stream.concat(
                    Stream.fromIterable(chunkUtf8(pre.accepted.shortCircuit.response, chunkBytes)).pipe(
                      Stream.map((text) => new Token({ text }, TRUSTED))
                    ),
                    Stream.fromEffect(
                      Effect.map(
                        shortCircuitResponse(state, pre.accepted, pre.enrichments),
                        (response) => {
                          delivered = true
                          return new Completed({ response }, TRUSTED)
                        }
                      )
                    )
                  )
                case "Suspended":
                  suspended = true
                  delivered = true
                  return Stream.make(new Suspended({ requestId: state.context.requestId, checkpoint: pre.checkpoint }, TRUSTED))
                case "Synthesize": {
                  const parts: Array<string> = []
                  const tokens = Synthesizer.stream(model, synthesisPrompt(pre.context, pre.phases)).pipe(
                    Stream.map((text) => {
                      parts.push(text)
                      return new Token({ text }, TRUSTED)
                    }),
                    Stream.withSpan("pipeline.synthesis", { captureStackTrace: false })
                  )
                  const final = Stream.fromEffect(
                    Effect.suspend(() =>
                      Effect.map(complete(state, pre.context, pre.phases, parts.join("")), (response) => {
                        delivered = true
                        return new Completed({ response }, TRUSTED)
                      })
                    )
                  )
                  return Stream.concat(tokens, final)
                }
              }
            })
          )
          return body.pipe(
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

    // ---- resume --------------------------------------------------------------------

    const resume = (checkpointId: string, decision: ApprovalDecision): Effect.Effect<PipelineResult, PipelineError> =>
      Effect.gen(function*() {
        const found = yield* checkpoints.take(checkpointId).pipe(
          Effect.mapError((e) => new CheckpointError({ reason: "not_found", checkpointId, detail: e.message }))
        )
        if (Option.isNone(found)) {
          return yield* Effect.fail(
            new CheckpointError({ reason: "not_found", checkpointId, detail: "no such checkpoint (or already resumed)" })
          )
        }
        const checkpoint = found.value
        const startedAt = yield* Clock.currentTimeMillis
        const stored = recording ? yield* Effect.either(store.get(checkpoint.requestId)) : Either.right(Option.none())
        const previous = Either.isRight(stored) ? stored.right : Option.none()
        const initial: ExecutionRecord = Option.isSome(previous)
          ? { ...previous.value, mode: "resume", lifecycle: { status: "running", startedAt } }
          : {
            schemaVersion: 1,
            requestId: checkpoint.requestId,
            recordRevision: 0,
            mode: "resume",
            request: checkpoint.request,
            metadata: checkpoint.metadata,
            lifecycle: { status: "running", startedAt },
            phases: checkpoint.priorPhases,
            hookInvocations: [],
            checkpointId,
            diagnostics: []
          }
        const state: RequestState = {
          context: Object.freeze({
            requestId: RequestId.make(checkpoint.requestId),
            request: checkpoint.request,
            metadata: checkpoint.metadata,
            enrichments: Object.freeze({ ...checkpoint.enrichments })
          }),
          recorder: recording ? RequestRecorder.make(store, initial) : RequestRecorder.disabled(initial),
          startedAt,
          scope: yield* Scope.make()
        }
        const body = decision === "approve"
          ? buffered(state, { checkpoint })
          : Effect.fail(new CheckpointError({ reason: "rejected", checkpointId, detail: "the plan was rejected" }))
        return yield* owned(state, body, "resume")
      })

    // ---- workflow mode ---------------------------------------------------------------

    const executePlanWithSynthesis = (
      input: PipelineRequest.Input,
      rawPlan: RoutingPlanInput
    ): Effect.Effect<AgentResponse, PipelineError> =>
      Effect.flatMap(begin(input, "workflow"), (state) =>
        Effect.gen(function*() {
          const validated = PlanValidation.validate(rawPlan, validationFor(new Set()))
          if (Either.isLeft(validated)) {
            return yield* Effect.fail(
              new PlanningError({ reason: "invalid_plan", phase: 1, detail: validated.left.message, cause: validated.left })
            )
          }
          const phase = yield* executePhase(state, 1, validated.right, [])
          const draft = yield* Synthesizer.synthesize(model, synthesisPrompt(state.context, [phase]))
          yield* state.recorder.modify((r) => ({ ...r, rawDraft: draft }))
          return new AgentResponse({
            requestId: state.context.requestId,
            response: draft,
            confidence: confidenceOf([phase]),
            metadata: { phase_count: 1, step_count: phase.steps.length },
            rawDraft: draft,
            phases: [phase]
          }, TRUSTED)
        }).pipe(
          Effect.onExit((exit) => finalize(state, exit, false)),
          Effect.withSpan("pipeline.request", {
          captureStackTrace: false,
            attributes: { "pipeline.request.id": state.context.requestId, "pipeline.mode": "workflow" }
          })
        ))

    return { process, stream, resume, executePlanWithSynthesis } satisfies Pipeline.Service
  })

/**
 * The pipeline as a Layer.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, Pipeline } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const pipeline = yield* Pipeline.Pipeline
 *   const result = yield* pipeline.process({ request: "What is the stock quote for ACME?" })
 *   if (result._tag === "Completed") console.log(result.response.response)
 * })
 * ```
 *
 * @since 0.1.0
 */
export const layer = (options?: PipelineOptions): Layer.Layer<
  Pipeline,
  InvalidPipelineOptions,
  | BeforePlanning
  | AfterPlanning
  | AfterExecution
  | AfterSynthesis
  | LanguageModel.LanguageModel
  | ToolRegistry
  | ExecutionStore
  | CheckpointStore
> => Layer.effect(Pipeline, make(options))

