/**
 * A request's state and its execution record, from begin to finalize (DESIGN
 * §4 steps 1 and 8, §7 "durable from the first moment"): decode the input,
 * refuse a reused request id, auto-promote metadata (C6), open the record
 * (`running`) and the request's own scope. On every exit — success, failure,
 * interruption, suspension — the scope closes first, then the record is
 * finalized with its lifecycle (C16).
 */
import { Cause, Effect, Either, Exit, Option, Runtime, Scope } from "effect"
import type { ToolRegistry } from "../../ai/ToolRegistry.js"
import { type PipelineResult, Rejected } from "../../domain/AgentResponse.js"
import type { ExecutionRecord, Lifecycle, PhaseRecord, RecordMode } from "../../domain/ExecutionRecord.js"
import { keepLatest } from "../../domain/internal/liveShapes.js"
import { measure } from "../../domain/internal/recordSize.js"
import type { JsonObject } from "../../domain/Json.js"
import type { Call } from "../../domain/Operation.js"
import { type PipelineContext, RequestId } from "../../domain/PipelineContext.js"
import { InvalidRequest } from "../../domain/PipelineError.js"
import * as PipelineRequest from "../../domain/PipelineRequest.js"
import { failureText } from "../../runtime/internal/failures.js"
import { flatText } from "../../runtime/internal/flatText.js"
import type { LeaseKeeper } from "../../runtime/internal/leaseKeeper.js"
import * as RequestRecorder from "../../runtime/internal/requestRecorder.js"
import { spanned } from "../../runtime/internal/spans.js"
import { elapsedMillis } from "../../runtime/internal/timing.js"
import type { Operations } from "../../runtime/Operations.js"
import { type RequestOutcome, unsafeRecordRequest } from "../../runtime/PipelineMetrics.js"
import type { ExecutionStore, ExecutionStoreError } from "../../stores/ExecutionStore.js"
import { detachedCreateOf } from "../../stores/internal/detachedCreates.js"
import { isSynchronous } from "../../stores/internal/synchronousStores.js"
import * as ConversationHistory from "../ConversationHistory.js"
import type { StageRequest } from "../Hook.js"
import { concurrentWriter, recordWriter } from "./recordWriter.js"

/** One running request: its context, its recorder, when it started and its scope. */
export interface RequestState extends StageRequest {
  /**
   * The request's recorder. The pipeline sets it as the request's
   * `currentRequest` (`hookScope`), where the stages and the operations
   * read it; a rejected resume's wraps the written one.
   */
  readonly recorder: RequestRecorder.RequestRecorder
  readonly startedAt: number
  /** A monotonic reading (`elapsedMillis`) at the start: the request's measured duration starts here. */
  readonly clockStart: number
  /** The request's own scope: closed with the request's exit, before the record is finalized. */
  readonly scope: Scope.CloseableScope
  /**
   * The request's run of the `request` operation — the parent of its phases,
   * model and tool calls — when any hook observes operations.
   */
  readonly call?: Call<"request"> | undefined
  /** The tools of this request when BeforePlanning hooks added some (`extra_tools`). */
  readonly tools?: ToolRegistry.Service | undefined
  /**
   * The enrichments prompts are built from, when a prompt-value preparer
   * other than the identity prepared them (`PromptPreparation`); otherwise
   * prompts use `context.enrichments`.
   */
  readonly promptEnrichments?: JsonObject | undefined
  /** Stops renewing the record's owner lease (called when the record is finalized). */
  readonly releaseLease?: (() => void) | undefined
}

/**
 * For results built from data the pipeline validated already (a response's
 * plan, records and text; a checkpoint): the class constructor does not
 * validate it all again. That re-validation was a quarter of a request's
 * time — the bench-peers `eap-lm` scenario in one process, 2026-12-01:
 * 1,249 µs median per request without this, 1,104 µs with it (H=0).
 */
export const alreadyValidated = { disableValidation: true } as const

/** A fresh id for a request or a checkpoint. */
export const newId = (): string => flatText(globalThis.crypto.randomUUID())

/** Share of succeeded steps over all phases; 0.5 when no step ran. */
export const confidenceOf = (phases: ReadonlyArray<PhaseRecord>): number => {
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

/** What `begin` needs, resolved once when the pipeline is built. */
export interface BeginDeps {
  readonly limits: PipelineRequest.Limits
  readonly recording: boolean
  readonly store: ExecutionStore.Service
  readonly preparer: ConversationHistory.ConversationHistoryPreparer["Type"]
  readonly operations: Operations
  readonly leases: LeaseKeeper
  /** The largest record written (JSON text, bytes); larger snapshots are cut down (default 16 MiB). */
  readonly maxRecordBytes?: number | undefined
}

/**
 * Decodes a request and opens its record and scope. With `takeOver`, the
 * stored record of this request an earlier process left (a durable request
 * resumed elsewhere): it is not created again but continued — `running`
 * again, under this process's lease, its evidence kept, with `note` added
 * to its diagnostics.
 */
export type Begin = (
  input: unknown,
  mode: RecordMode,
  takeOver?: { readonly record: ExecutionRecord; readonly note: string } | undefined
) => Effect.Effect<RequestState, InvalidRequest>

/** Builds {@link Begin} over its services. */
export const makeBegin = (deps: BeginDeps): Begin => {
  const { leases, limits, maxRecordBytes, operations, preparer, recording, store } = deps
  return Effect.fnUntraced(function* begin(
    input: unknown,
    mode: RecordMode,
    takeOver?: { readonly record: ExecutionRecord; readonly note: string } | undefined
  ) {
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
    const clock = yield* Effect.clock
    const now = clock.unsafeCurrentTimeMillis()
    // A taken-over request keeps the start its first process gave it.
    const startedAt = takeOver?.record.lifecycle?.startedAt ?? now
    const clockStart = elapsedMillis(clock)
    const lifecycle: ExecutionRecord["lifecycle"] = recording
      ? { status: "running", startedAt, owner: leases.owner, leaseExpiresAt: now + leases.leaseMillis }
      : { status: "running", startedAt }
    const initial: ExecutionRecord = takeOver !== undefined
      ? { ...takeOver.record, lifecycle, diagnostics: [...takeOver.record.diagnostics, takeOver.note] }
      : {
        schemaVersion: 1,
        requestId,
        recordRevision: 0,
        mode,
        request: decoded.request,
        metadata: decoded.metadata,
        lifecycle,
        phases: [],
        hookInvocations: [],
        diagnostics: []
      }
    // The record exists from the start (`running`, with this process's
    // lease), created atomically on its id: a reused id would make every
    // write of this request's record stale, silently losing its evidence,
    // so it is refused. A store that cannot answer does not block the
    // request: the record says so, and the final write tries again.
    let unwritten: string | undefined
    // A generated id names no stored record (there is nothing to refuse), so
    // the request does not wait for its create (issue 20): it is submitted
    // below, before any later write of the record, and written with the next
    // group commit; a failure is logged and noted in the record. A store
    // whose writes never wait (the memory store) is written to inline.
    const detached = recording && decoded.requestId === undefined && takeOver === undefined &&
      !isSynchronous(store)
    if (recording) {
      // Measured once here (a store that caps its memory by bytes reads it).
      measure(initial)
    }
    if (recording && !detached && takeOver === undefined) {
      const created = yield* Effect.either(store.create(initial))
      if (Either.isRight(created) && created.right === "exists") {
        return yield* Effect.fail(
          new InvalidRequest({
            reason: "request_id_in_use",
            path: "requestId",
            detail: `"${requestId}" already names a stored execution record`
          })
        )
      }
      if (Either.isLeft(created)) {
        unwritten = `record not created at request start: ${created.left.message}`
        yield* Effect.logWarning("execution record not created", created.left.message).pipe(
          Effect.annotateLogs({ requestId })
        )
      }
    }
    const context: PipelineContext = {
      requestId,
      request: decoded.request,
      metadata: decoded.metadata,
      enrichments: ConversationHistory.promote(decoded.metadata, preparer)
    }
    const call = operations.active
      ? yield* operations.call("request", { coordinates: { requestId }, payload: { mode, request: decoded.request } })
      : undefined
    const recorder = recording
      ? RequestRecorder.make(
        mode === "durable"
          ? concurrentWriter(recordWriter(store, operations, requestId, call), requestId)
          : recordWriter(store, operations, requestId, call),
        unwritten === undefined ? initial : { ...initial, diagnostics: [unwritten] },
        { maxBytes: maxRecordBytes }
      )
      : RequestRecorder.disabled(initial)
    if (detached) {
      const runtime = yield* Effect.runtime<never>()
      const unrecorded = (error: ExecutionStoreError) =>
        Effect.zipRight(
          Effect.logWarning("execution record not created", error.message).pipe(Effect.annotateLogs({ requestId })),
          recorder.modify((r) => ({
            ...r,
            diagnostics: [...r.diagnostics, `record not created at request start: ${error.message}`]
          }))
        )
      // Submitted now, ahead of the record's later writes: handed to a store
      // that takes it without a fiber waiting, else on a fiber started now.
      const submit = detachedCreateOf(store)
      if (submit !== undefined) submit(initial, now, (error) => void Runtime.runFork(runtime, unrecorded(error)))
      else Runtime.runFork(runtime, Effect.catchAll(store.create(initial), unrecorded))
    }
    const scope = yield* Scope.make()
    const releaseLease = recording ? leases.hold(recorder) : undefined
    const state: RequestState = { context, recorder, startedAt, clockStart, scope, call, releaseLease }
    keepLatest("requestStart", [decoded, state])
    return state
  })
}

/** How a request ended, as `pipeline.request.duration` tags it. */
const outcomeOf = (exit: Exit.Exit<unknown, unknown>, lifecycle: Lifecycle): RequestOutcome => {
  if (Exit.isSuccess(exit) && exit.value instanceof Rejected) return "rejected"
  switch (lifecycle.status) {
    case "succeeded":
    case "suspended":
    case "interrupted":
      return lifecycle.status
    default:
      return "failed"
  }
}

/**
 * Closes the request scope (its cleanups may still report effects), then
 * measures the request and finalizes the record.
 */
export const finalize = (state: RequestState, exit: Exit.Exit<unknown, unknown>, suspended: boolean) =>
  Scope.close(state.scope, exit).pipe(
    Effect.zipRight(Effect.clock),
    Effect.flatMap((clock) => {
      state.releaseLease?.()
      const lifecycle = lifecycleOf(exit, state.startedAt, clock.unsafeCurrentTimeMillis(), suspended)
      unsafeRecordRequest(
        state.recorder.current().mode,
        outcomeOf(exit, lifecycle),
        elapsedMillis(clock) - state.clockStart
      )
      return state.recorder.finalize(lifecycle)
    })
  )

/**
 * Adds a phase to the record — in place of an entry with its number, which
 * only an earlier attempt of the same phase leaves (a durable request's
 * phase re-run after its process died).
 */
export const recordPhase = (state: RequestState, phase: PhaseRecord) =>
  state.recorder.modify((r) => {
    const at = r.phases.findIndex((p) => p.phase === phase.phase)
    if (at < 0) return { ...r, phases: [...r.phases, phase] }
    const phases = r.phases.slice()
    phases[at] = phase
    return { ...r, phases }
  })

/** Replaces the record's (latest) entry of phase number `phase`. */
export const updatePhase = (state: RequestState, phase: number, f: (record: PhaseRecord) => PhaseRecord) =>
  state.recorder.modify((r) => {
    let i = r.phases.length - 1
    while (i >= 0 && r.phases[i]!.phase !== phase) i--
    if (i < 0) return r
    const phases = r.phases.slice()
    phases[i] = f(phases[i]!)
    return { ...r, phases }
  })

/**
 * Runs a buffered request body as the request's run of the `request`
 * operation (observers around it, guards wrapping it: a whole-run wrap),
 * under its `pipeline.request` span, and finalizes the record on its exit.
 */
export const owned = <A extends PipelineResult, E>(
  state: RequestState,
  body: Effect.Effect<A, E>,
  mode: string,
  operations: Operations,
  hookScope: <A, E>(state: RequestState, effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
) =>
  (state.call === undefined ? body : hookScope(state, operations.run(state.call, body))).pipe(
    Effect.onExit((exit) => finalize(state, exit, Exit.isSuccess(exit) && exit.value._tag === "Suspended")),
    spanned("pipeline.request", {
      captureStackTrace: false,
      attributes: { "pipeline.request.id": state.context.requestId, "pipeline.mode": mode }
    })
  )
