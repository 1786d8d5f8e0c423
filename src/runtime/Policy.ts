/**
 * A subscription's policies as data (seed 001): how a hook run is executed
 * and what its failure means. They are values users compose and the runtime
 * interprets in one place (`internal/invoke.ts`).
 *
 * - `blocking` (default): the request waits for the hook.
 * - `deadline(d)`: the request waits at most `d`; an overrun interrupts the
 *   hook, records `timed_out`, then the failure policy decides.
 * - `fireAndRecord`: the hook starts and the request goes on at once; its
 *   run lands in the record later (a late update, C15).
 * - `background`: like `fireAndRecord`, but queued in the runtime's bounded
 *   pool, drained (with a bound) or interrupted when the agent shuts down.
 *
 * Detached runs (`fireAndRecord`, `background`) are only for hooks whose
 * points merely observe (AfterExecution, Around observers): nothing they
 * return could change a request that has moved on.
 *
 * @since 0.1.0
 */
import { Duration } from "effect"
import type { ExecutionPolicyName } from "../domain/ExecutionRecord.js"

/**
 * How a hook run is executed.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecutionPolicy =
  | { readonly _tag: "Blocking" }
  | { readonly _tag: "Deadline"; readonly timeout: Duration.Duration }
  | { readonly _tag: "FireAndRecord" }
  | { readonly _tag: "Background" }

/**
 * Wait for the hook (the default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const blocking: ExecutionPolicy = { _tag: "Blocking" }

/**
 * Wait at most `timeout`; an overrun is `timed_out`, then the failure policy
 * decides.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook } from "effect-agent-pipeline"
 *
 * const rag = Hook.make({
 *   name: "rag",
 *   execution: Hook.deadline("300 millis"),
 *   beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "…" } })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const deadline = (timeout: Duration.DurationInput): ExecutionPolicy => ({
  _tag: "Deadline",
  timeout: Duration.decode(timeout)
})

/**
 * Start the hook and go on at once; record its run when it ends.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fireAndRecord: ExecutionPolicy = { _tag: "FireAndRecord" }

/**
 * Queue the hook in the runtime's bounded background pool.
 *
 * @since 0.1.0
 * @category constructors
 */
export const background: ExecutionPolicy = { _tag: "Background" }

/**
 * Whether a run may detach from the request.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDetached = (policy: ExecutionPolicy): boolean =>
  policy._tag === "FireAndRecord" || policy._tag === "Background"

/**
 * The policy's name in records.
 *
 * @since 0.1.0
 * @category utils
 */
export const nameOf = (policy: ExecutionPolicy): ExecutionPolicyName => {
  switch (policy._tag) {
    case "Blocking":
      return "blocking"
    case "Deadline":
      return "deadline"
    case "FireAndRecord":
      return "fire_and_record"
    case "Background":
      return "background"
  }
}

/**
 * What a hook's failure means: `fail_open` records it and carries on with
 * what the point had; `fail_closed` stops there (a typed error, or a denial
 * for a guard).
 *
 * @since 0.1.0
 * @category models
 */
export type FailurePolicy = "fail_open" | "fail_closed"
