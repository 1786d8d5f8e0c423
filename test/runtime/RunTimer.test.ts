/**
 * The timings of back-to-back `Hook.sync` runs (the synchronous fast
 * path): one monotonic reading per run, start times derived from one
 * wall-clock reading.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { RunTimer } from "../../src/runtime/internal/timing.js"

/**
 * A clock whose monotonic reading advances by `stepMillis` on every read,
 * and whose wall clock is the true time truncated to whole milliseconds
 * (as `Date.now()` is), starting `offset` into a millisecond.
 */
const steppingClock = (start: number, offset: number, stepMillis: number) => {
  let elapsed = 0
  let reads = 0
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => Math.floor(start + offset + elapsed),
    currentTimeMillis: Effect.sync(() => Math.floor(start + offset + elapsed)),
    unsafeCurrentTimeNanos: () => {
      reads++
      elapsed += stepMillis
      return BigInt(Math.round(elapsed * 1e6))
    },
    currentTimeNanos: Effect.sync(() => BigInt(Math.round(elapsed * 1e6))),
    sleep: () => Effect.void
  }
  return { clock, reads: () => reads, wallNow: () => clock.unsafeCurrentTimeMillis() }
}

describe("RunTimer", () => {
  it("one monotonic reading per run: a run starts where the one before it ended", () => {
    const { clock, reads } = steppingClock(1_000, 0, 0.25)
    const timer = new RunTimer(clock)
    const durations = [timer.lap(), timer.lap(), timer.lap()]
    expect(durations).toEqual([0.25, 0.25, 0.25])
    // The construction's reading and one per run.
    expect(reads()).toBe(4)
  })

  it("derived start times are whole milliseconds that keep their order with the clock's own readings", () => {
    // The wall clock read at construction says 1000, but the true time is 1000.9.
    const { clock, wallNow } = steppingClock(1_000, 0.9, 0.3)
    const before = wallNow()
    const timer = new RunTimer(clock)
    const starts: Array<number> = []
    const readings: Array<number> = []
    for (let i = 0; i < 6; i++) {
      starts.push(timer.startedAt())
      timer.lap()
      readings.push(wallNow())
    }
    expect(starts.every(Number.isInteger)).toBe(true)
    // Never earlier than a reading taken before the timer was made…
    expect(starts.every((s) => s >= before)).toBe(true)
    // …in order…
    expect(starts).toEqual([...starts].sort((a, b) => a - b))
    // …and never later than the clock's reading when the run ended.
    expect(starts.every((s, i) => s <= readings[i]!)).toBe(true)
    expect(starts[0]).toBe(1_000)
    expect(starts[5]).toBeGreaterThan(1_000)
  })
})
