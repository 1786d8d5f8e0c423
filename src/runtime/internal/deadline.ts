/**
 * A timeout that costs almost nothing when the work does not wait.
 *
 * `Effect.timeout` races the work against a sleep on two forked fibers:
 * about 30 µs per call here (compiled, Node 20), even for work that finishes
 * at once — and every model call and tool call has a timeout (issue 9), on a
 * path whose whole budget is a few hundred microseconds (issue 7).
 *
 * Work that never suspends cannot overrun anything (JavaScript runs it to
 * the end before a timer could fire). So the work starts on a fiber of its
 * own that runs synchronously, right away, with the caller's context and
 * fiber refs; if it is already done when it first yields, its exit is the
 * answer — about 2 µs. Only work that really waits (a socket, a timer) pays
 * for the race: the caller then waits for that fiber under
 * `Effect.timeoutFail` (on the fiber's `Clock`, so `TestClock` drives it),
 * and interrupts it on a timeout or when the caller itself is interrupted.
 *
 * Fiber-ref changes made by the work (log annotations, for instance) stay
 * in its fiber, as they would in any forked fiber.
 */
import { type Duration, Effect, Fiber, Runtime } from "effect"

/**
 * Runs `self` for at most `timeout`; an overrun interrupts it (without
 * waiting for it to wind down) and fails with `onTimeout()`.
 */
export const withDeadline = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  timeout: Duration.Duration,
  onTimeout: () => E2
): Effect.Effect<A, E | E2, R> =>
  Effect.flatMap(Effect.runtime<R>(), (runtime) => {
    // `runFork` starts the fiber synchronously (it runs until it first yields).
    const child = Runtime.runFork(runtime, self)
    const done = child.unsafePoll()
    if (done !== null) return done
    return Fiber.join(child).pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout }),
      Effect.onExit(() => Fiber.interruptFork(child))
    )
  })
