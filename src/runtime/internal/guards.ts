/**
 * Guards of an operation's runs (seed 003, DESIGN §6): they wrap the run,
 * the first-ordered outermost, and each guard's ending decides it — the
 * rules are in the module header of `Operations.ts`. A guard that cannot
 * run because a dependency did not complete (it was skipped, or it failed
 * and stepped aside) denies the operation if it fails closed.
 *
 * `proceed` runs the operation at most once, inside the guard: it may be
 * called again only after a failed run (a retry, counted in `attempts`); a
 * call after the operation succeeded, a call while it runs, or a call after
 * the guard ended is refused with `HookDenied` `proceed_misuse` and runs
 * nothing. A run still in flight when the guard ends (a forked `proceed`)
 * is interrupted before the guard's decision takes effect. Any misuse is a
 * contract failure of the guard, decided by its failure policy. The guard's
 * deadline counts its own time only: it pauses while the operation runs.
 */
import { Cause, type Duration, Effect, Exit, type Fiber } from "effect"
import type { HookDecision } from "../../domain/ExecutionRecord.js"
import type { Call, Operation } from "../../domain/Operation.js"
import { isGuardable } from "../../domain/Operation.js"
import { HookDenied } from "../../domain/PipelineError.js"
import { allows } from "../Capability.js"
import type { Participant } from "../Subscription.js"
import { type Attempt, attempt, limitOf, propagateInterruption, propagatePanic } from "./attempt.js"
import { Pause, stop } from "./bounded.js"
import { failureDecision, failureText } from "./failures.js"
import { Refusal } from "./operationHooks.js"
import type { AnyGuard, OperationRunSpec, SpecOf } from "./participants.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { openRun } from "./run.js"
import { metaOf } from "./runMeta.js"
import { skipped } from "./skip.js"
import { clockOf } from "./timing.js"

/** A fail-closed guard that could not run (a dependency did not complete) denies the operation. */
const dependencyDenied = (spec: OperationRunSpec, detail: string): HookDenied =>
  new HookDenied({ hookName: spec.hookName, operation: spec.operation.operation, reason: "dependency_failed", detail })

/**
 * The `proceed` one guard run hands its handler: it runs the operation at
 * most once (retries after a failure aside), and only while the guard runs.
 */
class Proceed<A, E> {
  attempts = 0
  /** How the last run of the operation ended: a guard that fails after it ran must not run it again. */
  last: Exit.Exit<A, E | HookDenied> | undefined = undefined
  /** What the last run failed with, to tell the operation's failure from the guard's own. */
  failure: { readonly error: unknown } | undefined = undefined
  /** The first misuse of `proceed`, if any. */
  misuse: string | undefined = undefined
  private state: "ready" | "running" | "succeeded" | "closed" = "ready"
  private running: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
  readonly effect: Effect.Effect<A, E | HookDenied>

  constructor(
    private readonly operation: Effect.Effect<A, E | HookDenied>,
    readonly pause: Pause,
    private readonly refuse: (detail: string) => HookDenied
  ) {
    this.effect = Effect.withFiberRuntime((fiber) => this.start(fiber))
  }

  private start(fiber: Fiber.RuntimeFiber<unknown, unknown>): Effect.Effect<A, E | HookDenied> {
    switch (this.state) {
      case "closed":
        return this.misused("proceed was called after the guard had ended (an escaped call): the operation did not run")
      case "running":
        return this.misused("proceed was called again while the operation was running: the second call did not run it")
      case "succeeded":
        return this.misused("proceed was called again after the operation had succeeded: it ran once")
    }
    this.state = "running"
    this.attempts++
    this.failure = undefined
    this.running = fiber
    this.pause.enter()
    return Effect.onExit(
      Effect.tapError(
        this.operation,
        (error) => Effect.sync(() => void (this.failure = { error: Cause.originalError(error) }))
      ),
      (exit) =>
        Effect.sync(() => {
          this.last = exit
          this.running = undefined
          this.pause.exit()
          if (this.state === "running") this.state = Exit.isSuccess(exit) ? "succeeded" : "ready"
        })
    )
  }

  private misused(detail: string): Effect.Effect<never, HookDenied> {
    this.misuse ??= detail
    return Effect.fail(this.refuse(detail))
  }

  /**
   * The guard's handler returned (called on its own fiber, before the
   * fiber's forked children are interrupted): an operation still running
   * now escaped the guard. From now on no call runs it.
   */
  handlerEnded(): void {
    if (this.state === "running") this.escaped()
    this.state = "closed"
  }

  private escaped(): void {
    this.misuse ??=
      "proceed escaped the guard: the operation was still running when the guard ended, and was interrupted"
  }

  /**
   * The guard's run ended: a run of the operation still in flight (forked
   * as a daemon, or the guard ended some other way) is interrupted — given
   * the grace period to stop — before the guard's decision takes effect.
   */
  close(grace: Duration.Duration): Effect.Effect<void> {
    const running = this.running
    this.state = "closed"
    if (running === undefined) return Effect.void
    this.escaped()
    return Effect.asVoid(stop(running, grace))
  }

  /** The guard's handler, watched: its end closes `proceed`. */
  watch(returned: unknown): unknown {
    return Effect.isEffect(returned)
      ? Effect.onExit(returned, () => Effect.sync(() => this.handlerEnded()))
      : returned
  }
}

const guardRun = <A, E>(
  participant: Participant<AnyGuard>,
  spec: OperationRunSpec,
  call: Call,
  operation: Effect.Effect<A, E | HookDenied>,
  steppedAside: () => void
): Effect.Effect<A, E | HookDenied> =>
  Effect.withFiberRuntime((fiber) => {
    const limit = limitOf(spec)
    const refuse = (reason: HookDenied["reason"], detail: string, cause?: unknown) =>
      new HookDenied({
        hookName: participant.id,
        operation: call.operation,
        reason,
        detail,
        ...(cause === undefined ? {} : { cause })
      })
    const proceed = new Proceed(operation, new Pause(clockOf(fiber)), (detail) => refuse("proceed_misuse", detail))
    return Effect.flatMap(openRun(spec), (run) => {
      const finish = (
        ending: {
          readonly status: "completed" | "failed" | "timed_out" | "denied"
          readonly error?: string
          readonly decision?: HookDecision
        },
        exit: Exit.Exit<unknown, unknown>
      ) => run.finish({ ...ending, attempts: proceed.attempts }, exit)
      const denied = (reason: HookDenied["reason"], detail: string, decision: HookDecision, cause?: unknown) => {
        const error = refuse(reason, detail, cause)
        return Effect.zipRight(
          finish({ status: "denied", error: detail, decision }, Exit.fail(error)),
          Effect.fail(error)
        )
      }
      /**
       * A failing fail-open guard steps aside: the operation runs as if it
       * were absent — or, if the guard already ran it, ends as that run did
       * (a run cut short by the guard's end is not an ending: it runs again).
       */
      const stepAside = (status: "failed" | "timed_out", error: string, decision: HookDecision) => {
        steppedAside()
        const last = proceed.last
        return Effect.zipRight(
          finish({ status, error, decision }, Exit.void),
          last === undefined || (Exit.isFailure(last) && Cause.isInterruptedOnly(last.cause)) ? operation : last
        )
      }
      const misused = (detail: string) =>
        participant.failure === "fail_open"
          ? stepAside("failed", detail, { policy: "fail_open", action: "continue", reason: "proceed_misuse" })
          : denied("proceed_misuse", detail, { policy: "fail_closed", action: "deny", reason: "proceed_misuse" })
      const decide = (ended: Attempt): Effect.Effect<A, E | HookDenied> => {
        switch (ended._tag) {
          case "Panic":
            return propagatePanic(run, participant.failure, ended.cause)
          case "Interrupted":
            return propagateInterruption(run)
        }
        if (proceed.misuse !== undefined) return misused(proceed.misuse)
        switch (ended._tag) {
          case "Value": {
            // A guard cannot invent a value: it only returns what `proceed`
            // produced (a JavaScript guard could return anything).
            const last = proceed.last
            if (last === undefined || !Exit.isSuccess(last) || !Object.is(last.value, ended.value)) {
              const text =
                "the guard returned a value that proceed did not produce (a guard returns proceed, wrapped, or a denial)"
              return participant.failure === "fail_open"
                ? stepAside("failed", text, failureDecision("fail_open", "hook_error"))
                : denied("hook_failed", text, { policy: "fail_closed", action: "deny", reason: "invalid_result" })
            }
            return Effect.as(finish({ status: "completed" }, Exit.void), last.value)
          }
          case "Failed": {
            const error = ended.error
            if (proceed.failure !== undefined && proceed.failure.error === error) {
              return Effect.zipRight(finish({ status: "completed" }, Exit.void), Effect.fail(error as E | HookDenied))
            }
            if (error instanceof Refusal) {
              if (!allows(participant.grant, "deny")) {
                return stepAside(
                  "failed",
                  `undeclared contribution: refused the operation without the "deny" capability (${error.reason})`,
                  { policy: participant.failure, action: "continue", reason: "undeclared_contribution" }
                )
              }
              return denied(
                "refused",
                error.reason,
                { policy: "fail_closed", action: "deny", reason: "refused" },
                error.cause
              )
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
        }
      }
      return Effect.flatMap(
        attempt(spec, run, () =>
          proceed.watch(participant.handler(call, proceed.effect, metaOf(participant, call))), proceed.pause),
        (ended) =>
          Effect.zipRight(
            proceed.close(limit.grace),
            Effect.suspend(() =>
              decide(ended)
            )
          )
      )
    })
  })

/** Builds, once, the function that wraps a run's body in its operation's guards. */
export const makeGuarded = (
  participants: { readonly guard: (operation: Operation) => ReadonlyArray<Participant<AnyGuard>> },
  specOf: SpecOf
) =>
<A, E>(
  call: Call,
  recorder: RequestRecorder,
  body: Effect.Effect<A, E>
): Effect.Effect<A, E | HookDenied> => {
  const guards = isGuardable(call.operation) ? participants.guard(call.operation) : []
  if (guards.length === 0) return body
  const completed: Array<boolean> = []
  // Outermost first: guard i's proceed is guard i + 1 wrapping … the body.
  // Each guard is looked at when its turn comes (inside the proceed of the
  // one before it), so whether its dependencies completed is known by then.
  const wrap = (i: number): Effect.Effect<A, E | HookDenied> => {
    if (i === guards.length) return body
    return Effect.suspend(() => {
      const participant = guards[i]!
      const spec = specOf(participant, i, call, recorder)
      // A guard that cannot run fails closed: the operation is denied.
      const skip = skipped(participant, guards, completed, spec, dependencyDenied)
      if (skip !== undefined) return Effect.zipRight(skip, wrap(i + 1))
      completed[i] = true
      return guardRun(participant, spec, call, wrap(i + 1), () => void (completed[i] = false))
    })
  }
  return wrap(0)
}
