/**
 * The record side of one hook run, shared by the stages and the operations
 * engine (seed 000 §9, seed 001): open the span
 * `pipeline.hook.<point>.<name>` and the record handle, and record how the
 * run ended (status, outcome, sequence, phase, operation, timing, exact
 * failure text, decision, effects, contribution hash) — or that it did not
 * happen (`skipped`). Calling the handler, bounded by its limit, is
 * `attempt.ts`; the text of a failure is `failures.ts`.
 */
import { Clock, Effect, Exit, type Tracer } from "effect"
import type { HookDecision, HookEffect, HookInvocation, HookRunStatus } from "../../domain/ExecutionRecord.js"
import type { HookPoint } from "../../domain/HookPoint.js"
import { keepLatest } from "../../domain/internal/liveShapes.js"
import type { Operation } from "../../domain/Operation.js"
import { type HookRunLabels, unsafeRecordHookRun } from "../PipelineMetrics.js"
import { type ExecutionPolicy, type FailurePolicy, nameOf } from "../Policy.js"
import type { RunLimit } from "./bounded.js"
import { contributionHash } from "./hash.js"
import type { InvocationHandle } from "./invocationSlot.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { collects } from "./spans.js"
import { clockOf, elapsedMillis, millisBetween } from "./timing.js"

/** A trace event added to the run's span before it ends. */
export interface SpanEvent {
  readonly name: string
  readonly attributes: Readonly<Record<string, unknown>>
}

/** Where an operation hook ran. */
export interface OperationCoordinates {
  readonly operation: Operation
  readonly callId: string
  readonly stepId?: string | undefined
}

/** What a hook run is: which hook, where, under which policies, recorded where. */
export interface RunSpec {
  readonly point: HookPoint
  readonly hookName: string
  readonly spanName: string
  readonly sequence: number
  readonly phase?: number | undefined
  readonly operation?: OperationCoordinates | undefined
  readonly recorder: RequestRecorder
  readonly failure: FailurePolicy
  readonly execution: ExecutionPolicy
  /** The subscription's `pipeline.hook.duration` tags (omitted: the run is not measured). */
  readonly metricLabels?: HookRunLabels | undefined
  /** How long the run may take, and its grace period (omitted: the runtime's defaults). */
  readonly limit?: RunLimit | undefined
}

const outcomeOf = (status: HookRunStatus): HookInvocation["outcome"] => {
  switch (status) {
    case "completed":
      return "succeeded"
    case "started":
    case "backgrounded":
      return "pending"
    case "skipped":
      return "skipped"
    default:
      return "failed"
  }
}

/** What a finished run records. */
interface Ending {
  readonly status: HookRunStatus
  readonly error?: string | undefined
  readonly decision?: HookDecision | undefined
  readonly effects?: ReadonlyArray<HookEffect> | undefined
  readonly event?: SpanEvent | undefined
  readonly contribution?: unknown
  readonly attempts?: number | undefined
  /** The run did not stop within its grace period once interrupted: it was left behind. */
  readonly abandoned?: boolean | undefined
}

/** The parts of a record entry every run of this spec shares. */
export const entryOf = (
  spec: Pick<RunSpec, "hookName" | "point" | "sequence" | "phase" | "operation" | "execution">,
  status: HookRunStatus,
  startedAt: number,
  duration: number
): Omit<HookInvocation, "effects"> => {
  const entry: { -readonly [K in keyof Omit<HookInvocation, "effects">]: Omit<HookInvocation, "effects">[K] } = {
    name: spec.hookName,
    stage: spec.point,
    outcome: outcomeOf(status),
    status,
    sequence: spec.sequence,
    startedAt,
    duration
  }
  if (spec.phase !== undefined) entry.phase = spec.phase
  if (spec.operation !== undefined) {
    entry.operation = spec.operation.operation
    entry.callId = spec.operation.callId
    if (spec.operation.stepId !== undefined) entry.stepId = spec.operation.stepId
  }
  if (spec.execution._tag !== "Blocking") entry.execution = nameOf(spec.execution)
  return entry
}

/**
 * An open run: its span (when spans are collected, see `spans.ts`), its
 * start, its record handle. {@link Run.finish} ends the span and records
 * the run exactly once.
 */
export interface Run {
  readonly span: Tracer.Span | undefined
  readonly handle: InvocationHandle
  readonly finish: (ending: Ending, exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
  /**
   * {@link finish} applied now (from inside a running effect); returns what
   * is left to do — `Effect.void` until the request's record is finalized.
   */
  readonly finishNow: (ending: Ending, exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
  /** Set by {@link attempt} while the handler runs: gives the fiber's reporting slot back. */
  release: (() => void) | undefined
  /** Set when the run ignored its interruption for the grace period (it was left behind). */
  abandoned: boolean
}

const spanAttributes = (
  spec: Pick<RunSpec, "hookName" | "point" | "sequence" | "phase" | "operation">
): Record<string, unknown> => {
  const attributes: Record<string, unknown> = {
    "pipeline.hook.name": spec.hookName,
    "pipeline.hook.stage": spec.point,
    "pipeline.hook.sequence": spec.sequence
  }
  if (spec.phase !== undefined) attributes["pipeline.phase"] = spec.phase
  if (spec.operation !== undefined) attributes["pipeline.operation"] = spec.operation.operation
  return attributes
}

const endSpan = (span: Tracer.Span, ending: Ending, exit: Exit.Exit<unknown, unknown>, clock: Clock.Clock): void => {
  span.attribute("pipeline.hook.outcome", outcomeOf(ending.status))
  span.attribute("pipeline.hook.status", ending.status)
  const decision = ending.decision
  if (decision !== undefined) {
    span.attribute("pipeline.hook.decision.policy", decision.policy)
    span.attribute("pipeline.hook.decision.action", decision.action)
    span.attribute("pipeline.hook.decision.reason", decision.reason)
  }
  if (ending.error !== undefined) span.attribute("pipeline.hook.error", ending.error)
  if (ending.event !== undefined) span.event(ending.event.name, clock.unsafeCurrentTimeNanos(), ending.event.attributes)
  span.end(clock.unsafeCurrentTimeNanos(), exit)
}

type RunSpecOf = Pick<
  RunSpec,
  "hookName" | "point" | "sequence" | "phase" | "operation" | "execution" | "recorder" | "metricLabels"
>

/** A run (one object: the methods live on the prototype); everything here is synchronous. */
class HookRun implements Run {
  release: (() => void) | undefined = undefined
  abandoned = false
  private finished = false
  private readonly startedAt: number
  private readonly t0: number

  constructor(
    private readonly spec: RunSpecOf,
    private readonly clock: Clock.Clock,
    readonly span: Tracer.Span | undefined,
    readonly handle: InvocationHandle
  ) {
    this.startedAt = clock.unsafeCurrentTimeMillis()
    this.t0 = elapsedMillis(clock)
  }

  finishNow(ending: Ending, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
    if (this.finished) return Effect.void
    this.finished = true
    // Interrupted inside the handler: the slot is given back here.
    if (this.release !== undefined) this.release()
    const entry: { -readonly [K in keyof Omit<HookInvocation, "effects">]: Omit<HookInvocation, "effects">[K] } =
      entryOf(this.spec, ending.status, this.startedAt, millisBetween(this.t0, elapsedMillis(this.clock)))
    if (this.span !== undefined) {
      endSpan(this.span, ending, exit, this.clock)
      // Measured with its span: a run made without one (no tracer collects
      // spans) does no metric work.
      if (this.spec.metricLabels !== undefined) {
        unsafeRecordHookRun(this.spec.metricLabels, entry.outcome, entry.duration)
      }
    }
    if (ending.abandoned === true || this.abandoned) {
      entry.abandoned = true
      entry.error = `${ending.error ?? "interrupted"}; abandoned: it did not stop within its grace period`
    } else if (ending.error !== undefined) entry.error = ending.error
    if (ending.decision !== undefined) entry.decision = ending.decision
    if (ending.attempts !== undefined) entry.attempts = ending.attempts
    if (ending.contribution !== undefined) entry.contributionHash = contributionHash(ending.contribution)
    return this.handle.completeNow(entry, ending.effects)
  }

  finish(ending: Ending, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
    return Effect.suspend(() => this.finishNow(ending, exit))
  }
}

/**
 * The run, its span given (or none). A new record entry each time the run
 * executes (a retried guard is recorded once per run), unless the caller
 * made it earlier.
 */
const makeRun = (
  spec: RunSpecOf,
  clock: Clock.Clock,
  span: Tracer.Span | undefined,
  given: InvocationHandle | undefined
): Run => {
  return keepLatest("hookRun", new HookRun(spec, clock, span, given ?? spec.recorder.startInvocation()))
}

/**
 * Opens a run without a span, synchronously: the synchronous fast path,
 * taken only when spans are not collected (see `spans.ts`).
 */
export const openRunNow = (
  spec: RunSpecOf,
  clock: Clock.Clock
): Run => makeRun(spec, clock, undefined, undefined)

/**
 * Opens a run: a record handle and, when spans are collected, a span (under
 * `parent` when given).
 */
export const openRun = (
  spec: RunSpecOf & Pick<RunSpec, "spanName">,
  parent?: Tracer.AnySpan | undefined,
  given?: InvocationHandle | undefined
): Effect.Effect<Run> =>
  Effect.withFiberRuntime((fiber) => {
    const clock = clockOf(fiber)
    if (!collects(fiber)) return Effect.succeed(makeRun(spec, clock, undefined, given))
    const attributes = spanAttributes(spec)
    return Effect.map(
      Effect.makeSpan(
        spec.spanName,
        parent === undefined
          ? { captureStackTrace: false, attributes }
          : { captureStackTrace: false, attributes, parent }
      ),
      (span) => makeRun(spec, clock, span, given)
    )
  })
