/**
 * Watching a record (issue 21) under `TestClock`: the store is read once at
 * once and then every poll interval, a snapshot is emitted only when its
 * revision or lifecycle changed, the watch ends after a snapshot that is no
 * longer running, when the record disappears, or when draining completes;
 * an absent record is waited for, and a failing store read is retried at
 * the next poll.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Duration, Effect, Fiber, Option, Queue, Stream, TestClock, TestServices } from "effect"
import { type ExecutionRecord, ExecutionStore } from "effect-agent-pipeline"
import { watch } from "../../src/server/internal/recordWatch.js"

type Record = ExecutionRecord.ExecutionRecord

const record = (revision: number, status: "running" | "succeeded" = "running"): Record => ({
  schemaVersion: 1,
  requestId: "w",
  recordRevision: revision,
  mode: "pipeline",
  request: "q",
  metadata: {},
  lifecycle: { status, startedAt: 0 },
  phases: [],
  hookInvocations: [],
  diagnostics: []
})

/** A store whose `get` answers from a variable the test sets, counting reads; `failNext` fails reads. */
const fakeStore = Effect.gen(function*() {
  const base = yield* ExecutionStore.makeMemory()
  const state = { current: Option.none<Record>(), reads: 0, failNext: 0 }
  const store: ExecutionStore.ExecutionStore.Service = {
    ...base,
    get: () =>
      Effect.suspend(() => {
        state.reads++
        if (state.failNext > 0) {
          state.failNext--
          return Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "get", detail: "down" }))
        }
        return Effect.succeed(state.current)
      })
  }
  return { store, state }
})

/** Runs the watch into a queue, so the test sees what was emitted so far. */
const start = (stream: Stream.Stream<Record, unknown>) =>
  Effect.gen(function*() {
    const out = yield* Queue.unbounded<number | "end">()
    const fiber = yield* stream.pipe(
      Stream.runForEach((r) => Queue.offer(out, r.recordRevision)),
      Effect.zipRight(Queue.offer(out, "end")),
      Effect.fork
    )
    // What was emitted so far, once the watch had (real) time to run.
    const seen = Effect.zipRight(
      TestServices.provideLive(Effect.sleep(Duration.millis(5))),
      Effect.map(Queue.takeAll(out), Chunk.toReadonlyArray)
    )
    return { fiber, seen }
  })

const interval = Duration.millis(250)

describe("record watch", () => {
  it.effect("emits at once, then on each change seen at a poll; ends after the record stops running", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      state.current = Option.some(record(1))
      const { fiber, seen } = yield* start(watch(store, "w", { pollInterval: interval }))
      expect(yield* seen).toEqual([1])
      expect(state.reads).toBe(1)
      // Unchanged: polled, not emitted.
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual([])
      expect(state.reads).toBe(2)
      // Changed between polls: emitted at the next poll, not before.
      state.current = Option.some(record(2))
      yield* TestClock.adjust(Duration.millis(249))
      expect(yield* seen).toEqual([])
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* seen).toEqual([2])
      // Two changes within one interval: only the newest is seen.
      state.current = Option.some(record(3))
      state.current = Option.some(record(4))
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual([4])
      state.current = Option.some(record(5, "succeeded"))
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual([5, "end"])
      yield* Fiber.join(fiber)
      const reads = state.reads
      yield* TestClock.adjust(Duration.seconds(10))
      expect(state.reads).toBe(reads)
    }))

  it.effect("a lifecycle change at the same revision is a change", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      state.current = Option.some(record(7))
      const { fiber, seen } = yield* start(watch(store, "w", { pollInterval: interval }))
      expect(yield* seen).toEqual([7])
      state.current = Option.some(record(7, "succeeded"))
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual([7, "end"])
      yield* Fiber.join(fiber)
    }))

  it.effect("waits for a record that does not exist yet", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      const { fiber, seen } = yield* start(watch(store, "w", { pollInterval: interval }))
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* seen).toEqual([])
      expect(state.reads).toBe(5)
      state.current = Option.some(record(0))
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual([0])
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("ends when a record it saw disappears", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      state.current = Option.some(record(1))
      const { fiber, seen } = yield* start(watch(store, "w", { pollInterval: interval }))
      expect(yield* seen).toEqual([1])
      state.current = Option.none()
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual(["end"])
      yield* Fiber.join(fiber)
    }))

  it.effect("ends when draining completes, between polls", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      state.current = Option.some(record(1))
      const draining = yield* Deferred.make<void>()
      const { fiber, seen } = yield* start(
        watch(store, "w", { pollInterval: interval, draining: Deferred.await(draining) })
      )
      yield* TestClock.adjust(Duration.millis(100))
      expect(yield* seen).toEqual([1])
      yield* Deferred.succeed(draining, undefined)
      yield* Fiber.join(fiber)
      expect(yield* seen).toEqual(["end"])
    }))

  it.effect("a failing store read is retried at the next poll", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      state.current = Option.some(record(1))
      state.failNext = 2
      const { fiber, seen } = yield* start(watch(store, "w", { pollInterval: interval }))
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual([])
      yield* TestClock.adjust(interval)
      expect(yield* seen).toEqual([1])
      expect(state.reads).toBe(3)
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("an initial snapshot is emitted without a read; the next read is a poll later", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      state.current = Option.some(record(2))
      const { fiber, seen } = yield* start(watch(store, "w", { pollInterval: interval, initial: record(2) }))
      expect(yield* seen).toEqual([2])
      expect(state.reads).toBe(0)
      yield* TestClock.adjust(interval)
      expect(state.reads).toBe(1)
      expect(yield* seen).toEqual([])
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("a finished record: one snapshot and the end", () =>
    Effect.gen(function*() {
      const { state, store } = yield* fakeStore
      state.current = Option.some(record(9, "succeeded"))
      const all = yield* Stream.runCollect(watch(store, "w", { pollInterval: interval }))
      expect(Chunk.toReadonlyArray(all).map((r) => r.recordRevision)).toEqual([9])
      expect(state.reads).toBe(1)
    }))
})
