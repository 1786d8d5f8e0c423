/**
 * Every hook run is bounded (issue 17, DESIGN §7): a handler's effect runs on
 * a fiber of its own and the caller waits for it at most the run's timeout.
 * An overrun interrupts that fiber; work that ignores interruption is given
 * the grace period, then abandoned — it never holds up the request or
 * shutdown.
 *
 * Why a fiber of its own: a wait must be able to end whatever the handler
 * does. On the caller's own fiber an `Effect.timeout` waits for the
 * interrupted effect to wind down, which never happens for an effect that
 * is uninterruptible (or that runs in a finalizer, as an Around observer's
 * `finish` does); a root fiber can be left behind.
 *
 * The child starts synchronously with the caller's context, fiber refs and
 * runtime flags (interruption enabled): a handler that does not suspend ends
 * before the caller even waits, with no scheduler hop — the common case costs
 * a fiber, not a race. Only a handler that really waits (I/O, a timer) is
 * waited for against its deadline: on the live clock a plain timer
 * (liveTimer.ts), on any other `Clock` a sleep on it (`TestClock` drives
 * it). Fiber-ref changes a handler makes stay in its own fiber.
 *
 * A guard's deadline is its own time: it pauses while the operation runs
 * inside it (`proceed`), see {@link Pause}.
 */
import { type Clock, type Context, Duration, Effect, type Exit, FiberRefs, Option, Runtime, RuntimeFlags } from "effect"
import type { RuntimeFiber } from "effect/Fiber"
import type * as FiberStatus from "effect/FiberStatus"
import { currentInvocation, type InvocationSlot, sharedSlot, slotFor } from "../HookEffects.js"
import { timerMillis } from "./liveTimer.js"

/**
 * How long one hook run may take, and how long it gets to stop once
 * interrupted before it is abandoned.
 */
export interface RunLimit {
  readonly timeout: Duration.Duration
  readonly grace: Duration.Duration
}

/** The bounds every run gets unless the pipeline or the hook sets others. */
export const defaultLimit: RunLimit = { timeout: Duration.seconds(30), grace: Duration.seconds(1) }

/** How a bounded run ended. */
export type Ending<A, E> =
  | { readonly _tag: "Done"; readonly exit: Exit.Exit<A, E> }
  /** The deadline passed; `abandoned` when the run did not stop within the grace period once interrupted. */
  | { readonly _tag: "TimedOut"; readonly abandoned: boolean }

/**
 * A guard's clock: its deadline counts only the time the guard itself
 * spends, not the time the operation it wraps runs (`proceed`). The guard
 * marks the operation's start and end; the watch sleeps for what is left
 * of the guard's own time and, finding the operation running when it
 * wakes, waits for it to end first.
 */
export class Pause {
  /** Operation runs in flight inside the guard. */
  private depth = 0
  /** The guard's own time before the current stretch, in ms. */
  private spent = 0
  /** Where the current stretch of own time began (meaningful while depth is 0). */
  private since: number
  private resumed: Array<() => void> = []

  constructor(private readonly clock: Clock.Clock) {
    this.since = clock.unsafeCurrentTimeMillis()
  }

  /** The operation starts running inside the guard. */
  enter(): void {
    if (this.depth++ === 0) this.spent += this.clock.unsafeCurrentTimeMillis() - this.since
  }

  /** The operation ended. */
  exit(): void {
    if (--this.depth > 0) return
    this.since = this.clock.unsafeCurrentTimeMillis()
    const waiting = this.resumed
    this.resumed = []
    for (const resume of waiting) resume()
  }

  /** Sleeps until the guard has spent `timeout` of its own time. */
  watch(timeout: Duration.Duration): Effect.Effect<void> {
    const budget = Duration.toMillis(timeout)
    const loop: Effect.Effect<void> = Effect.suspend(() => {
      if (this.depth > 0) {
        return Effect.zipRight(
          Effect.async<void>((resume) => {
            // Woken when the operation ends (or at once if it already did).
            if (this.depth === 0) return resume(Effect.void)
            this.resumed.push(() => resume(Effect.void))
          }),
          loop
        )
      }
      const left = budget - (this.spent + this.clock.unsafeCurrentTimeMillis() - this.since)
      return left <= 0 ? Effect.void : Effect.zipRight(Effect.sleep(Duration.millis(left)), loop)
    })
    return loop
  }
}

/**
 * Starts `effect` on a root fiber of its own, synchronously, with the
 * caller's context, fiber refs and runtime flags (interruptible). Its
 * effect-reporting slot points at `report` (the run it reports into).
 */
const startChild = <A, E>(
  caller: RuntimeFiber<unknown, unknown>,
  status: FiberStatus.Running,
  effect: Effect.Effect<A, E>,
  report: InvocationSlot["current"] | null
): RuntimeFiber<A, E> => {
  const runtimeFlags = RuntimeFlags.enable(status.runtimeFlags, RuntimeFlags.Interruption)
  // The caller's context holds everything the handler needs (its
  // requirements were provided at registration); Effect types a fiber's
  // context as `Context<never>`.
  const context = caller.currentContext as Context.Context<never>
  const fork = (fiberRefs: FiberRefs.FiberRefs) =>
    Runtime.runFork(Runtime.make({ context, fiberRefs, runtimeFlags }), effect)
  if (report === null) return fork(caller.getFiberRefs())
  const slot = caller.getFiberRef(currentInvocation)
  if (slot.current === report) return fork(caller.getFiberRefs())
  if (slot === sharedSlot) {
    // A fiber without a slot of its own (outside a request): the child gets one.
    return fork(
      FiberRefs.updateAs(caller.getFiberRefs(), {
        fiberId: caller.id(),
        fiberRef: currentInvocation,
        value: slotFor(report)
      })
    )
  }
  // A fork copies the slot as it is: point it at the run for the fork only.
  const previous = slot.current
  slot.current = report
  try {
    return fork(caller.getFiberRefs())
  } finally {
    slot.current = previous
  }
}

/**
 * Waits for `child` until `deadline` ends; `None` when the deadline came
 * first. No fiber of the caller's is involved: an interruption the caller
 * receives while it cannot be interrupted (in a finalizer) reaches its
 * child fibers — a wait made of child fibers would end early there. The
 * deadline runs on a root fiber (with the caller's `Clock`); the child is
 * watched through an observer.
 */
const waitFor = <A, E>(
  child: RuntimeFiber<A, E>,
  deadline: Effect.Effect<void>
): Effect.Effect<Option.Option<Exit.Exit<A, E>>> =>
  Effect.withFiberRuntime((caller, status) =>
    Effect.async<Option.Option<Exit.Exit<A, E>>>((resume) => {
      let done = false
      const timer = Runtime.runFork(
        Runtime.make({
          context: caller.currentContext as Context.Context<never>,
          fiberRefs: caller.getFiberRefs(),
          runtimeFlags: RuntimeFlags.enable(status.runtimeFlags, RuntimeFlags.Interruption)
        }),
        deadline
      )
      const onChild = (exit: Exit.Exit<A, E>) => {
        if (done) return
        done = true
        timer.unsafeInterruptAsFork(caller.id())
        resume(Effect.succeed(Option.some(exit)))
      }
      const onTimer = () => {
        if (done) return
        done = true
        child.removeObserver(onChild)
        resume(Effect.succeed(Option.none()))
      }
      timer.addObserver(onTimer)
      child.addObserver(onChild)
      // The caller was interrupted while it waited: stop watching.
      return Effect.sync(() => {
        done = true
        child.removeObserver(onChild)
        timer.unsafeInterruptAsFork(caller.id())
      })
    })
  )

/**
 * Interrupts `child` and gives it `grace` to stop; true when it did not (it
 * is abandoned: left to itself, never waited for again).
 */
export const stop = (
  child: RuntimeFiber<unknown, unknown>,
  grace: Duration.Duration
): Effect.Effect<boolean> =>
  Effect.withFiberRuntime((caller) => {
    child.unsafeInterruptAsFork(caller.id())
    return Effect.map(waitAtMost(caller, child, grace), Option.isNone)
  })

/**
 * {@link waitFor} for at most `duration` of the caller's clock: with a
 * plain timer on the live clock (no fiber), else a sleep on that clock.
 */
const waitAtMost = <A, E>(
  caller: RuntimeFiber<unknown, unknown>,
  child: RuntimeFiber<A, E>,
  duration: Duration.Duration
): Effect.Effect<Option.Option<Exit.Exit<A, E>>> => {
  const millis = timerMillis(caller, duration)
  return millis === undefined ? waitFor(child, Effect.sleep(duration)) : waitForTimer(child, millis)
}

/** {@link waitFor} with a Node timer of `millis` as the deadline. */
const waitForTimer = <A, E>(child: RuntimeFiber<A, E>, millis: number): Effect.Effect<Option.Option<Exit.Exit<A, E>>> =>
  Effect.async<Option.Option<Exit.Exit<A, E>>>((resume) => {
    let done = false
    const onChild = (exit: Exit.Exit<A, E>) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resume(Effect.succeed(Option.some(exit)))
    }
    const timer = setTimeout(() => {
      if (done) return
      done = true
      child.removeObserver(onChild)
      resume(Effect.succeed(Option.none()))
    }, millis)
    child.addObserver(onChild)
    // The caller was interrupted while it waited: stop watching.
    return Effect.sync(() => {
      done = true
      clearTimeout(timer)
      child.removeObserver(onChild)
    })
  })

/**
 * Runs `effect` bounded by `limit`: its exit, or `TimedOut` once the
 * deadline passed (the run interrupted, and abandoned if it ignored that
 * for the grace period). If the caller is interrupted while it waits, the
 * run is interrupted and given the grace period too, then the interruption
 * goes on; `onAbandoned` is told when the run did not stop in time.
 *
 * `report` is where the run's effect reports go (`null`: leave the slot as
 * the caller has it). `pause`, for a guard, stops the clock while the
 * operation runs inside it.
 */
export const runBounded = <A, E>(
  effect: Effect.Effect<A, E>,
  limit: RunLimit,
  report: InvocationSlot["current"] | null,
  onAbandoned: () => void,
  pause?: Pause | undefined
): Effect.Effect<Ending<A, E>> =>
  Effect.withFiberRuntime((caller, status) => {
    const child = startChild(caller, status, effect, report)
    const done = child.unsafePoll()
    if (done !== null) return Effect.succeed<Ending<A, E>>({ _tag: "Done", exit: done })
    const waited = pause === undefined
      ? waitAtMost(caller, child, limit.timeout)
      : waitFor(child, pause.watch(limit.timeout))
    return Effect.onInterrupt(
      Effect.flatMap(waited, (ended): Effect.Effect<Ending<A, E>> =>
        Option.isSome(ended)
          ? Effect.succeed({ _tag: "Done", exit: ended.value })
          : Effect.map(stop(child, limit.grace), (abandoned) => ({ _tag: "TimedOut", abandoned }))),
      () =>
        Effect.flatMap(stop(child, limit.grace), (abandoned) => {
          if (abandoned) onAbandoned()
          return Effect.void
        })
    )
  })
