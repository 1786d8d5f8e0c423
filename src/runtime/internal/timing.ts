/**
 * Time for hook runs: the clock a fiber runs with, and a cheap monotonic
 * reading for durations.
 */
import { Clock, Context, Effect } from "effect"
import type { RuntimeFiber } from "effect/Fiber"

let liveClock: Clock.Clock | undefined

/**
 * A monotonic time in milliseconds for durations: `performance.now()` on
 * Effect's live clock (no BigInt per reading), else the installed clock's
 * nanoseconds (a `TestClock` keeps durations deterministic).
 */
export const elapsedMillis = (clock: Clock.Clock): number =>
  clock === (liveClock ??= Effect.runSync(Effect.clock))
    ? performance.now()
    : Number(clock.unsafeCurrentTimeNanos()) / 1e6

/** The clock a fiber runs with. */
export const clockOf = (fiber: RuntimeFiber<unknown, unknown>): Clock.Clock =>
  Context.get(fiber.currentDefaultServices, Clock.Clock)

