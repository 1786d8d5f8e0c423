/**
 * Issue class 5, unbounded sizes — the memory execution store. It was capped
 * by record count only (200 requests with 5 MB drafts reached 1.2 GB RSS), and
 * took `maxRecords: 0`. Now:
 *
 * - it is capped by bytes as well as by count (`maxBytes`, default 64 MiB,
 *   measured as each record's stored body when it is written): past either
 *   cap the oldest finished records are evicted first, running ones never,
 *   and no more are evicted than it takes to get back under both caps;
 * - options out of range (`maxRecords < 1`, `maxBytes < 1`, fractions,
 *   non-finite or absurd values, bad durations, unknown options) fail the
 *   store's construction with a typed `ExecutionStoreError` naming the
 *   option.
 *
 * Sizes are checked against the stored body's text (`encodeBody`), counted
 * here, independently of the store's own measurement.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, FastCheck, Layer, Option } from "effect"
import type { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"
import { encodeBody } from "../../src/domain/internal/recordEncode.js"
import {
  defaultMaxBytes,
  ExecutionStore,
  type ExecutionStoreError,
  layerMemory,
  makeMemory,
  type MemoryOptions
} from "../../src/stores/ExecutionStore.js"

type Status = "running" | "succeeded" | "failed"

const record = (requestId: string, revision: number, status: Status, draft: string): ExecutionRecord => ({
  schemaVersion: 1,
  requestId,
  recordRevision: revision,
  mode: "pipeline",
  request: "q",
  metadata: {},
  lifecycle: { status, startedAt: 0 },
  phases: [],
  hookInvocations: [],
  diagnostics: [],
  finalResponse: draft
})

/** A record's size as the store counts it: its stored body's text, in UTF-8 bytes. */
const jsonBytes = (r: ExecutionRecord): number => Buffer.byteLength(encodeBody(r), "utf8")

/** Every stored record, newest first. */
const everything = (store: ExecutionStore.Service): ReadonlyArray<ExecutionRecord> =>
  Effect.runSync(Effect.orDie(store.list({ limit: 1000 }))).records

const finished = (r: ExecutionRecord) => r.lifecycle?.status !== "running"

type Op =
  | { readonly kind: "save"; readonly id: number; readonly status: Status; readonly draft: string }
  | { readonly kind: "grow"; readonly id: number; readonly extra: string }

// Letters, accents and emoji: multi-byte UTF-8, nothing JSON escapes.
const draft = (max: number) =>
  FastCheck.array(FastCheck.constantFrom("a", "b", "é", "ß", "😀", "漢"), { maxLength: max }).map((cs) => cs.join(""))

const op: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  FastCheck.record({
    kind: FastCheck.constant("save" as const),
    id: FastCheck.integer({ min: 0, max: 9 }),
    status: FastCheck.constantFrom<Status>("running", "succeeded", "failed", "succeeded"),
    draft: draft(600)
  }),
  FastCheck.record({
    kind: FastCheck.constant("grow" as const),
    id: FastCheck.integer({ min: 0, max: 9 }),
    extra: draft(400)
  })
)

const caps = FastCheck.record({
  maxRecords: FastCheck.integer({ min: 1, max: 6 }),
  // From smaller than one record to room for several.
  maxBytes: FastCheck.integer({ min: 150, max: 6_000 })
})

describe("memory store bounds: caps by bytes and by count", () => {
  it.prop(
    "memory store bounds: after every write the store is under both caps unless only running records are left; the oldest finished go first, running ones never, and no more than needed (property)",
    [caps, FastCheck.array(op, { minLength: 1, maxLength: 40 })],
    ([{ maxBytes, maxRecords }, ops]) => {
      const store = Effect.runSync(makeMemory({ maxRecords, maxBytes }))
      const revisions = new Map<number, number>()
      // Ids in the store's creation order (an evicted id written again goes last).
      let order: Array<string> = []
      // Ids whose newest write was `running`: never evicted.
      const running = new Set<string>()
      for (const next of ops) {
        const requestId = `r${next.id}`
        const before = new Map(everything(store).map((r) => [r.requestId, r]))
        if (next.kind === "save") {
          const revision = (revisions.get(next.id) ?? 0) + 1
          revisions.set(next.id, revision)
          expect(Effect.runSync(store.save(record(requestId, revision, next.status, next.draft)))).toBe("written")
          if (next.status === "running") running.add(requestId)
          else running.delete(requestId)
        } else {
          const result = Effect.runSync(
            Effect.orDie(
              store.update(requestId, (r) => ({ ...r, finalResponse: `${r.finalResponse ?? ""}${next.extra}` }))
            )
          )
          expect(result).toBe(before.has(requestId) ? "written" : "missing")
          if (result === "written") revisions.set(next.id, (revisions.get(next.id) ?? 0) + 1)
        }
        if (!before.has(requestId) && next.kind === "save") {
          order = [...order.filter((id) => id !== requestId), requestId]
        }

        const after = everything(store)
        const stored = new Map(after.map((r) => [r.requestId, r]))
        // A finished record the caps can never hold beside the running
        // records (never evicted) — bigger than the byte cap on its own, or
        // with them, or with no room left in the count beside them — is never
        // kept, and nothing older is evicted for its sake.
        const written = next.kind === "save"
          ? record(requestId, revisions.get(next.id)!, next.status, next.draft)
          : before.has(requestId)
          ? { ...before.get(requestId)!, finalResponse: `${before.get(requestId)!.finalResponse ?? ""}${next.extra}` }
          : undefined
        const runningBefore = [...before.values()].filter((r) => r.requestId !== requestId && !finished(r))
        const runningBytes = runningBefore.reduce((sum, r) => sum + jsonBytes(r), 0)
        if (
          written !== undefined && finished(written) &&
          (runningBytes + jsonBytes(written) > maxBytes || runningBefore.length + 1 > maxRecords)
        ) {
          expect(stored.has(requestId), `oversized ${requestId} kept`).toBe(false)
          for (const id of before.keys()) {
            if (id !== requestId) expect(stored.has(id), `${id} evicted for an oversized record`).toBe(true)
          }
          order = order.filter((id) => stored.has(id))
          continue
        }
        const bytes = after.reduce((sum, r) => sum + jsonBytes(r), 0)
        const underCaps = bytes <= maxBytes && after.length <= maxRecords
        // Under both caps, or nothing left that may be evicted.
        expect(underCaps || after.every((r) => !finished(r)), `${bytes} bytes, ${after.length} records`).toBe(true)
        // Running records are never evicted.
        for (const id of running) expect(stored.has(id), `running ${id} evicted`).toBe(true)
        // The finished records kept are the newest ones: evicted ones form a prefix of the creation order.
        const finishedInOrder = order.filter((id) => {
          const r = stored.get(id) ?? before.get(id)
          return r === undefined || finished(r)
        })
        const firstKept = finishedInOrder.findIndex((id) => stored.has(id))
        if (firstKept >= 0) {
          for (const id of finishedInOrder.slice(firstKept)) {
            expect(stored.has(id), `${id} evicted before an older one`).toBe(true)
          }
        }
        // No more evicted than needed: putting back the newest record evicted now would pass a cap.
        const evicted = order.filter((id) => before.has(id) && !stored.has(id) && id !== requestId)
        const newestEvicted = evicted.at(-1)
        if (newestEvicted !== undefined) {
          const back = before.get(newestEvicted)!
          expect(
            bytes + jsonBytes(back) > maxBytes || after.length + 1 > maxRecords,
            `${newestEvicted} evicted needlessly`
          ).toBe(
            true
          )
        }
        order = order.filter((id) => stored.has(id))
      }
    }
  )

  it("memory store bounds: a finished record that cannot fit beside the running ones goes, not the older one it would displace", () => {
    // 124, 126 and 127 bytes: the running r0 with r1 is 250 bytes, with r2 251.
    const store = Effect.runSync(makeMemory({ maxRecords: 2, maxBytes: 250 }))
    for (
      const r of [record("r0", 1, "running", ""), record("r1", 1, "succeeded", ""), record("r2", 1, "succeeded", "a")]
    ) {
      expect(Effect.runSync(store.save(r))).toBe("written")
    }
    expect(everything(store).map((r) => r.requestId).sort()).toEqual(["r0", "r1"])
  })

  it.effect("memory store bounds: 200 requests with 5 MB drafts keep at most the default 64 MiB, newest first", () =>
    Effect.gen(function*() {
      const store = yield* ExecutionStore
      // One flat string shared by every record: the test holds 5 MB, the store counts 5 MB per record.
      const fiveMegabytes = "x".repeat(5_000_000)
      for (let i = 0; i < 200; i++) yield* store.save(record(`big-${i}`, 1, "succeeded", fiveMegabytes))
      const kept = (yield* store.list({ limit: 1000 })).records
      const bytes = kept.reduce((sum, r) => sum + jsonBytes(r), 0)
      expect(bytes).toBeLessThanOrEqual(defaultMaxBytes)
      const each = jsonBytes(record("big-199", 1, "succeeded", fiveMegabytes))
      expect(kept.length).toBe(Math.floor(defaultMaxBytes / each))
      expect(kept.map((r) => r.requestId)).toEqual(Array.from({ length: kept.length }, (_, i) => `big-${199 - i}`))
    }).pipe(Effect.provide(layerMemory())))

  it.effect("memory store bounds: a record that grows in place evicts older finished records; running records count but stay", () =>
    Effect.gen(function*() {
      const store = yield* ExecutionStore
      const ids = Effect.map(store.list(), (page) => page.records.map((r) => r.requestId))
      // About 1.2 KB each: four fit in 6,000 bytes.
      const kb = "k".repeat(1_000)
      yield* store.save(record("running", 1, "running", kb))
      yield* store.save(record("old", 1, "succeeded", kb))
      yield* store.save(record("newer", 1, "succeeded", kb))
      yield* store.save(record("growing", 1, "succeeded", kb))
      expect(yield* ids).toEqual(["growing", "newer", "old", "running"])
      // Growing by 1.5 KB passes the cap: the oldest finished record goes, and only it.
      yield* store.update("growing", (r) => ({ ...r, finalResponse: `${r.finalResponse}${"g".repeat(1_500)}` }))
      expect(yield* ids).toEqual(["growing", "newer", "running"])
      // Running records alone past the cap: every finished record goes, the running ones stay.
      yield* store.save(record("running-2", 1, "running", "r".repeat(5_000)))
      expect(yield* ids).toEqual(["running-2", "running"])
      // A finished record then has no room: it is evicted as it is written.
      expect(yield* store.save(record("late", 1, "succeeded", "l"))).toBe("written")
      expect(Option.isNone(yield* store.get("late"))).toBe(true)
      expect(yield* ids).toEqual(["running-2", "running"])
    }).pipe(Effect.provide(layerMemory({ maxBytes: 6_000 }))))
})

/** The construction's outcome: the error's message, or "accepted". */
const construct = (options: MemoryOptions): string =>
  Either.match(Effect.runSync(Effect.either(makeMemory(options))), {
    onLeft: (error: ExecutionStoreError) => `${error._tag}: ${error.message}`,
    onRight: () => "accepted"
  })

const refusedRecords =
  "ExecutionStoreError: execution store open failed: invalid option maxRecords: must be an integer from 1 to 10000000"
const refusedBytes =
  "ExecutionStoreError: execution store open failed: invalid option maxBytes: must be an integer from 1 to 17179869184"
const refusedDuration = (option: string, max: string) =>
  `ExecutionStoreError: execution store open failed: invalid option ${option}: must be a positive duration of at most ${max} (a Duration, milliseconds, or a string like "5 minutes")`
const refusedSweep = refusedDuration("sweepEvery", "24 hours or Duration.infinity")

describe("memory store bounds: options out of range fail construction with a typed error", () => {
  const misspelled = { maxRecords: 5, maxByte: 10 }
  const table: ReadonlyArray<readonly [string, MemoryOptions, string]> = [
    ["maxRecords 0", { maxRecords: 0 }, refusedRecords],
    ["maxRecords -1", { maxRecords: -1 }, refusedRecords],
    ["maxRecords 1.5", { maxRecords: 1.5 }, refusedRecords],
    ["maxRecords NaN", { maxRecords: Number.NaN }, refusedRecords],
    ["maxRecords Infinity", { maxRecords: Number.POSITIVE_INFINITY }, refusedRecords],
    ["maxRecords 1e300", { maxRecords: 1e300 }, refusedRecords],
    ["maxRecords 10,000,001", { maxRecords: 10_000_001 }, refusedRecords],
    ["maxBytes 0", { maxBytes: 0 }, refusedBytes],
    ["maxBytes -5", { maxBytes: -5 }, refusedBytes],
    ["maxBytes 0.5", { maxBytes: 0.5 }, refusedBytes],
    ["maxBytes NaN", { maxBytes: Number.NaN }, refusedBytes],
    ["maxBytes -Infinity", { maxBytes: Number.NEGATIVE_INFINITY }, refusedBytes],
    ["maxBytes 2^60", { maxBytes: 2 ** 60 }, refusedBytes],
    ["maxBytes 16 GiB + 1", { maxBytes: 17_179_869_185 }, refusedBytes],
    ["sweepEvery 0", { sweepEvery: 0 }, refusedSweep],
    ["sweepEvery -1", { sweepEvery: -1 }, refusedSweep],
    ["sweepEvery NaN", { sweepEvery: Number.NaN }, refusedSweep],
    ["sweepEvery 25 hours", { sweepEvery: "25 hours" }, refusedSweep],
    [
      "retention.normal Infinity",
      { retention: { normal: Duration.infinity, error: "1 day" } },
      refusedDuration("retention.normal", "3650 days")
    ],
    [
      "retention.normal 0",
      { retention: { normal: 0, error: "1 day" } },
      refusedDuration("retention.normal", "3650 days")
    ],
    [
      "retention.error 3651 days",
      { retention: { normal: "1 day", error: "3651 days" } },
      refusedDuration("retention.error", "3650 days")
    ],
    [
      "a misspelled option",
      misspelled,
      "ExecutionStoreError: execution store open failed: invalid option maxByte: unknown option (options are retention, maxRecords, maxBytes, sweepEvery)"
    ],
    ["the smallest caps", { maxRecords: 1, maxBytes: 1 }, "accepted"],
    ["the largest caps", { maxRecords: 10_000_000, maxBytes: 17_179_869_184 }, "accepted"],
    ["the shortest and longest durations", {
      sweepEvery: "1 millis",
      retention: { normal: "1 millis", error: "3650 days" }
    }, "accepted"],
    ["no write-time sweep (sweepEvery Duration.infinity)", { sweepEvery: Duration.infinity }, "accepted"],
    ["no options", {}, "accepted"]
  ]
  for (const [name, options, expected] of table) {
    it(`memory store bounds: ${name} is ${expected === "accepted" ? "accepted" : "refused at construction"}`, () => {
      expect(construct(options)).toBe(expected)
    })
  }

  it.effect("memory store bounds: the Layer fails to build on options out of range (maxRecords 0)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(layerMemory({ maxRecords: 0 })))
      expect(error._tag).toBe("ExecutionStoreError")
      expect(error.operation).toBe("open")
      expect(error.message).toBe(refusedRecords.replace("ExecutionStoreError: ", ""))
    }).pipe(Effect.scoped))
})
