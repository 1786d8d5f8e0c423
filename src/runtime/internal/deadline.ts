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
 * answer — about 2 µs, and no scheduler hop. Work that really waits (a
 * socket: every real model call) is awaited on that fiber, with one timer
 * beside it: on the live `Clock` a plain timer that interrupts the fiber and
 * fails the caller when it fires — no fiber more (`Effect.timeoutFail` forks
 * two fibers to race the work against a sleep, and interrupting the work
 * afterwards one more: 7–13 µs and 5 KB a call). On any other `Clock`
 * (`TestClock` in tests) the work is raced under `Effect.timeoutFail` on
 * that clock. Either way the work is interrupted on a timeout or when the
 * caller itself is interrupted.
 *
 * Fiber-ref changes made by the work (log annotations, for instance) stay
 * in its fiber, as they would in any forked fiber.
 */
import { Context, type Duration, Effect, type Exit, Fiber, Runtime, RuntimeFlags } from "effect"
import type { RuntimeFiber } from "effect/Fiber"
import { keepLatest } from "../../domain/internal/liveShapes.js"
import { timerMillis } from "./liveTimer.js"

/**
 * A watch on the work: called on the caller's fiber just before the work
 * starts (to read its clock), it returns what runs once the work ended,
 * however it ended — which returns what is left to do (`Effect.void` when
 * nothing: the work's exit is then answered as is, with no further step).
 */
export type Watch<A, E> = (caller: RuntimeFiber<unknown, unknown>) => (exit: Exit.Exit<A, E>) => Effect.Effect<void>

/**
 * Runs `self` for at most `timeout`; an overrun interrupts it (without
 * waiting for it to wind down) and fails with `onTimeout()`. `watch`, when
 * given, sees it start and end.
 */
export const withDeadline = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  timeout: Duration.Duration,
  onTimeout: () => E2,
  watch?: Watch<A, E | E2>
): Effect.Effect<A, E | E2, R> => bounded(self, timeout, onTimeout, watch, undefined)

/**
 * {@link withDeadline}, the work's fiber starting with `services` added to
 * the caller's context (cheaper than providing them inside the work).
 */
export const withDeadlineProviding = <A, E, R, E2>(
  services: Context.Context<R>,
  self: Effect.Effect<A, E, R>,
  timeout: Duration.Duration,
  onTimeout: () => E2,
  watch?: Watch<A, E | E2>
): Effect.Effect<A, E | E2> => bounded(self, timeout, onTimeout, watch, services)

const bounded = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  timeout: Duration.Duration,
  onTimeout: () => E2,
  watch: Watch<A, E | E2> | undefined,
  services: Context.Context<R> | undefined
): Effect.Effect<A, E | E2, never> =>
  Effect.withFiberRuntime<A, E | E2>((caller, status) => {
    keepLatest("fiberStatus", status)
    // The caller's context holds what `self` requires (it is the fiber
    // `self` would otherwise run on), with `services` when given; Effect
    // types a fiber's context as `Context<never>`. Interruptible whatever
    // region the caller is in: the deadline must be able to stop it.
    const runtime = Runtime.make({
      context: services === undefined ? caller.currentContext : Context.merge(caller.currentContext, services),
      fiberRefs: caller.getFiberRefs(),
      runtimeFlags: RuntimeFlags.enable(status.runtimeFlags, RuntimeFlags.Interruption)
    }) as Runtime.Runtime<R>
    const onEnd = watch?.(caller)
    // `runFork` starts the fiber synchronously (it runs until it first yields).
    const child = Runtime.runFork(runtime, self)
    const done = child.unsafePoll()
    if (done !== null) {
      if (onEnd === undefined) return done
      const after = onEnd(done)
      return after === Effect.void ? done : Effect.zipRight(after, done)
    }
    const millis = timerMillis(caller, timeout)
    const raced = millis !== undefined
      ? awaitTimed(child, millis, onTimeout, caller)
      : Fiber.join(child).pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout }),
        Effect.onExit(() => Fiber.interruptFork(child))
      )
    return onEnd === undefined ? raced : Effect.onExit(raced, onEnd)
  })

/**
 * Waits for `child` at most `millis` of wall-clock time: its exit, or — once
 * the timer fires — `onTimeout()`, the child interrupted (not waited for).
 * Interrupting the caller clears the timer and interrupts the child.
 */
const awaitTimed = <A, E, E2>(
  child: RuntimeFiber<A, E>,
  millis: number,
  onTimeout: () => E2,
  caller: RuntimeFiber<unknown, unknown>
): Effect.Effect<A, E | E2> =>
  Effect.async<A, E | E2>((resume) => {
    const ended = (exit: Exit.Exit<A, E>) => {
      clearTimeout(timer)
      resume(exit)
    }
    const timer = setTimeout(() => {
      child.removeObserver(ended)
      child.unsafeInterruptAsFork(caller.id())
      resume(Effect.fail(onTimeout()))
    }, millis)
    child.addObserver(ended)
    return Effect.sync(() => {
      clearTimeout(timer)
      child.removeObserver(ended)
      child.unsafeInterruptAsFork(caller.id())
    })
  })
