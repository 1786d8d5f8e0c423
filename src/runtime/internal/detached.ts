/**
 * Detached hook runs (`fireAndRecord`, `background`): recorded
 * `backgrounded` at once, handed to the runtime's pool, completed by a late
 * update — or recorded failed when they will not finish.
 */
import { Cause, Clock, Effect, Exit, FiberId } from "effect"
import type { ExecutionPolicy } from "../Policy.js"
import type { InvocationHandle } from "./invocationSlot.js"
import { entryOf, type Run, type RunSpec } from "./run.js"

/**
 * Starts a detached run: `fireAndRecord` at once, `background` through the
 * bounded pool. `cancelled` records a run that will not finish: interrupted
 * (running or queued) at shutdown, or refused because shutdown began.
 */
export type Detach = (
  policy: ExecutionPolicy,
  run: Effect.Effect<void>,
  cancelled: (reason: string) => Effect.Effect<void>
) => Effect.Effect<void>

/**
 * Hands a run to the pool: records it `backgrounded` now; `work` opens the
 * run on that entry (telling `opened` about it) and does it. A panic stays
 * in the pool's fiber — recorded by the run, logged, never the request's —
 * and a run that will not finish is completed as failed with the reason.
 */
export const startDetached = (
  spec: Pick<RunSpec, "hookName" | "point" | "sequence" | "phase" | "operation" | "execution" | "recorder">,
  detach: Detach,
  what: string,
  work: (handle: InvocationHandle, opened: (run: Run) => void) => Effect.Effect<void>
): Effect.Effect<void> =>
  Clock.clockWith((clock) => {
    const handle = spec.recorder.startInvocation()
    const queuedAt = clock.unsafeCurrentTimeMillis()
    let run: Run | undefined
    const body = work(handle, (opened) => void (run = opened)).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning(`detached ${what} ${spec.hookName} panicked`, Cause.pretty(cause))
      )
    )
    const cancelled = (reason: string) =>
      run !== undefined
        ? run.finish({ status: "failed", error: reason }, Exit.interrupt(FiberId.none))
        : handle.complete({ ...entryOf(spec, "failed", queuedAt, 0), error: reason })
    return Effect.zipRight(
      handle.begin(entryOf(spec, "backgrounded", queuedAt, 0)),
      detach(spec.execution, body, cancelled)
    )
  })
