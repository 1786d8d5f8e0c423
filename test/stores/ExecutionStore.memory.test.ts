import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema, TestClock } from "effect"
import { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"
import { ExecutionStore, layerMemory, type RecordPage } from "../../src/stores/ExecutionStore.js"
import { executionStoreConformance } from "./ExecutionStoreConformance.js"

executionStoreConformance("memory", layerMemory)

const record = (requestId: string, status: "running" | "succeeded" | "failed") =>
  Schema.decodeUnknownSync(ExecutionRecord)({
    requestId,
    request: "q",
    record_revision: 1,
    lifecycle: { status, startedAt: 0 }
  })

describe("the memory store is bounded", () => {
  it.effect("past maxRecords, the oldest finished records are evicted first; running ones are kept", () =>
    Effect.gen(function*() {
      const store = yield* ExecutionStore
      yield* store.save(record("run-1", "running"))
      yield* store.save(record("old-1", "succeeded"))
      yield* store.save(record("old-2", "failed"))
      yield* store.save(record("new-1", "succeeded"))
      // Four records, at most three: the oldest finished one goes.
      const ids = (yield* store.list()).records.map((r) => r.requestId)
      expect(ids).toEqual(["new-1", "old-2", "run-1"])
      yield* store.save(record("new-2", "succeeded"))
      expect((yield* store.list()).records.map((r) => r.requestId)).toEqual(["new-2", "new-1", "run-1"])
      // An update of a kept record evicts nothing.
      yield* store.save({ ...record("new-1", "succeeded"), recordRevision: 2 })
      expect((yield* store.list()).records.length).toBe(3)
      expect(Option.isSome(yield* store.get("run-1"))).toBe(true)
    }).pipe(Effect.provide(layerMemory({ maxRecords: 3 }))))

  it.effect("20,000 requests' records stay bounded by maxRecords (the default keeps 10,000)", () =>
    Effect.gen(function*() {
      const store = yield* ExecutionStore
      for (let i = 0; i < 20_000; i++) yield* store.save(record(`r${i}`, "succeeded"))
      const first = yield* store.list({ limit: 1000 })
      expect(first.records[0]?.requestId).toBe("r19999")
      let count = 0
      let cursor: string | undefined
      do {
        const page: RecordPage = yield* store.list({ limit: 1000, cursor })
        count += page.records.length
        cursor = page.next
      } while (cursor !== undefined)
      expect(count).toBe(10_000)
      expect(Option.isNone(yield* store.get("r9999"))).toBe(true)
      expect(Option.isSome(yield* store.get("r10000"))).toBe(true)
      // Time alone does not grow it, and the next write after the sweep period cleans up.
      yield* TestClock.adjust("25 hours")
      yield* store.save(record("late", "succeeded"))
      expect((yield* store.list()).records.map((r) => r.requestId)).toEqual(["late"])
    }).pipe(Effect.provide(layerMemory())))
})
