/**
 * Where detached hook runs live (seed 001 `FireAndRecord`, `Background`):
 * a `FiberSet` owned by the hook runtime Layer's scope — never a daemon
 * fiber. `fireAndRecord` runs start at once; `background` runs queue for one
 * of `concurrency` permits. When the Layer's scope closes, the pool waits up
 * to `drainTimeout` for running and queued work, then interrupts what is
 * left; every run is recorded either way (an interrupted one as
 * "interrupted at shutdown").
 */
import { Duration, Effect, FiberSet, type Scope } from "effect"
import type { Detach } from "./invoke.js"

/**
 * Pool options.
 *
 * @since 0.1.0
 * @category models
 */
export interface PoolOptions {
  /** Background runs at once (default 4). */
  readonly concurrency?: number | undefined
  /** How long shutdown waits for detached runs before interrupting them (default 5 seconds). */
  readonly drainTimeout?: Duration.DurationInput | undefined
}

/**
 * The pool: how the runtime starts a detached run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Pool {
  readonly detach: Detach
}

/**
 * Makes a pool in the current scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: PoolOptions): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.gen(function*() {
    const set = yield* FiberSet.make<void, never>()
    const permits = yield* Effect.makeSemaphore(Math.max(1, options?.concurrency ?? 4))
    const drainTimeout = Duration.decode(options?.drainTimeout ?? Duration.seconds(5))
    let closing = false
    // Added after the set, so it runs first: refuse new runs, drain (bounded;
    // the wait must be interruptible for the bound to hold in a finalizer),
    // then the set's own finalizer interrupts whatever is still running.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        return Effect.interruptible(FiberSet.awaitEmpty(set)).pipe(Effect.timeoutOption(drainTimeout), Effect.asVoid)
      })
    )
    return {
      detach: (policy, run, cancelled) => {
        if (closing) return cancelled("not started: the agent is shutting down")
        const gated = policy._tag === "Background" ? permits.withPermits(1)(run) : run
        // Recorded when interrupted — running, or still queued for a permit.
        // Interruptible whatever region it is started from (an Around
        // observer's detached run starts in the operation's finalizer):
        // shutdown must be able to stop it once the drain bound passed.
        return Effect.asVoid(
          FiberSet.run(set, Effect.interruptible(Effect.onInterrupt(gated, () => cancelled("interrupted at shutdown"))))
        )
      }
    }
  })
