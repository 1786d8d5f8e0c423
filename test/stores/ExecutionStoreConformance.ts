/**
 * The ExecutionStore conformance suite: every backend runs it.
 *
 * ```ts
 * import { layerMemory } from "../../src/stores/ExecutionStore.js"
 * import { executionStoreConformance } from "./ExecutionStoreConformance.js"
 *
 * executionStoreConformance("memory", layerMemory)
 * ```
 *
 * Time is driven by `TestClock`; every test builds a fresh store from
 * `makeLayer`, so backends must not share state between layer builds (a SQL
 * backend should hand out a fresh schema / table prefix per build).
 *
 * Clauses: C15 — revision gating (a snapshot whose `record_revision` is not
 * newer than the stored one is refused as `stale`); C16 — separate retention
 * for normal and error records.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Array as Arr,
  Clock,
  Duration,
  Effect,
  FastCheck,
  Fiber,
  type Layer,
  Option,
  Ref,
  Schema,
  TestClock
} from "effect"
import { ExecutionRecord, type LifecycleStatus } from "../../src/domain/ExecutionRecord.js"
import { ExecutionStore, type RecordPage, type RetentionSettings } from "../../src/stores/ExecutionStore.js"
import { propertyRuns } from "../support/PropertyRuns.js"

/**
 * Builds a fresh store; `retention` overrides the backend's default retention.
 */
export type MakeExecutionStoreLayer = (options?: {
  readonly retention?: RetentionSettings
  readonly sweepEvery?: Duration.DurationInput
}) => Layer.Layer<ExecutionStore>

interface RecordOptions {
  /** Lifecycle status; omitted means a legacy record (no lifecycle). */
  readonly status?: LifecycleStatus
  /** Defaults to `rev-<revision>`, so a stored record tells which write it came from. */
  readonly payload?: string
  /** Lifecycle start (epoch ms); defaults to 0. */
  readonly startedAt?: number
  /** A running record's owner lease (epoch ms). */
  readonly leaseExpiresAt?: number
  /** Names of hooks with an invocation in the record. */
  readonly hooks?: ReadonlyArray<string>
}

/** A record as a producer would persist it (decoded from its wire form). */
const makeRecord = (requestId: string, revision: number, options: RecordOptions = {}): ExecutionRecord =>
  Schema.decodeUnknownSync(ExecutionRecord)({
    requestId,
    request: `request ${requestId}`,
    record_revision: revision,
    ...(options.status === undefined ? {} : {
      lifecycle: {
        status: options.status,
        startedAt: options.startedAt ?? 0,
        ...(options.leaseExpiresAt === undefined ? {} : { owner: "process-a", leaseExpiresAt: options.leaseExpiresAt })
      }
    }),
    hookInvocations: (options.hooks ?? []).map((name, sequence) => ({
      name,
      stage: "before_planning",
      outcome: "succeeded",
      sequence,
      startedAt: 0,
      duration: 1,
      effects: []
    })),
    finalResponse: options.payload ?? `rev-${revision}`
  })

const revisionOf = (record: Option.Option<ExecutionRecord>): number | undefined =>
  Option.getOrUndefined(Option.map(record, (r) => r.recordRevision))

const payloadOf = (record: Option.Option<ExecutionRecord>): string | undefined =>
  Option.getOrUndefined(Option.flatMapNullable(record, (r) => r.finalResponse))

/** Whether a request id is currently visible. */
const isLive = (requestId: string) =>
  Effect.flatMap(ExecutionStore, (store) => Effect.map(store.get(requestId), Option.isSome))

/** A permutation of revisions 1..n and, per save, how many times to yield before it. */
const interleavings = FastCheck.integer({ min: 1, max: 24 }).chain((n) =>
  FastCheck.tuple(
    FastCheck.shuffledSubarray(Arr.range(1, n), { minLength: n, maxLength: n }),
    FastCheck.array(FastCheck.nat(4), { minLength: n, maxLength: n })
  )
)

/**
 * A record shaped as the pipeline writes one: 16 hooks' runs at three
 * points with durations as a live clock makes them (differences of
 * `performance.now()` readings, whole nanoseconds, zero), an enrichment
 * effect whose text both prompts carry, the default prompt builder's
 * instructions, a draft that is also the synthesis call's output.
 */
const pipelineRecord = (requestId: string): ExecutionRecord => {
  const enrichment = "Desk notes: quotes are delayed 15 minutes. ".repeat(8)
  const clock = 3_600_000.123456789
  const durations = [(clock + 0.000271) - clock, 0.0042, 0, (clock + 1.25) - clock]
  const draft = "The answer is: lookup-result(bench): 42 widgets — and that is all we know about it."
  const runs = [
    {
      name: "enrichment",
      stage: "before_planning",
      outcome: "succeeded",
      status: "completed",
      sequence: 0,
      startedAt: 1_796_000_000_000,
      duration: durations[0],
      contributionHash: "cyrb53:19780d772f97d8",
      effects: [{
        effectId: "planning_enrichment:rag_context",
        schemaVersion: 1,
        name: "Planning enrichment rag_context",
        status: "succeeded",
        data: { key: "rag_context", operation: "added", after: enrichment },
        startedAt: 1_796_000_000_000,
        duration: 0,
        summary: "added rag_context"
      }]
    },
    ...["before_inference", "after_inference", "around_tool_call"].flatMap((stage, s) =>
      Array.from({ length: 16 }, (_, i) => ({
        name: `noop_${i}`,
        stage,
        outcome: "succeeded",
        status: "completed",
        sequence: i,
        startedAt: 1_796_000_000_000 + s,
        duration: durations[(i + s) % durations.length],
        phase: 1,
        operation: stage === "around_tool_call" ? "tool_call" : "inference",
        callId: stage === "around_tool_call" ? "tool_call-1" : "inference-1",
        ...(stage === "around_tool_call" ? { stepId: "s1" } : {}),
        effects: []
      }))
    )
  ]
  return Schema.decodeUnknownSync(ExecutionRecord)({
    schemaVersion: 1,
    requestId,
    request: "What does the lookup say about bench?",
    record_revision: 7,
    lifecycle: { status: "succeeded", startedAt: 1_796_000_000_000, endedAt: 1_796_000_000_003 },
    phases: [{
      phase: 1,
      plan: {
        steps: [{
          step_id: "s1",
          namespace: "bench",
          agent: "lookup",
          capability: "lookup",
          parameters: { q: "bench" }
        }],
        terminal: true
      },
      steps: [{
        step_id: "s1",
        namespace: "bench",
        agent: "lookup",
        capability: "lookup",
        status: "succeeded",
        output: "lookup-result(bench): 42 widgets",
        startedAt: 1_796_000_000_001,
        duration: durations[0]
      }]
    }],
    hookInvocations: runs,
    modelCalls: [
      {
        purpose: "planning",
        phase: 1,
        reask: 0,
        attempt: 1,
        model: "primary",
        streamed: false,
        startedAt: 1_796_000_000_000,
        durationMs: durations[3],
        outcome: "succeeded",
        prompt:
          `<instructions>\nPlan the tool calls that answer the user request.\n</instructions>\n\n<agent_memory>\n${enrichment}\n</agent_memory>`,
        output: "{\"steps\":[],\"terminal\":true}"
      },
      {
        purpose: "synthesis",
        reask: 0,
        attempt: 1,
        model: "fallback",
        streamed: true,
        startedAt: 1_796_000_000_002,
        durationMs: 0.5,
        outcome: "succeeded",
        prompt:
          `<agent_memory>\n${enrichment}\n</agent_memory>\n\n<user_request>\nWhat does the lookup say?\n</user_request>`,
        output: draft,
        usage: { inputTokens: 10, outputTokens: 20 }
      }
    ],
    rawDraft: draft,
    finalResponse: draft.replace("all", "[redacted]"),
    writer: { id: "writer-1", seq: 3 }
  })
}

/**
 * Registers the conformance suite for one backend.
 *
 * @param name - the backend's name, shown in the describe block
 * @param makeLayer - builds a fresh, empty store
 */
export const executionStoreConformance = (name: string, makeLayer: MakeExecutionStoreLayer): void => {
  // The backend's own sweep is off unless a test turns it on: tests call
  // purgeExpired / sweepAbandoned themselves and count what they did.
  const fresh: MakeExecutionStoreLayer = (options) => makeLayer({ sweepEvery: Duration.infinity, ...options })
  describe(`ExecutionStore conformance: ${name}`, () => {
    it.effect("get of an unknown id is None", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect(Option.isNone(yield* store.get("missing"))).toBe(true)
        yield* store.save(makeRecord("present", 1))
        expect(Option.isNone(yield* store.get("missing"))).toBe(true)
        expect(Option.isNone(yield* store.get(""))).toBe(true)
      }).pipe(Effect.provide(fresh())))

    it.effect("save then get returns the record", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        const record = makeRecord("r1", 1, { status: "succeeded" })
        expect(yield* store.save(record)).toBe("written")
        const stored = yield* store.get("r1")
        expect(Option.getOrUndefined(stored)).toStrictEqual(record)
      }).pipe(Effect.provide(fresh())))

    it.effect("save then get returns a record as the pipeline writes it, exactly: many hook runs with clock-made durations, prompts carrying an enrichment, a draft that is a call's output, a writer stamp", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        const record = pipelineRecord("pipeline-1")
        expect(yield* store.save(record)).toBe("written")
        expect(Option.getOrThrow(yield* store.get("pipeline-1"))).toStrictEqual(record)
        expect((yield* store.list({ hook: "noop_15" })).records).toStrictEqual([record])
        // A snapshot of another writer over it is merged (nothing to merge here): the same evidence.
        const next = { ...record, recordRevision: record.recordRevision + 1, writer: { id: "other", seq: 1 } }
        expect(yield* store.save(next)).toBe("written")
        expect(Option.getOrThrow(yield* store.get("pipeline-1"))).toStrictEqual(next)
      }).pipe(Effect.provide(fresh())))

    it.effect("C15: stale snapshot never overwrites a newer one", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect(yield* store.save(makeRecord("r", 2))).toBe("written")

        // Older revision: refused.
        expect(yield* store.save(makeRecord("r", 1))).toBe("stale")
        expect(revisionOf(yield* store.get("r"))).toBe(2)
        expect(payloadOf(yield* store.get("r"))).toBe("rev-2")

        // Equal revision: refused as well, whatever it carries.
        expect(yield* store.save(makeRecord("r", 2, { payload: "other writer" }))).toBe("stale")
        expect(payloadOf(yield* store.get("r"))).toBe("rev-2")

        // Revision 0 (a legacy default) never overwrites a revisioned record.
        expect(yield* store.save(makeRecord("r", 0))).toBe("stale")

        // Newer revision: written.
        expect(yield* store.save(makeRecord("r", 3))).toBe("written")
        expect(revisionOf(yield* store.get("r"))).toBe(3)
        expect(payloadOf(yield* store.get("r"))).toBe("rev-3")
        const listed = (yield* store.list()).records
        expect(listed.map((r) => [r.requestId, r.recordRevision])).toEqual([["r", 3]])
      }).pipe(Effect.provide(fresh())))

    it.effect("C15: revisions are gated per request id", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect(yield* store.save(makeRecord("a", 5))).toBe("written")
        expect(yield* store.save(makeRecord("b", 1))).toBe("written")
        expect(revisionOf(yield* store.get("a"))).toBe(5)
        expect(revisionOf(yield* store.get("b"))).toBe(1)
      }).pipe(Effect.provide(fresh())))

    it.effect.prop(
      "C15: property — random interleavings of concurrent snapshot writes never decrease record_revision and keep the newest",
      [interleavings],
      ([[revisions, yields]]) =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          const requestId = "concurrent"
          const newest = revisions.length

          // A reader polling throughout: its sequential reads must never see
          // the revision go down.
          const done = yield* Ref.make(false)
          const observed: Array<number> = []
          const reader = yield* Effect.fork(
            Effect.gen(function*() {
              while (!(yield* Ref.get(done))) {
                const revision = revisionOf(yield* store.get(requestId))
                if (revision !== undefined) observed.push(revision)
                yield* Effect.yieldNow()
              }
            })
          )

          const results = yield* Effect.forEach(
            revisions,
            (revision, i) =>
              Effect.gen(function*() {
                for (let k = 0; k < (yields[i] ?? 0); k++) yield* Effect.yieldNow()
                const result = yield* store.save(makeRecord(requestId, revision))
                // Once a save returns, the stored revision is at least its own:
                // either it was written, or something newer or equal was there.
                const after = revisionOf(yield* store.get(requestId))
                expect(after).toBeGreaterThanOrEqual(revision)
                return [revision, result] as const
              }),
            { concurrency: "unbounded" }
          )

          yield* Ref.set(done, true)
          yield* Fiber.join(reader)

          for (let i = 1; i < observed.length; i++) {
            expect(observed[i]).toBeGreaterThanOrEqual(observed[i - 1] ?? 0)
          }
          // The newest snapshot always wins and is stored with its own payload.
          expect(results.find(([revision]) => revision === newest)?.[1]).toBe("written")
          const stored = yield* store.get(requestId)
          expect(revisionOf(stored)).toBe(newest)
          expect(payloadOf(stored)).toBe(`rev-${newest}`)
          // A write after the newest is stale.
          expect(yield* store.save(makeRecord(requestId, newest))).toBe("stale")
          // One record, whatever the interleaving.
          expect((yield* store.list()).records.length).toBe(1)
        }).pipe(Effect.provide(fresh())),
      { fastCheck: { numRuns: propertyRuns(100) } }
    )

    it.effect("C16: normal and error records have separate retention", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect(yield* store.save(makeRecord("ok", 1, { status: "succeeded" }))).toBe("written")
        expect(yield* store.save(makeRecord("bad", 1, { status: "failed" }))).toBe("written")

        yield* TestClock.adjust("59 minutes")
        expect(yield* isLive("ok")).toBe(true)
        expect(yield* isLive("bad")).toBe(true)
        expect(yield* store.purgeExpired).toBe(0)

        // Past 1 hour: the succeeded record has expired, the failed one has not.
        yield* TestClock.adjust("2 minutes")
        expect(yield* isLive("ok")).toBe(false)
        expect(yield* isLive("bad")).toBe(true)
        expect((yield* store.list()).records.map((r) => r.requestId)).toEqual(["bad"])
        expect(yield* store.purgeExpired).toBe(1)
        expect(yield* store.purgeExpired).toBe(0)

        // 2 hours: the failed record survives.
        yield* TestClock.adjust("59 minutes")
        expect(yield* isLive("bad")).toBe(true)
        expect(yield* store.purgeExpired).toBe(0)

        // Just under 1 day (23h58m): still there; just past 1 day: gone.
        yield* TestClock.adjust("1318 minutes")
        expect(yield* isLive("bad")).toBe(true)
        yield* TestClock.adjust("2 minutes")
        expect(yield* isLive("bad")).toBe(false)
        expect((yield* store.list()).records).toEqual([])
        expect(yield* store.purgeExpired).toBe(1)
        expect(yield* store.purgeExpired).toBe(0)
      }).pipe(Effect.provide(fresh({ retention: { normal: "1 hour", error: "1 day" } }))))

    it.effect(
      "C16: interrupted records use error retention; running, suspended and legacy records use normal retention",
      () =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          yield* store.save(makeRecord("interrupted", 1, { status: "interrupted" }))
          yield* store.save(makeRecord("running", 1, { status: "running" }))
          yield* store.save(makeRecord("suspended", 1, { status: "suspended" }))
          yield* store.save(makeRecord("legacy", 1))

          yield* TestClock.adjust("61 minutes")
          expect(yield* isLive("interrupted")).toBe(true)
          expect(yield* isLive("running")).toBe(false)
          expect(yield* isLive("suspended")).toBe(false)
          expect(yield* isLive("legacy")).toBe(false)
          expect(yield* store.purgeExpired).toBe(3)
        }).pipe(Effect.provide(fresh({ retention: { normal: "1 hour", error: "1 day" } })))
    )

    it.effect("C16: retention follows the latest snapshot (a running record that later fails keeps error retention)", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.save(makeRecord("r", 1, { status: "running" }))
        yield* TestClock.adjust("30 minutes")
        expect(yield* store.save(makeRecord("r", 2, { status: "failed" }))).toBe("written")
        yield* TestClock.adjust("2 hours")
        expect(revisionOf(yield* store.get("r"))).toBe(2)
        expect(yield* store.purgeExpired).toBe(0)
      }).pipe(Effect.provide(fresh({ retention: { normal: "1 hour", error: "1 day" } }))))

    it.effect("C16: default retention keeps normal records 24 hours and error records 7 days", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.save(makeRecord("ok", 1, { status: "succeeded" }))
        yield* store.save(makeRecord("bad", 1, { status: "failed" }))
        yield* TestClock.adjust("23 hours")
        expect(yield* isLive("ok")).toBe(true)
        yield* TestClock.adjust("2 hours")
        expect(yield* isLive("ok")).toBe(false)
        expect(yield* isLive("bad")).toBe(true)
        yield* TestClock.adjust("6 days")
        expect(yield* isLive("bad")).toBe(false)
      }).pipe(Effect.provide(fresh())))

    it.effect("C16: an expired snapshot does not gate a new one", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.save(makeRecord("r", 5, { status: "succeeded" }))
        yield* TestClock.adjust("2 hours")
        expect(yield* store.save(makeRecord("r", 1, { status: "succeeded" }))).toBe("written")
        expect(revisionOf(yield* store.get("r"))).toBe(1)
      }).pipe(Effect.provide(fresh({ retention: { normal: "1 hour", error: "1 day" } }))))

    it.effect("list is newest first and honours limit", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect((yield* store.list()).records).toEqual([])
        for (const id of ["a", "b", "c", "d"]) {
          yield* store.save(makeRecord(id, 1, { status: "succeeded" }))
          yield* TestClock.adjust("1 second")
        }
        const ids = (page: RecordPage) => page.records.map((r) => r.requestId)
        expect(ids(yield* store.list())).toEqual(["d", "c", "b", "a"])
        expect(ids(yield* store.list({}))).toEqual(["d", "c", "b", "a"])
        expect(ids(yield* store.list({ limit: 2 }))).toEqual(["d", "c"])
        expect(ids(yield* store.list({ limit: 1 }))).toEqual(["d"])
        expect(ids(yield* store.list({ limit: 10 }))).toEqual(["d", "c", "b", "a"])
        expect((yield* store.list({ limit: 0 })).records).toEqual([])

        // An update is listed once, with its latest revision.
        expect(yield* store.save(makeRecord("b", 2, { status: "succeeded" }))).toBe("written")
        const listed = (yield* store.list()).records
        expect(listed.length).toBe(4)
        expect(listed.find((r) => r.requestId === "b")?.recordRevision).toBe(2)
      }).pipe(Effect.provide(fresh())))

    it.effect("list leaves out expired records", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.save(makeRecord("old", 1, { status: "succeeded" }))
        yield* TestClock.adjust("90 minutes")
        yield* store.save(makeRecord("new", 1, { status: "succeeded" }))
        expect((yield* store.list()).records.map((r) => r.requestId)).toEqual(["new"])
        expect((yield* store.list({ limit: 5 })).records.map((r) => r.requestId)).toEqual(["new"])
      }).pipe(Effect.provide(fresh({ retention: { normal: "1 hour", error: "1 day" } }))))

    it.effect("create: a new id is created once; a second create of a live record is refused", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect(yield* store.create(makeRecord("c", 0, { status: "running" }))).toBe("created")
        expect(yield* store.create(makeRecord("c", 0, { status: "running", payload: "second" }))).toBe("exists")
        expect(payloadOf(yield* store.get("c"))).toBe("rev-0")
        // The created record is gated like any other.
        expect(yield* store.save(makeRecord("c", 1, { status: "succeeded" }))).toBe("written")
        expect(yield* store.create(makeRecord("c", 0, { status: "running" }))).toBe("exists")
        expect(revisionOf(yield* store.get("c"))).toBe(1)
      }).pipe(Effect.provide(fresh())))

    it.effect("create: an expired record does not hold its id", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect(yield* store.create(makeRecord("c", 3, { status: "succeeded" }))).toBe("created")
        yield* TestClock.adjust("2 hours")
        expect(yield* store.create(makeRecord("c", 0, { status: "running", payload: "again" }))).toBe("created")
        expect(payloadOf(yield* store.get("c"))).toBe("again")
        expect((yield* store.list()).records.map((r) => r.requestId)).toEqual(["c"])
      }).pipe(Effect.provide(fresh({ retention: { normal: "1 hour", error: "1 day" } }))))

    it.effect.prop(
      "create: property — concurrent creates of one id: exactly one is created",
      [FastCheck.integer({ min: 2, max: 12 }), FastCheck.array(FastCheck.nat(3), { minLength: 12, maxLength: 12 })],
      ([n, yields]) =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          const results = yield* Effect.forEach(
            Arr.range(1, n),
            (i) =>
              Effect.gen(function*() {
                for (let k = 0; k < (yields[i - 1] ?? 0); k++) yield* Effect.yieldNow()
                return yield* store.create(makeRecord("same", 0, { status: "running", payload: `writer-${i}` }))
              }),
            { concurrency: "unbounded" }
          )
          expect(results.filter((r) => r === "created").length).toBe(1)
          expect(results.filter((r) => r === "exists").length).toBe(n - 1)
          const winner = results.indexOf("created") + 1
          expect(payloadOf(yield* store.get("same"))).toBe(`writer-${winner}`)
        }).pipe(Effect.provide(fresh())),
      { fastCheck: { numRuns: propertyRuns(25) } }
    )

    it.effect("list: filters by completion, start time and hook name", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.save(makeRecord("ok-1", 1, { status: "succeeded", startedAt: 1_000, hooks: ["audit", "cache"] }))
        yield* store.save(makeRecord("bad-1", 1, { status: "failed", startedAt: 2_000, hooks: ["audit"] }))
        yield* store.save(makeRecord("ok-2", 1, { status: "succeeded", startedAt: 3_000, hooks: [] }))
        yield* store.save(makeRecord("legacy", 1, {}))
        yield* store.save(makeRecord("run-1", 1, { status: "running", startedAt: 4_000, hooks: ["cache"] }))
        const ids = (page: RecordPage) => page.records.map((r) => r.requestId)
        expect(ids(yield* store.list({ status: ["succeeded"] }))).toEqual(["ok-2", "ok-1"])
        expect(ids(yield* store.list({ status: ["failed", "running"] }))).toEqual(["run-1", "bad-1"])
        expect(ids(yield* store.list({ status: ["unknown"] }))).toEqual(["legacy"])
        expect(ids(yield* store.list({ status: [] }))).toEqual([])
        expect(ids(yield* store.list({ startedFrom: 2_000, startedBefore: 4_000 }))).toEqual(["ok-2", "bad-1"])
        expect(ids(yield* store.list({ startedFrom: 3_500 }))).toEqual(["run-1"])
        expect(ids(yield* store.list({ hook: "audit" }))).toEqual(["bad-1", "ok-1"])
        expect(ids(yield* store.list({ hook: "cache", status: ["running"] }))).toEqual(["run-1"])
        expect(ids(yield* store.list({ hook: "nobody" }))).toEqual([])
        // A hook name is matched whole, not as a substring.
        expect(ids(yield* store.list({ hook: "aud" }))).toEqual([])
      }).pipe(Effect.provide(fresh())))

    it.effect.prop(
      "list: property — following the cursor visits every matching record once, newest first",
      [FastCheck.integer({ min: 0, max: 30 }), FastCheck.integer({ min: 1, max: 7 })],
      ([n, limit]) =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          for (let i = 0; i < n; i++) {
            yield* store.save(makeRecord(`r${i}`, 1, { status: i % 3 === 0 ? "failed" : "succeeded" }))
          }
          // An update does not move a record or duplicate it.
          if (n > 2) yield* store.save(makeRecord("r1", 2, { status: "succeeded" }))
          const seen: Array<string> = []
          let cursor: string | undefined
          let pages = 0
          do {
            const page: RecordPage = yield* store.list({ limit, cursor })
            expect(page.records.length).toBeLessThanOrEqual(limit)
            expect(page.undecodable).toEqual([])
            seen.push(...page.records.map((r) => r.requestId))
            cursor = page.next
            pages++
          } while (cursor !== undefined && pages < 100)
          expect(seen).toEqual(Arr.range(0, n - 1).reverse().map((i) => `r${i}`).slice(0, n))
          const failed: Array<string> = []
          cursor = undefined
          do {
            const page: RecordPage = yield* store.list({ limit, cursor, status: ["failed"] })
            failed.push(...page.records.map((r) => r.requestId))
            cursor = page.next
          } while (cursor !== undefined)
          expect(failed).toEqual(seen.filter((id) => Number(id.slice(1)) % 3 === 0))
        }).pipe(Effect.provide(fresh())),
      { fastCheck: { numRuns: propertyRuns(20) } }
    )

    it.effect("list: the default page is 100 records; a cursor the store did not hand out is an error", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        for (let i = 0; i < 105; i++) yield* store.save(makeRecord(`r${i}`, 1, { status: "succeeded" }))
        const first = yield* store.list()
        expect(first.records.length).toBe(100)
        expect(first.next).toBeDefined()
        const second = yield* store.list({ cursor: first.next })
        expect(second.records.length).toBe(5)
        expect(second.next).toBeUndefined()
        const error = yield* Effect.flip(store.list({ cursor: "not-a-cursor" }))
        expect(error._tag).toBe("ExecutionStoreError")
        expect(error.operation).toBe("list")
      }).pipe(Effect.provide(fresh())))

    it.effect("abandoned: a running record whose lease expired is marked abandoned by the sweep", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        // Lease until t=60s; another until t=10min; one without a lease; one finished.
        yield* store.create(makeRecord("dead", 1, { status: "running", leaseExpiresAt: 60_000 }))
        yield* store.create(makeRecord("alive", 1, { status: "running", leaseExpiresAt: 600_000 }))
        yield* store.create(makeRecord("no-lease", 1, { status: "running" }))
        yield* store.create(makeRecord("done", 1, { status: "succeeded" }))
        expect(yield* store.sweepAbandoned).toBe(0)
        yield* TestClock.adjust("61 seconds")
        expect(yield* store.sweepAbandoned).toBe(1)
        const dead = Option.getOrThrow(yield* store.get("dead"))
        expect(dead.lifecycle?.status).toBe("abandoned")
        expect(dead.lifecycle?.endedAt).toBe(61_000)
        expect(dead.lifecycle?.leaseExpiresAt).toBeUndefined()
        expect(dead.recordRevision).toBe(2)
        // Its evidence is kept; the owner's late write (an older revision) cannot revive it.
        expect(dead.finalResponse).toBe("rev-1")
        expect(yield* store.save(makeRecord("dead", 2, { status: "succeeded" }))).toBe("stale")
        expect((yield* store.list({ status: ["abandoned"] })).records.map((r) => r.requestId)).toEqual(["dead"])
        expect(yield* store.sweepAbandoned).toBe(0)
        // A renewed lease keeps a record running.
        expect(yield* store.save(makeRecord("alive", 2, { status: "running", leaseExpiresAt: 1_200_000 }))).toBe(
          "written"
        )
        yield* TestClock.adjust("10 minutes")
        expect(yield* store.sweepAbandoned).toBe(0)
        expect(Option.getOrThrow(yield* store.get("alive")).lifecycle?.status).toBe("running")
        expect(Option.getOrThrow(yield* store.get("no-lease")).lifecycle?.status).toBe("running")
        expect(Option.getOrThrow(yield* store.get("done")).lifecycle?.status).toBe("succeeded")
      }).pipe(Effect.provide(fresh())))

    it.effect("abandoned: records use error retention", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.create(makeRecord("dead", 1, { status: "running", leaseExpiresAt: 1_000 }))
        yield* TestClock.adjust("2 seconds")
        expect(yield* store.sweepAbandoned).toBe(1)
        yield* TestClock.adjust("2 hours")
        expect(yield* isLive("dead")).toBe(true)
        yield* TestClock.adjust("1 day")
        expect(yield* isLive("dead")).toBe(false)
      }).pipe(Effect.provide(fresh({ retention: { normal: "1 hour", error: "1 day" } }))))

    it.effect("the store sweeps by itself on the Clock (a timer, or its writes): expired records go, ownerless running ones are abandoned", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.save(makeRecord("old", 1, { status: "succeeded" }))
        yield* store.create(makeRecord("dead", 1, { status: "running", leaseExpiresAt: 30_000 }))
        // Without any call from the test, the sweep runs (a backend doing real
        // I/O finishes a pass a little after the clock moved: wait for it).
        // A pass still running when the clock moved schedules its next one
        // from the moved clock, past the test's move: so while waiting, the
        // clock moves on a minute now and then (only ever later, which can
        // only make a lease more expired) — the timer still does the work.
        const abandonedSoon = (id: string) =>
          Effect.gen(function*() {
            for (let i = 0; i < 300; i++) {
              if (Option.getOrThrow(yield* store.get(id)).lifecycle?.status === "abandoned") return true
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
              if (i % 25 === 24) yield* TestClock.adjust("1 minute")
            }
            return false
          })
        yield* TestClock.adjust("1 minute")
        // (A store without a timer sweeps as it is written to.)
        yield* store.save(makeRecord("write-1", 1, { status: "succeeded" }))
        expect(yield* abandonedSoon("dead")).toBe(true)
        // A pass that marks "dead-2" saw the clock past its lease (30 s after
        // it was made, past 61 minutes), and it purged (first) with the clock
        // past 60: "old" is gone.
        yield* TestClock.adjust("60 minutes")
        const now = yield* Clock.currentTimeMillis
        yield* store.create(makeRecord("dead-2", 1, { status: "running", leaseExpiresAt: now + 30_000 }))
        yield* TestClock.adjust("1 minute")
        yield* store.save(makeRecord("write-2", 1, { status: "succeeded" }))
        expect(yield* abandonedSoon("dead-2")).toBe(true)
        expect(yield* store.purgeExpired).toBe(0)
        expect(yield* store.sweepAbandoned).toBe(0)
      }).pipe(Effect.provide(makeLayer({ retention: { normal: "1 hour", error: "1 day" }, sweepEvery: "1 minute" }))))

    it.effect("update: applies a change to the newest record as the next revision", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        expect(yield* store.update("nobody", (r) => r)).toBe("missing")
        yield* store.save(makeRecord("u", 4, { status: "succeeded" }))
        expect(yield* store.update("u", () => undefined)).toBe("unchanged")
        expect(revisionOf(yield* store.get("u"))).toBe(4)
        expect(yield* store.update("u", (r) => ({ ...r, diagnostics: [...r.diagnostics, "late"] }))).toBe("written")
        const updated = Option.getOrThrow(yield* store.get("u"))
        expect(updated.recordRevision).toBe(5)
        expect(updated.diagnostics).toEqual(["late"])
        // A writer still on revision 5 is now stale.
        expect(yield* store.save(makeRecord("u", 5, { status: "succeeded" }))).toBe("stale")
      }).pipe(Effect.provide(fresh())))

    it.effect.prop(
      "update: property — concurrent updates all land, each as its own revision",
      [FastCheck.integer({ min: 1, max: 10 }), FastCheck.array(FastCheck.nat(3), { minLength: 10, maxLength: 10 })],
      ([n, yields]) =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          yield* store.save(makeRecord("many", 1, { status: "succeeded" }))
          yield* Effect.forEach(
            Arr.range(1, n),
            (i) =>
              Effect.gen(function*() {
                for (let k = 0; k < (yields[i - 1] ?? 0); k++) yield* Effect.yieldNow()
                expect(yield* store.update("many", (r) => ({ ...r, diagnostics: [...r.diagnostics, `u${i}`] }))).toBe(
                  "written"
                )
              }),
            { concurrency: "unbounded" }
          )
          const stored = Option.getOrThrow(yield* store.get("many"))
          expect([...stored.diagnostics].sort()).toEqual(Arr.range(1, n).map((i) => `u${i}`).sort())
          expect(stored.recordRevision).toBe(1 + n)
        }).pipe(Effect.provide(fresh())),
      { fastCheck: { numRuns: propertyRuns(15) } }
    )

    it.effect("C15: a newer snapshot keeps late evidence the stored record has further along (effects never go back)", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        const run = (
          effects: ReadonlyArray<{ id: string; status: "pending" | "succeeded" | "failed" }>,
          status: "backgrounded" | "completed"
        ) => ({
          name: "audit",
          stage: "before_planning",
          outcome: status === "completed" ? "succeeded" : "pending",
          status,
          sequence: 0,
          startedAt: 5,
          duration: 1,
          effects: effects.map((e) => ({
            effectId: e.id,
            schemaVersion: 1,
            name: e.id,
            status: e.status,
            startedAt: 5
          }))
        })
        const withRuns = (revision: number, runs: ReadonlyArray<unknown>, payload: string) =>
          Schema.decodeUnknownSync(ExecutionRecord)({
            requestId: "late",
            request: "q",
            record_revision: revision,
            lifecycle: { status: "suspended", startedAt: 0 },
            hookInvocations: runs,
            finalResponse: payload
          })
        // The stored record (written by the suspended part's late update):
        // the run ended, its effect succeeded, and it reported a second one.
        yield* store.save(
          withRuns(
            3,
            [run([{ id: "write", status: "succeeded" }, { id: "notify", status: "failed" }], "completed")],
            "stored"
          )
        )
        // A resumed writer's newer snapshot still has the run as it was when it read it.
        expect(yield* store.save(withRuns(4, [run([{ id: "write", status: "pending" }], "backgrounded")], "resumed")))
          .toBe(
            "written"
          )
        const stored = Option.getOrThrow(yield* store.get("late"))
        expect(stored.recordRevision).toBe(4)
        expect(stored.finalResponse).toBe("resumed")
        const [merged] = stored.hookInvocations
        expect(merged?.status).toBe("completed")
        expect(merged?.effects.map((e) => [e.effectId, e.status])).toEqual([["write", "succeeded"], [
          "notify",
          "failed"
        ]])
        // A snapshot that is further along itself is written as it is.
        yield* store.save(
          withRuns(
            5,
            [run([{ id: "write", status: "succeeded" }, { id: "notify", status: "succeeded" }], "completed")],
            "final"
          )
        )
        const last = Option.getOrThrow(yield* store.get("late")).hookInvocations[0]
        expect(last?.effects.map((e) => e.status)).toEqual(["succeeded", "succeeded"])
      }).pipe(Effect.provide(fresh())))

    it.effect("each layer build is a fresh, empty store", () =>
      Effect.gen(function*() {
        yield* Effect.provide(
          Effect.flatMap(ExecutionStore, (store) => store.save(makeRecord("r", 1))),
          fresh()
        )
        const store = yield* ExecutionStore
        expect(Option.isNone(yield* store.get("r"))).toBe(true)
      }).pipe(Effect.provide(fresh())))
  })
}
