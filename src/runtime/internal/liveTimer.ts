/**
 * Deadlines as plain timers. On the live `Clock` a deadline needs no fiber:
 * a Node timer that fires once is the whole of it (Effect's own sleep is
 * one, run on a fiber of its own — about 3–8 µs and a few KB per wait here).
 * On any other `Clock` (`TestClock` in tests) there is no timer to set: the
 * callers race a sleep on that clock instead, so tests drive deadlines.
 */
import { Clock, Context, DefaultServices, Duration } from "effect"
import type { RuntimeFiber } from "effect/Fiber"
import { clockOf } from "./timing.js"

/** The live clock's instance: a fiber that has it runs on wall-clock time. */
const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

/** The longest delay a Node timer takes (longer fires at once). */
const maxTimerMillis = 2_147_483_647

/**
 * `duration` in milliseconds when `fiber` runs on the live clock and a
 * timer can hold it; `undefined` when the deadline must be slept on the
 * fiber's clock.
 */
export const timerMillis = (fiber: RuntimeFiber<unknown, unknown>, duration: Duration.Duration): number | undefined => {
  if (clockOf(fiber) !== liveClock) return undefined
  const millis = Duration.toMillis(duration)
  return millis <= maxTimerMillis ? millis : undefined
}
