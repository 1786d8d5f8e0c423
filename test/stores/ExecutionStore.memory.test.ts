import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema, TestClock } from "effect"
import { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"
import { bodyBytes, bodyText } from "../../src/domain/internal/recordBody.js"
import { encodeDirect } from "../../src/domain/internal/recordEncode.js"
import { defaultMaxBytes, ExecutionStore, layerMemory, type RecordPage } from "../../src/stores/ExecutionStore.js"
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

describe("the memory store keeps compact bodies (issue 20)", () => {
  const draftRecord = (requestId: string, draft: string): ExecutionRecord =>
    Schema.decodeUnknownSync(ExecutionRecord)({
      schemaVersion: 1,
      requestId,
      request: "q",
      record_revision: 1,
      lifecycle: { status: "succeeded", startedAt: 0 },
      finalResponse: draft
    })

  it.effect("a record is kept as its stored body and decoded on read: equal to what was saved, a new object each read", () =>
    Effect.gen(function*() {
      const store = yield* ExecutionStore
      const saved = { ...record("r", "succeeded"), writer: { id: "w", seq: 2 } }
      yield* store.save(saved)
      const first = Option.getOrThrow(yield* store.get("r"))
      const second = Option.getOrThrow(yield* store.get("r"))
      expect(first).toStrictEqual(saved)
      expect(first).not.toBe(saved)
      expect(second).not.toBe(first)
      expect((yield* store.list()).records).toStrictEqual([saved])
    }).pipe(Effect.provide(layerMemory())))

  it.effect("the default byte cap is 64 MiB of stored bodies (each record's format 2 text in UTF-8 bytes), newest kept", () =>
    Effect.gen(function*() {
      expect(defaultMaxBytes).toBe(64 * 1024 * 1024)
      const store = yield* ExecutionStore
      // One flat string shared by every record: the test holds 1 MB, the store 1 MB per record.
      const megabyte = "x".repeat(1_000_000)
      for (let i = 0; i < 100; i++) yield* store.save(draftRecord(`big-${i}`, megabyte))
      const each = bodyBytes(draftRecord("big-99", megabyte))
      expect(each).toBe(Buffer.byteLength(bodyText(draftRecord("big-99", megabyte)), "utf8"))
      const kept = (yield* store.list({ limit: 1000 })).records
      expect(kept.length).toBe(Math.floor(defaultMaxBytes / each))
      expect(kept.map((r) => r.requestId)).toEqual(Array.from({ length: kept.length }, (_, i) => `big-${99 - i}`))
    }).pipe(Effect.provide(layerMemory())))

  it.effect("the byte cap counts the compact body, not the record's plain JSON", () =>
    Effect.gen(function*() {
      const store = yield* ExecutionStore
      const compact = bodyBytes(record("a", "succeeded"))
      // Room for two compact bodies, not for two plain-JSON ones.
      expect(Buffer.byteLength(JSON.stringify(encodeDirect(record("a", "succeeded"))))).toBeGreaterThan(compact)
      yield* store.save(record("a", "succeeded"))
      yield* store.save(record("b", "succeeded"))
      expect((yield* store.list()).records.map((r) => r.requestId)).toEqual(["b", "a"])
    }).pipe(Effect.provide(layerMemory({ maxBytes: 2 * bodyBytes(record("a", "succeeded")) }))))
})
