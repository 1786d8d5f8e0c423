/**
 * Time for hook runs: the clock a fiber runs with, and a cheap monotonic
 * reading for durations.
 */
import { Clock, Context, Effect } from "effect"
import type { RuntimeFiber } from "effect/Fiber"
import { keepLatest } from "../../domain/internal/liveShapes.js"

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

/**
 * The milliseconds from one monotonic reading to another, to the
 * nanosecond (the clock's resolution): the digits below it are the
 * floating-point noise of the subtraction, which every recorded duration
 * would otherwise carry (and a stored record write out: about 20
 * characters per duration instead of 3 to 6).
 */
export const millisBetween = (start: number, end: number): number => Math.round((end - start) * 1e6) / 1e6

/** The clock a fiber runs with. */
export const clockOf = (fiber: RuntimeFiber<unknown, unknown>): Clock.Clock =>
  Context.get(fiber.currentDefaultServices, Clock.Clock)

/**
 * Timings of back-to-back synchronous hook runs (the `Hook.sync` fast
 * path) from one monotonic reading per run: a run starts where the one
 * before it ended (so its duration includes the few hundred nanoseconds of
 * bookkeeping between the two), and start times are derived from one
 * wall-clock reading. A clock read costs 60–80 ns and `performance.now()`
 * allocates on Node 20; three per run were a third of a recorded run's cost.
 *
 * Derived start times are whole milliseconds, like the clock's own: never
 * later than a reading of the clock at that moment, never earlier than any
 * reading taken before the timer was made, so they keep their order among
 * the record's other start times.
 */
export class RunTimer {
  private readonly wallAt: number
  private readonly monoAt: number
  /** The monotonic time the current run started at. */
  mark: number

  constructor(private readonly clock: Clock.Clock) {
    this.wallAt = clock.unsafeCurrentTimeMillis()
    this.monoAt = this.mark = elapsedMillis(clock)
    keepLatest("runTimer", this)
  }

  /** When the current run started, in epoch milliseconds. */
  startedAt(): number {
    return Math.floor(this.wallAt + (this.mark - this.monoAt))
  }

  /** Ends the current run: returns its duration; the next run starts now. */
  lap(): number {
    const now = elapsedMillis(this.clock)
    const duration = millisBetween(this.mark, now)
    this.mark = now
    return duration
  }
}
