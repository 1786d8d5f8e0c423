/**
 * Runs operations through their hooks (seed 003, seed 002): each run gets
 * an immutable call snapshot; Around observers begin in order before it and
 * finish in reverse order after it with the outcome (`completed`, `denied`,
 * `failed`, `canceled`); guards wrap it, the first-ordered outermost; before
 * and after transforms chain its input and output (the operation's own code
 * calls {@link Operations.transform}, inside the guarded effect, so a retry
 * repeats them).
 *
 * A guard's ending decides the run:
 * - it succeeds → the operation's value;
 * - it fails with what `proceed` failed with → that failure (the operation
 *   failed; the guard let it through);
 * - it refuses (`Hook.deny`) → `denied`, `HookDenied` with reason `refused`
 *   (a guard that did not declare `deny` has its refusal refused: recorded
 *   as a contract failure, and the operation runs as if it were absent);
 * - it fails otherwise, or overruns its deadline → its failure policy: fail
 *   closed (the default) → `denied` (`hook_failed` / `timed_out`); fail
 *   open → recorded, and the operation runs as if the guard were absent.
 *
 * An operation nobody hooks costs nothing: {@link Operations.observes} says
 * so once, at construction.
 *
 * @since 0.1.0
 */
import { Cause, Clock, Effect, Exit, FiberId, type Scope } from "effect"
import type { HookDecision } from "../domain/ExecutionRecord.js"
import { TransformPoint, transformOperation } from "../domain/HookPoint.js"
import * as Json from "../domain/Json.js"
import type { Call, CallRef, Coordinates, Operation, Outcome, Payloads, Result } from "../domain/Operation.js"
import { isGuardable, operations } from "../domain/Operation.js"
import { HookDenied, HookFailed } from "../domain/PipelineError.js"
import { allows, rewriteCapability } from "./Capability.js"
import {
  attempt,
  type Detach,
  failureDecision,
  failureText,
  openRun,
  propagateInterruption,
  propagatePanic,
  recordSkipped,
  type Run
} from "./internal/invoke.js"
import { type Finish, Refusal, type TransformValues } from "./OperationHooks.js"
import { isDetached } from "./Policy.js"
import type { InvocationHandle, RequestRecorder } from "./RequestRecorder.js"
import { type Participant, skipReason, unmetDependencies } from "./Subscription.js"

/**
 * What a new run is about.
 *
 * @since 0.1.0
 */
export interface CallInit<Op extends Operation> {
  readonly coordinates: Coordinates
  readonly parent?: CallRef | undefined
  readonly payload: Payloads[Op]
  /** When the run began, if before now (an approval wait began at the suspension). Default: now. */
  readonly startedAt?: number | undefined
}

/**
 * The operation a transform point rewrites for.
 *
 * @since 0.1.0
 */
export type TransformOperation<P extends TransformPoint> = P extends "before_inference" | "after_inference" ? "inference"
  : P extends "before_tool" | "after_tool" ? "tool_call"
  : P extends "before_retrieval" | "after_retrieval" ? "retrieval"
  : P extends "before_memory_load" | "after_memory_load" ? "memory_load"
  : "memory_store"

/**
 * The operations runtime.
 *
 * @since 0.1.0
 */
export interface Operations {
  /** Whether any hook observes, guards or transforms any operation. */
  readonly active: boolean
  /** Whether any hook observes, guards or transforms `operation`. */
  readonly observes: (operation: Operation) => boolean
  /** The immutable snapshot of a new run (its id, its start time). */
  readonly call: <Op extends Operation>(operation: Op, init: CallInit<Op>) => Effect.Effect<Call<Op>>
  /** Runs `body` as the run `call`: observers around it, guards wrapping it. */
  readonly run: <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    body: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied>
  /**
   * Opens the run `call` in the current scope — for a run that is a stream:
   * observers begin now and end when the scope closes (with its exit);
   * guards wrap only `start`, what happens before the stream's first
   * element (a stream cannot be retried once it began).
   */
  readonly runScoped: <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    start: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | HookDenied, Scope.Scope>
  /** Chains `point`'s transforms over `value`. */
  readonly transform: <P extends TransformPoint>(
    point: P,
    call: Call<TransformOperation<P>>,
    value: TransformValues[P],
    recorder: RequestRecorder
  ) => Effect.Effect<TransformValues[P], HookFailed>
}

/**
 * The participants of each operation point (from the subscription
 * registry).
 *
 * @since 0.1.0
 */
export interface OperationParticipants {
  readonly around: (operation: Operation) => ReadonlyArray<Participant<AnyAround>>
  /** Empty for an operation guards cannot target. */
  readonly guard: (operation: Operation) => ReadonlyArray<Participant<AnyGuard>>
  readonly transform: (point: TransformPoint) => ReadonlyArray<Participant<AnyTransform>>
}

// The engine calls each handler with a call of the operation the handler
// was registered for; these method-shaped types let one engine hold them all.
/** An Around observer of some operation. */
export type AnyAround = { bivarianceHack(call: Call): Effect.Effect<Finish | void, unknown> }["bivarianceHack"]
/** A guard of some operation. */
export type AnyGuard = {
  bivarianceHack<A, E>(call: Call, proceed: Effect.Effect<A, E>): Effect.Effect<A, unknown>
}["bivarianceHack"]

/** A transform of some point (its value is checked at run time: handlers may be JavaScript). */
export type AnyTransform = {
  bivarianceHack(call: Call, value: TransformValues[TransformPoint]): Effect.Effect<unknown, unknown>
}["bivarianceHack"]

let counter = 0
const nextCallId = (operation: Operation): string => `${operation}-${(++counter).toString(36)}`

/**
 * The runtime's own frozen copy of a payload: hooks cannot change it, and
 * freezing it never freezes the caller's objects (payloads are JSON-like
 * data: plain objects, arrays, primitives).
 */
const snapshotOf = <A>(value: A): A => {
  if (typeof value !== "object" || value === null) return value
  const copy: Record<string, unknown> | Array<unknown> = Array.isArray(value)
    ? value.map(snapshotOf)
    : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, snapshotOf(v)]))
  // A copy of the value's own data, frozen.
  return Object.freeze(copy) as A
}

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Outcome => {
  if (Exit.isSuccess(exit)) return "completed"
  if (Cause.isInterruptedOnly(exit.cause)) return "canceled"
  const failure = Cause.failureOption(exit.cause)
  return failure._tag === "Some" && failure.value instanceof HookDenied ? "denied" : "failed"
}

const errorOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isSuccess(exit) ? undefined : Cause.squash(exit.cause)

/** Does a transform's value have the point's shape? */
const validValue = (point: TransformPoint, value: unknown): string | undefined => {
  switch (point) {
    case "before_inference":
    case "after_inference":
    case "before_retrieval":
    case "before_memory_load":
    case "after_memory_store":
      return typeof value === "string" ? undefined : `${point} must return a string`
    case "before_tool":
      return typeof value === "object" && value !== null && !Array.isArray(value) && Json.isJson(value)
        ? undefined
        : "before_tool must return a JSON object of arguments"
    case "after_tool":
      return typeof value === "object" && value !== null &&
          (("output" in value && Json.isJson(value.output)) || ("error" in value && typeof value.error === "string"))
        ? undefined
        : "after_tool must return { output } (JSON) or { error } (a string)"
    case "after_retrieval":
      return Array.isArray(value) && value.every((d) => typeof d === "object" && d !== null && typeof d.id === "string" && typeof d.content === "string")
        ? undefined
        : "after_retrieval must return documents ({ id, content })"
    case "after_memory_load":
      return Array.isArray(value) && value.every((r) => typeof r === "object" && r !== null && typeof r.content === "string")
        ? undefined
        : "after_memory_load must return memory records ({ content })"
    case "before_memory_store":
      return typeof value === "object" && value !== null && typeof (value as { content?: unknown }).content === "string"
        ? undefined
        : "before_memory_store must return a memory record ({ content })"
  }
}

const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (Json.isJson(a) && Json.isJson(b) && Json.equals(a, b))

/**
 * Builds the runtime over the registry's operation participants.
 *
 * @since 0.1.0
 */
export const make = (participants: OperationParticipants, detach: Detach): Operations => {
  // Which operations any hook observes, guards or transforms: computed once,
  // so an operation nobody hooks runs its body directly.
  const observed = new Set<Operation>()
  for (const operation of operations) {
    if (participants.around(operation).length > 0 || participants.guard(operation).length > 0) observed.add(operation)
  }
  for (const point of TransformPoint.literals) {
    if (participants.transform(point).length > 0) observed.add(transformOperation[point])
  }

  const specOf = (participant: Participant<unknown>, sequence: number, call: Call, recorder: RequestRecorder) => ({
    hookName: participant.id,
    point: participant.point,
    spanName: participant.spanName,
    sequence,
    phase: call.coordinates.phase,
    operation: { operation: call.operation, callId: call.callId, stepId: call.coordinates.stepId },
    execution: participant.execution,
    failure: participant.failure,
    recorder
  })

  // ---- Around observers --------------------------------------------------------------

  interface Observing {
    readonly run: Run
    readonly finish: Finish | undefined
    readonly spec: ReturnType<typeof specOf>
  }

  /** Begins one observer; a failing begin is recorded at once (fail open). */
  const begin = (
    participant: Participant<AnyAround>,
    spec: ReturnType<typeof specOf>,
    call: Call,
    handle?: InvocationHandle
  ): Effect.Effect<Observing | undefined> =>
    Effect.flatMap(openRun(spec, undefined, handle), (run) =>
      Effect.flatMap(attempt(spec, run, () => participant.handler(call)), (ended): Effect.Effect<Observing | undefined> => {
        switch (ended._tag) {
          case "Value":
            if (ended.value === undefined || typeof ended.value === "function") {
              // A value of function type is the observer's finish callback.
              const finish = ended.value as Finish | undefined
              return Effect.succeed({ run, finish, spec })
            }
            return Effect.as(
              run.finish({
                status: "failed",
                error: "an Around observer must return a finish function or nothing",
                decision: failureDecision("fail_open", "hook_error")
              }, Exit.void),
              undefined
            )
          case "WrongShape":
            return Effect.as(
              run.finish({ status: "failed", error: "hook handler did not return an Effect", decision: failureDecision("fail_open", "hook_error") }, Exit.void),
              undefined
            )
          case "TimedOut":
            return Effect.as(run.finish({ status: "timed_out", error: ended.error, decision: failureDecision("fail_open", "timed_out") }, Exit.void), undefined)
          case "Failed":
            return Effect.as(
              run.finish({ status: "failed", error: failureText(ended.error), decision: failureDecision("fail_open", "hook_error") }, Exit.failCause(ended.cause)),
              undefined
            )
          case "Panic":
            return propagatePanic(run, "fail_open", ended.cause)
          case "Interrupted":
            return propagateInterruption(run)
        }
      }))

  /** Ends one observer with the run's result. */
  const end = (observing: Observing, result: Result): Effect.Effect<void> => {
    const { finish, run, spec } = observing
    if (finish === undefined) return run.finish({ status: "completed" }, Exit.void)
    return Effect.flatMap(attempt(spec, run, () => finish(result)), (ended): Effect.Effect<void> => {
      switch (ended._tag) {
        case "Value":
          return run.finish({ status: "completed" }, Exit.void)
        case "WrongShape":
          return run.finish({ status: "failed", error: "finish did not return an Effect", decision: failureDecision("fail_open", "hook_error") }, Exit.void)
        case "TimedOut":
          return run.finish({ status: "timed_out", error: ended.error, decision: failureDecision("fail_open", "timed_out") }, Exit.void)
        case "Failed":
          return run.finish({ status: "failed", error: failureText(ended.error), decision: failureDecision("fail_open", "hook_error") }, Exit.failCause(ended.cause))
        case "Panic":
          return propagatePanic(run, "fail_open", ended.cause)
        case "Interrupted":
          return propagateInterruption(run)
      }
    })
  }

  /** A detached observer runs after the operation: begin, then finish, in the pool. */
  const observeDetached = (
    participant: Participant<AnyAround>,
    spec: ReturnType<typeof specOf>,
    call: Call,
    result: Result
  ): Effect.Effect<void> =>
    Clock.clockWith((clock) => {
      const handle = spec.recorder.startInvocation()
      const queuedAt = clock.unsafeCurrentTimeMillis()
      const entry = {
        name: spec.hookName,
        stage: spec.point,
        outcome: "pending" as const,
        status: "backgrounded" as const,
        sequence: spec.sequence,
        startedAt: queuedAt,
        duration: 0,
        operation: call.operation,
        callId: call.callId
      }
      // The run completes the entry recorded as backgrounded, through the same handle.
      let observing: Observing | undefined
      const body = Effect.flatMap(begin(participant, spec, call, handle), (begun) => {
        observing = begun
        return begun === undefined ? Effect.void : end(begun, result)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logWarning(`detached observer ${spec.hookName} panicked`, Cause.pretty(cause))
        ),
        Effect.asVoid
      )
      const cancelled = (reason: string) =>
        observing !== undefined
          ? observing.run.finish({ status: "failed", error: reason }, Exit.interrupt(FiberId.none))
          : handle.complete({ ...entry, outcome: "failed", status: "failed", error: reason })
      return Effect.zipRight(handle.begin(entry), detach(participant.execution, body, cancelled))
    })

  // ---- Guards ------------------------------------------------------------------------

  const guardRun = <A, E>(
    participant: Participant<AnyGuard>,
    spec: ReturnType<typeof specOf>,
    call: Call,
    proceed: Effect.Effect<A, E | HookDenied>
  ): Effect.Effect<A, E | HookDenied> =>
    Effect.flatMap(openRun(spec), (run) => {
      let attempts = 0
      // What the last run of `proceed` ended with: a guard that fails after
      // it ran must not make the operation run again.
      let last: Exit.Exit<A, E | HookDenied> | undefined
      let proceedFailure: { readonly error: unknown } | undefined
      const counted = Effect.suspend(() => {
        attempts++
        proceedFailure = undefined
        return Effect.onExit(
          Effect.tapError(proceed, (error) => Effect.sync(() => void (proceedFailure = { error: Cause.originalError(error) }))),
          (exit) => Effect.sync(() => void (last = exit))
        )
      })
      const denied = (reason: HookDenied["reason"], detail: string, decision: HookDecision, cause?: unknown) => {
        const error = new HookDenied({
          hookName: participant.id,
          operation: call.operation,
          reason,
          detail,
          ...(cause === undefined ? {} : { cause })
        })
        return Effect.zipRight(
          run.finish({ status: "denied", error: detail, decision, attempts }, Exit.fail(error)),
          Effect.fail(error)
        )
      }
      /**
       * A failing fail-open guard steps aside: the operation runs as if it
       * were absent — or, if the guard already ran it, ends as that run did.
       */
      const stepAside = (status: "failed" | "timed_out", error: string, decision: HookDecision) =>
        Effect.zipRight(
          run.finish({ status, error, decision, attempts }, Exit.void),
          Effect.suspend(() => (last === undefined ? proceed : last))
        )
      return Effect.flatMap(
        attempt(spec, run, () => participant.handler(call, counted)),
        (ended): Effect.Effect<A, E | HookDenied> => {
          switch (ended._tag) {
            case "Value":
              // A guard cannot invent a value: it only returns what `proceed` produced.
              return Effect.as(run.finish({ status: "completed", attempts }, Exit.void), ended.value as A)
            case "Failed": {
              const error = ended.error
              if (proceedFailure !== undefined && proceedFailure.error === error) {
                return Effect.zipRight(run.finish({ status: "completed", attempts }, Exit.void), Effect.fail(error as E | HookDenied))
              }
              if (error instanceof Refusal) {
                if (!allows(participant.grant, "deny")) {
                  return stepAside(
                    "failed",
                    `undeclared contribution: refused the operation without the "deny" capability (${error.reason})`,
                    { policy: participant.failure, action: "continue", reason: "undeclared_contribution" }
                  )
                }
                return denied("refused", error.reason, { policy: "fail_closed", action: "deny", reason: "refused" }, error.cause)
              }
              const text = failureText(error)
              return participant.failure === "fail_open"
                ? stepAside("failed", text, failureDecision("fail_open", "hook_error"))
                : denied("hook_failed", text, { policy: "fail_closed", action: "deny", reason: "hook_error" }, error)
            }
            case "TimedOut":
              return participant.failure === "fail_open"
                ? stepAside("timed_out", ended.error, failureDecision("fail_open", "timed_out"))
                : denied("timed_out", ended.error, { policy: "fail_closed", action: "deny", reason: "timed_out" })
            case "WrongShape": {
              const text = "hook handler did not return an Effect"
              return participant.failure === "fail_open"
                ? stepAside("failed", text, failureDecision("fail_open", "hook_error"))
                : denied("hook_failed", text, { policy: "fail_closed", action: "deny", reason: "hook_error" })
            }
            case "Panic":
              return propagatePanic(run, participant.failure, ended.cause)
            case "Interrupted":
              return propagateInterruption(run)
          }
        }
      )
    })

  const guarded = <A, E>(
    call: Call,
    recorder: RequestRecorder,
    body: Effect.Effect<A, E>
  ): Effect.Effect<A, E | HookDenied> => {
    const guards = isGuardable(call.operation) ? participants.guard(call.operation) : []
    if (guards.length === 0) return body
    const completed: Array<boolean> = []
    // Outermost first: guard i's proceed is guard i + 1 wrapping … the body.
    const wrap = (i: number): Effect.Effect<A, E | HookDenied> => {
      if (i === guards.length) return body
      const participant = guards[i]!
      const spec = specOf(participant, i, call, recorder)
      const reason = skipReason(participant, completed)
      if (reason !== undefined) {
        completed[i] = false
        // A guard that cannot run fails closed: the operation is denied.
        return reason === "dependency_failed" && participant.failure === "fail_closed"
          ? Effect.zipRight(
            recordSkipped(spec, reason),
            Effect.fail(
              new HookDenied({
                hookName: participant.id,
                operation: call.operation,
                reason: "dependency_failed",
                detail: unmetDependencies(participant, guards, completed)
              })
            )
          )
          : Effect.zipRight(recordSkipped(spec, reason), wrap(i + 1))
      }
      completed[i] = true
      return guardRun(participant, spec, call, wrap(i + 1))
    }
    return Effect.suspend(() => wrap(0))
  }

  // ---- Runs ----------------------------------------------------------------------------

  /** Begins the observers of a run; returns how to end them with the run's exit. */
  const observe = (call: Call, recorder: RequestRecorder) =>
    Effect.suspend(() => {
      const observers = participants.around(call.operation)
      const open: Array<Observing> = []
      const later: Array<readonly [Participant<AnyAround>, ReturnType<typeof specOf>]> = []
      const completed: Array<boolean> = []
      const begins = Effect.forEach(observers, (participant, i) => {
        const spec = specOf(participant, i, call, recorder)
        const reason = skipReason(participant, completed)
        if (reason !== undefined) {
          completed[i] = false
          return recordSkipped(spec, reason)
        }
        completed[i] = true
        if (isDetached(participant.execution)) {
          later.push([participant, spec])
          return Effect.void
        }
        return Effect.map(begin(participant, spec, call), (observing) => {
          if (observing !== undefined) open.push(observing)
          else completed[i] = false
        })
      }, { discard: true })
      const ends = (exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
        Clock.clockWith((clock) => {
          const error = errorOf(exit)
          const result: Result = error === undefined
            ? { outcome: outcomeOf(exit), endedAt: clock.unsafeCurrentTimeMillis() }
            : { outcome: outcomeOf(exit), endedAt: clock.unsafeCurrentTimeMillis(), error }
          return Effect.zipRight(
            Effect.forEach(open.reverse(), (observing) => end(observing, result), { discard: true }),
            Effect.forEach(later, ([participant, spec]) => observeDetached(participant, spec, call, result), { discard: true })
          )
        })
      return Effect.as(begins, ends)
    })

  const run = <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    body: Effect.Effect<A, E>
  ): Effect.Effect<A, E | HookDenied> => {
    if (!observed.has(call.operation)) return body
    if (participants.around(call.operation).length === 0) return guarded(call, recorder, body)
    return Effect.flatMap(observe(call, recorder), (ends) => Effect.onExit(guarded(call, recorder, body), ends))
  }

  const runScoped = <Op extends Operation, A, E>(
    call: Call<Op>,
    recorder: RequestRecorder,
    start: Effect.Effect<A, E>
  ): Effect.Effect<A, E | HookDenied, Scope.Scope> => {
    if (!observed.has(call.operation)) return start
    return Effect.flatMap(observe(call, recorder), (ends) =>
      Effect.zipRight(Effect.addFinalizer(ends), guarded(call, recorder, start)))
  }

  // ---- Transforms ----------------------------------------------------------------------

  const transform = <P extends TransformPoint>(
    point: P,
    call: Call<TransformOperation<P>>,
    value: TransformValues[P],
    recorder: RequestRecorder
  ): Effect.Effect<TransformValues[P], HookFailed> => {
    const chain = participants.transform(point)
    if (chain.length === 0) return Effect.succeed(value)
    const capability = rewriteCapability[point]
    return Effect.suspend(() => {
      let current = value
      const completed: Array<boolean> = []
      const step = (i: number): Effect.Effect<TransformValues[P], HookFailed> => {
        if (i === chain.length) return Effect.succeed(current)
        const participant = chain[i]!
        const spec = specOf(participant, i, call, recorder)
        const reason = skipReason(participant, completed)
        if (reason !== undefined) {
          completed[i] = false
          return reason === "dependency_failed" && participant.failure === "fail_closed"
            ? Effect.zipRight(
              recordSkipped(spec, reason),
              Effect.fail(
                new HookFailed({
                  hookName: participant.id,
                  point,
                  reason: "dependency_failed",
                  detail: unmetDependencies(participant, chain, completed)
                })
              )
            )
            : Effect.zipRight(recordSkipped(spec, reason), step(i + 1))
        }
        const input = current
        const failed = (
          status: "failed" | "timed_out",
          error: string,
          why: HookFailed["reason"],
          decisionReason: HookDecision["reason"],
          cause?: unknown,
          exit: Exit.Exit<unknown, unknown> = Exit.void
        ): Effect.Effect<TransformValues[P], HookFailed> => {
          completed[i] = false
          const decision: HookDecision = participant.failure === "fail_open"
            ? { policy: "fail_open", action: "continue", reason: decisionReason }
            : { policy: "fail_closed", action: "terminate", reason: decisionReason }
          const recorded = run.finish({ status, error, decision }, exit)
          return participant.failure === "fail_open"
            ? Effect.zipRight(recorded, step(i + 1))
            : Effect.zipRight(
              recorded,
              Effect.fail(
                new HookFailed({
                  hookName: participant.id,
                  point,
                  reason: why,
                  detail: error,
                  ...(cause === undefined ? {} : { cause })
                })
              )
            )
        }
        let run: Run
        return Effect.flatMap(openRun(spec), (opened) => {
          run = opened
          return Effect.flatMap(
            attempt(spec, opened, () => participant.handler(call, input)),
            (ended): Effect.Effect<TransformValues[P], HookFailed> => {
              switch (ended._tag) {
                case "Value": {
                  const invalid = validValue(point, ended.value)
                  if (invalid !== undefined) return failed("failed", invalid, "wrong_shape", "hook_error")
                  const next = ended.value as TransformValues[P]
                  const changed = !sameValue(next, input)
                  if (changed && capability !== undefined && !allows(participant.grant, capability)) {
                    return failed(
                      "failed",
                      `undeclared contribution: rewrote ${point} without the "${capability}" capability`,
                      "undeclared_contribution",
                      "undeclared_contribution"
                    )
                  }
                  completed[i] = true
                  current = next
                  return Effect.zipRight(
                    opened.finish(changed ? { status: "completed", contribution: next } : { status: "completed" }, Exit.void),
                    step(i + 1)
                  )
                }
                case "WrongShape":
                  return failed("failed", "hook handler did not return an Effect", "wrong_shape", "hook_error")
                case "TimedOut":
                  return failed("timed_out", ended.error, "timed_out", "timed_out")
                case "Failed":
                  return failed("failed", failureText(ended.error), "hook_failed", "hook_error", ended.error, Exit.failCause(ended.cause))
                case "Panic":
                  return propagatePanic(opened, participant.failure, ended.cause)
                case "Interrupted":
                  return propagateInterruption(opened)
              }
            }
          )
        })
      }
      return step(0)
    })
  }

  return {
    active: observed.size > 0,
    observes: (operation) => observed.has(operation),
    call: (operation, init) =>
      Clock.clockWith((clock) =>
        Effect.succeed(Object.freeze({
          operation,
          callId: nextCallId(operation),
          startedAt: init.startedAt ?? clock.unsafeCurrentTimeMillis(),
          coordinates: Object.freeze({ ...init.coordinates }),
          // A reference to the parent run, not its snapshot.
          ...(init.parent === undefined
            ? {}
            : { parent: Object.freeze({ operation: init.parent.operation, callId: init.parent.callId }) }),
          payload: snapshotOf(init.payload)
        }))
      ),
    run,
    runScoped,
    transform
  }
}
