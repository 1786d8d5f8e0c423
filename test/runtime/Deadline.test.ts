/**
 * The runtime's cheap timeout (issue 9, issue 7): work that finishes without
 * waiting is never raced; work that waits is interrupted at the deadline,
 * and when its caller is interrupted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Option, TestClock } from "effect"
import { withDeadline } from "../../src/runtime/internal/deadline.js"

const late = () => "late" as const

describe("withDeadline", () => {
  it.effect("work that does not wait answers its own exit (success or failure), whatever the deadline", () =>
    Effect.gen(function*() {
      expect(yield* withDeadline(Effect.succeed(1), Duration.zero, late)).toBe(1)
      expect(yield* Effect.flip(withDeadline(Effect.fail("boom"), Duration.zero, late))).toBe("boom")
    }))

  it.effect("work that waits past the deadline is interrupted (its finalizer runs) and fails with onTimeout", () =>
    Effect.gen(function*() {
      const finalized = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        withDeadline(
          Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(finalized, undefined))),
          Duration.seconds(5),
          late
        )
      )
      yield* TestClock.adjust("4 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.await(fiber)).toEqual(Exit.fail("late"))
      yield* Deferred.await(finalized)
    }))

  it.effect("work that waits and finishes in time answers its value; the work sees the caller's services", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        withDeadline(Effect.as(Effect.sleep("2 seconds"), "done"), Duration.seconds(5), late)
      )
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(fiber)).toBe("done")
    }))

  it.effect("interrupting the caller interrupts the work", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const finalized = yield* Deferred.make<void>()
      const work = Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Effect.never),
        Effect.onInterrupt(() => Deferred.succeed(finalized, undefined))
      )
      const fiber = yield* Effect.fork(withDeadline(work, Duration.minutes(1), late))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(finalized)
    }))

  describe("on the live clock (one timer, no racing fibers)", () => {
    it.live("work that waits past the deadline is interrupted (its finalizer runs) and fails with onTimeout", () =>
      Effect.gen(function*() {
        const finalized = yield* Deferred.make<void>()
        const work = Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(finalized, undefined)))
        const started = Date.now()
        expect(yield* Effect.exit(withDeadline(work, Duration.millis(30), late))).toEqual(Exit.fail("late"))
        expect(Date.now() - started).toBeGreaterThanOrEqual(25)
        yield* Deferred.await(finalized)
      }))

    it.live("work that waits and finishes in time answers its exit (success or failure)", () =>
      Effect.gen(function*() {
        expect(yield* withDeadline(Effect.as(Effect.sleep("5 millis"), "done"), Duration.seconds(5), late)).toBe(
          "done"
        )
        const failed = Effect.zipRight(Effect.sleep("5 millis"), Effect.fail("boom"))
        expect(yield* Effect.exit(withDeadline(failed, Duration.seconds(5), late))).toEqual(Exit.fail("boom"))
      }))

    it.live("interrupting the caller interrupts the work, and its timer never fires", () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const finalized = yield* Deferred.make<void>()
        let timedOut = 0
        const work = Deferred.succeed(started, undefined).pipe(
          Effect.zipRight(Effect.never),
          Effect.onInterrupt(() => Deferred.succeed(finalized, undefined))
        )
        const fiber = yield* Effect.fork(withDeadline(work, Duration.millis(40), () => timedOut++))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        yield* Deferred.await(finalized)
        yield* Effect.sleep("80 millis")
        expect(timedOut).toBe(0)
      }))

    it.live("a deadline past what a timer holds falls back to the race (and still answers)", () =>
      Effect.gen(function*() {
        const work = Effect.as(Effect.sleep("5 millis"), "done")
        expect(yield* withDeadline(work, Duration.days(30), late)).toBe("done")
      }))
  })
})
