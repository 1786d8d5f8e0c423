/**
 * The building blocks of one hook run, shared by the stages and the
 * operations engine (seed 000 §9, seed 001): open the span
 * `pipeline.hook.<point>.<name>` and the record handle, call the handler
 * with the effect reporter in scope under the execution policy's deadline,
 * and record how the run ended (status, outcome, sequence, phase, operation,
 * timing, exact failure text, decision, effects, contribution hash) — or
 * that it did not happen (`skipped`).
 *
 * Defects (a die or a synchronous throw) are panics: recorded as
 * `propagate_panic`, then re-raised unchanged. A handler's self-interruption
 * is recorded and propagates.
 *
 * Every run is bounded (`bounded.ts`): its timeout (the hook's own, or the
 * runtime's default) ends it as `timed_out`; a run that ignored its
 * interruption for the grace period is recorded `abandoned`.
 */
import { Cause, Clock, Duration, Effect, Exit, FiberId, Option, type Tracer } from "effect"
import type {
  DecisionPolicy,
  HookDecision,
  HookEffect,
  HookInvocation,
  HookRunStatus
} from "../../domain/ExecutionRecord.js"
import type { HookPoint } from "../../domain/HookPoint.js"
import type { Operation } from "../../domain/Operation.js"
import type { InvocationSlot } from "../HookEffects.js"
import { type HookRunLabels, unsafeRecordHookRun } from "../PipelineMetrics.js"
import { type ExecutionPolicy, type FailurePolicy, nameOf } from "../Policy.js"
import type { InvocationHandle, RequestRecorder } from "../RequestRecorder.js"
import { defaultLimit, type Ending as Bounded, type Pause, runBounded, type RunLimit } from "./bounded.js"
import { contributionHash } from "./hash.js"
import { keepLatest } from "./liveShapes.js"
import { collects } from "./spans.js"
import { clockOf, elapsedMillis } from "./timing.js"

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

/** How much of a failure's text a record keeps. */
const FAILURE_TEXT_CHARS = 4_000

/** Members whose values are credentials: never written into a record (a header object, a client's options). */
const CREDENTIAL = /authorization|api[-_]?key|token|secret|password|passwd|cookie|credential/i

/** A failure value as JSON text: credentials left out, BigInts as digits, cut at the record's bound. */
const jsonText = (error: object): string =>
  JSON.stringify(
    error,
    (key, value: unknown) => CREDENTIAL.test(key) ? "<redacted>" : typeof value === "bigint" ? value.toString() : value
  )

/**
 * The exact text of a failure value (its message, or its JSON text), cut at
 * 4,000 characters. A hostile value — a getter or Proxy that throws, an
 * object without a prototype, a cycle — gets a description, never a crash;
 * members named like credentials (`authorization`, `apiKey`, `token`…) are
 * left out of JSON text.
 */
export const failureText = (error: unknown): string => {
  let text: string
  try {
    text = failureTextOf(error)
  } catch {
    text = `a failure value that cannot be read (${typeof error})`
  }
  return text.length <= FAILURE_TEXT_CHARS
    ? text
    : `${text.slice(0, FAILURE_TEXT_CHARS)}… (${text.length - FAILURE_TEXT_CHARS} more characters)`
}

const failureTextOf = (error: unknown): string => {
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null) {
    const message = (error as { readonly message?: unknown }).message
    const tag = (error as { readonly _tag?: unknown })._tag
    if (typeof message === "string" && message.length > 0) {
      return typeof tag === "string" && !message.startsWith(tag) ? `${tag}: ${message}` : message
    }
    if (typeof tag === "string") return tag
    try {
      return jsonText(error) ?? Object.prototype.toString.call(error)
    } catch {
      return Object.prototype.toString.call(error)
    }
  }
  return String(error)
}

/** The text of a panic's cause. */
export const panicText = (cause: Cause.Cause<unknown>): string => {
  const defect = Cause.dieOption(cause)
  return Option.isSome(defect) ? `panic: ${failureText(defect.value)}` : `panic: ${Cause.pretty(cause)}`
}

const WRONG_SHAPE = Symbol("wrongShape")

/** The decision recorded when a hook fails (or overruns) under `policy`. */
export const failureDecision = (policy: DecisionPolicy, reason: "hook_error" | "timed_out"): HookDecision =>
  policy === "fail_open"
    ? { policy, action: "continue", reason }
    : { policy, action: "terminate", reason }

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
      entryOf(this.spec, ending.status, this.startedAt, elapsedMillis(this.clock) - this.t0)
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
  const run = new HookRun(spec, clock, span, given ?? spec.recorder.startInvocation())
  keepLatest("hookRun", run)
  return run
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
 * Calls a `Hook.sync` handler's plain function: its value, or the panic its
 * exception is (as `Effect.sync` would make it).
 */
export const callPlain = (call: () => unknown): Attempt => {
  try {
    return { _tag: "Value", value: call() }
  } catch (defect) {
    return { _tag: "Panic", cause: Cause.die(defect) }
  }
}

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

/**
 * How a handler call ended, before any recording. A panic is returned (not
 * raised) so the caller records it first; an interruption propagates.
 */
export type Attempt =
  | { readonly _tag: "Value"; readonly value: unknown }
  | { readonly _tag: "WrongShape" }
  | { readonly _tag: "TimedOut"; readonly error: string; readonly abandoned: boolean }
  | { readonly _tag: "Failed"; readonly error: unknown; readonly cause: Cause.Cause<unknown> }
  | { readonly _tag: "Panic"; readonly cause: Cause.Cause<unknown> }
  /** The handler interrupted itself (an outside interruption does not come back here). */
  | { readonly _tag: "Interrupted" }

const WRONG_SHAPE_ATTEMPT: Attempt = { _tag: "WrongShape" }
const INTERRUPTED_ATTEMPT: Attempt = { _tag: "Interrupted" }

/** The bounds of a run of `spec`. */
export const limitOf = (spec: Pick<RunSpec, "execution" | "limit">): RunLimit => {
  const limit = spec.limit ?? defaultLimit
  return spec.execution._tag === "Deadline" && spec.limit === undefined
    ? { timeout: spec.execution.timeout, grace: limit.grace }
    : limit
}

/** The text of a timed-out run. */
const timedOutText = (limit: RunLimit): string => `timed out after ${Duration.format(limit.timeout)}`

/** How a run that has ended ended (its handler's effect was already an exit, or its fiber ended). */
const attemptOf = (exit: Exit.Exit<unknown, unknown>): Attempt =>
  Exit.isSuccess(exit)
    ? exit.value === WRONG_SHAPE ? WRONG_SHAPE_ATTEMPT : { _tag: "Value", value: exit.value }
    : failedAttempt(exit.cause)

/** How a bounded run of `run` ended (an abandoned run is marked so: its record entry says it). */
const attemptOfEnding = (run: Run, limit: RunLimit, ended: Bounded<unknown, unknown>): Attempt => {
  if (ended._tag === "Done") return attemptOf(ended.exit)
  if (ended.abandoned) run.abandoned = true
  return { _tag: "TimedOut", error: timedOutText(limit), abandoned: ended.abandoned }
}

/**
 * Calls a handler as a run of `spec`: inside the run's span, with the
 * effect reporter pointed at the run (unless recording is off), bounded by
 * the run's limit on a fiber of its own (`bounded.ts`). Never fails: the
 * caller decides what each ending means. `pause`, for a guard, stops its
 * deadline while the operation runs inside it.
 */
export const attempt = (
  spec: Pick<RunSpec, "execution" | "recorder" | "limit">,
  run: Run,
  call: () => unknown,
  pause?: Pause | undefined
): Effect.Effect<Attempt> => {
  const limit = limitOf(spec)
  const handler = Effect.suspend(() => {
    const returned = call()
    // Handlers' requirements were provided at registration (PipelineHooks.layer).
    return Effect.isEffect(returned) ? (returned as Effect.Effect<unknown, unknown>) : Effect.succeed(WRONG_SHAPE)
  })
  const spanned = run.span === undefined ? handler : Effect.withParentSpan(handler, run.span)
  // With recording off the request already runs with reporting disabled.
  const report = spec.recorder.enabled ? run.handle : null
  return Effect.map(
    runBounded(spanned, limit, report, () => void (run.abandoned = true), pause),
    (ended) => attemptOfEnding(run, limit, ended)
  )
}

/**
 * Runs a blocking Effect handler on the lean path (no span is collected):
 * calls it now; a handler whose effect is already an exit (`Effect.succeed`,
 * `Effect.fail`) has ended — nothing to run or bound; any other runs bounded
 * on a fiber of its own (reporting into `run` when recording: `slot` is the
 * caller's). Hands how it ended to `ended`.
 */
export const attemptLean = <B, E>(
  spec: Pick<RunSpec, "execution" | "limit">,
  run: Run,
  slot: InvocationSlot | undefined,
  call: () => unknown,
  ended: (attempt: Attempt) => Effect.Effect<B, E>
): Effect.Effect<B, E> => {
  let returned: unknown
  try {
    returned = call()
  } catch (defect) {
    return ended({ _tag: "Panic", cause: Cause.die(defect) })
  }
  if (!Effect.isEffect(returned)) return ended(WRONG_SHAPE_ATTEMPT)
  // Handlers' requirements were provided at registration (PipelineHooks.layer).
  const effect = returned as Effect.Effect<unknown, unknown>
  if (Exit.isExit(effect)) return ended(attemptOf(effect))
  const limit = limitOf(spec)
  return Effect.flatMap(
    runBounded(effect, limit, slot === undefined ? null : run.handle, () => void (run.abandoned = true)),
    (bounded) => ended(attemptOfEnding(run, limit, bounded))
  )
}

/** How a handler that failed with `cause` ended: its self-interruption, its typed failure, or a panic. */
const failedAttempt = (cause: Cause.Cause<unknown>): Attempt => {
  if (Cause.isInterruptedOnly(cause)) return INTERRUPTED_ATTEMPT
  const failure = Cause.failureOption(cause)
  // The handler's own error value: Effect may have wrapped it to carry the span.
  return Option.isSome(failure) && !Cause.isDie(cause)
    ? { _tag: "Failed", error: Cause.originalError(failure.value), cause }
    : { _tag: "Panic", cause }
}

/** Records a panic, then re-raises it as the defect it is (C13). */
export const propagatePanic = (run: Run, failure: FailurePolicy, cause: Cause.Cause<unknown>): Effect.Effect<never> =>
  Effect.zipRight(
    run.finish(
      {
        status: "failed",
        error: panicText(cause),
        decision: { policy: failure, action: "propagate_panic", reason: "panic" }
      },
      Exit.failCause(cause)
    ),
    // The original cause, unchanged; a typed failure mixed into it becomes a
    // defect too, so the panic stays out of the typed error channel.
    Effect.catchAll(Effect.failCause(cause), (mixed) => Effect.die(mixed))
  )

/** Records a handler's self-interruption, then interrupts. */
export const propagateInterruption = (run: Run): Effect.Effect<never> =>
  Effect.zipRight(
    run.finish({ status: "failed", error: "interrupted" }, Exit.interrupt(FiberId.none)),
    Effect.interrupt
  )
