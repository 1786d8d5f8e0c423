/**
 * Guards of an operation's runs (seed 003, DESIGN §6): they wrap the run,
 * the first-ordered outermost, and each guard's ending decides it — the
 * rules are in the module header of `Operations.ts`. A guard that cannot
 * run because a dependency failed denies the operation if it fails closed.
 */
import { Cause, Effect, Exit } from "effect"
import type { HookDecision } from "../../domain/ExecutionRecord.js"
import type { Call, Operation } from "../../domain/Operation.js"
import { isGuardable } from "../../domain/Operation.js"
import { HookDenied } from "../../domain/PipelineError.js"
import { allows } from "../Capability.js"
import { Refusal } from "../OperationHooks.js"
import type { RequestRecorder } from "../RequestRecorder.js"
import type { Participant } from "../Subscription.js"
import type { AnyGuard, OperationRunSpec, SpecOf } from "./participants.js"
import {
  attempt,
  failureDecision,
  failureText,
  openRun,
  propagateInterruption,
  propagatePanic
} from "./run.js"
import { skipped } from "./skip.js"

/** A fail-closed guard that could not run (a dependency failed) denies the operation. */
const dependencyDenied = (spec: OperationRunSpec, detail: string): HookDenied =>
  new HookDenied({ hookName: spec.hookName, operation: spec.operation.operation, reason: "dependency_failed", detail })

const guardRun = <A, E>(
  participant: Participant<AnyGuard>,
  spec: OperationRunSpec,
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
  const wrap = (i: number): Effect.Effect<A, E | HookDenied> => {
    if (i === guards.length) return body
    const participant = guards[i]!
    const spec = specOf(participant, i, call, recorder)
    // A guard that cannot run fails closed: the operation is denied.
    const skip = skipped(participant, guards, completed, spec, dependencyDenied)
    // The chain is built once, up front: an outer guard's retry reruns the same inner runs.
    if (skip !== undefined) return Effect.zipRight(skip, wrap(i + 1))
    completed[i] = true
    return guardRun(participant, spec, call, wrap(i + 1))
  }
  return Effect.suspend(() => wrap(0))
}
