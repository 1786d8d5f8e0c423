/**
 * The record write path made faster for issue 20, and what must not change
 * with it:
 *
 * - a create and the same request's save in one batch are one row written,
 *   and each still gets the answer the two writes in turn would have had
 *   (a live row holding the id, a save not newer than the create, another
 *   writer's row: `exists`, `stale`, merged);
 * - a write whose caller does not wait for it is seen by the store's reads;
 * - a request with a generated id does not wait for its create, yet its
 *   record is in the store (`running`) while it runs, its progress within
 *   500 ms, and a create that fails is in the record and the log;
 * - a SQLite file's WAL is checkpointed by the worker thread, not the writes.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Runtime, TestClock, Tracer } from "effect"
import { Agent, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTablesNow, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { slowStep, slowTool } from "../support/SlowTool.js"
import { record } from "../support/SqlRecords.js"
import { keepingWarnings } from "../support/StoreTrouble.js"

interface Backend {
  readonly client: Layer.Layer<SqlClient>
  readonly prefix: string
  readonly cleanup: Effect.Effect<void>
}

const sqlite = (): Backend & { readonly file: string } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-writepath-"))
  const file = path.join(dir, "agent.db")
  return {
    file,
    prefix: uniquePrefix(),
    client: Layer.orDie(Sqlite.layerClient(file)),
    cleanup: Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  }
}

const postgres = (): Backend => {
  const prefix = uniquePrefix()
  const client = postgresClient()
  return { prefix, client, cleanup: dropTablesNow(prefix).pipe(Effect.provide(client)) }
}

/** Statements of the record write batches, counted by their spans. */
const countingBatches = Effect.map(Effect.tracer, (native) => {
  const batches: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = native.span(name, parent, context, links, startTime, kind, options)
      if (name === "ExecutionStore.writeBatch") batches.push(span)
      return span
    },
    context: (f, fiber) => native.context(f, fiber)
  })
  const sum = (key: string) => batches.reduce((n, span) => n + Number(span.attributes.get(key)), 0)
  return { tracer, batches: () => batches.length, statements: () => sum("db.batch.statements") }
})

const over = <A, E>(make: () => Backend, f: Effect.Effect<A, E, ExecutionStore.ExecutionStore>) =>
  Effect.suspend(() => {
    const backend = make()
    return f.pipe(
      Effect.provide(
        SqlStores.layerExecutionStore({ tablePrefix: backend.prefix }).pipe(Layer.provide(backend.client), Layer.orDie)
      ),
      Effect.ensuring(backend.cleanup)
    )
  })

const suite = (name: string, make: () => Backend) =>
  describe(`record write path: ${name}`, () => {
    it.live("a create and its save in one batch: one row written each, every write its own answer", () =>
      Effect.gen(function*() {
        const counting = yield* countingBatches
        yield* over(
          make,
          Effect.gen(function*() {
            const store = yield* ExecutionStore.ExecutionStore
            // A live row of another writer, with hook runs.
            expect(yield* store.create(record("taken", 3, { hooks: 1, writer: "x" }))).toBe("created")
            const before = { batches: counting.batches(), statements: counting.statements() }
            const ids = Array.from({ length: 16 }, (_, i) => `pair-${i}`)
            const writes = [
              ...ids.flatMap((id) => [
                store.create(record(id, 0, { status: "running" })),
                store.save(record(id, 5, { hooks: 2, writer: "w" }))
              ]),
              // Refused create; its save needs the merge with the stored row.
              store.create(record("taken", 0, { status: "running" })),
              store.save(record("taken", 5, { hooks: 2, writer: "w" })),
              // The save is not newer than the create: stale, as in turn.
              store.create(record("older", 4, { status: "running" })),
              store.save(record("older", 2, { writer: "w" }))
            ]
            const answers = yield* Effect.all(writes, { concurrency: "unbounded" })
            expect(answers).toEqual([
              ...ids.flatMap(() => ["created", "written"]),
              "exists",
              "written",
              "created",
              "stale"
            ])
            for (const id of ids) {
              const stored = Option.getOrThrow(yield* store.get(id))
              expect([stored.recordRevision, stored.lifecycle?.status, stored.hookInvocations.length]).toEqual([
                5,
                "succeeded",
                2
              ])
            }
            const taken = Option.getOrThrow(yield* store.get("taken"))
            expect(taken.recordRevision).toBe(5)
            expect(taken.request).toBe("request taken")
            expect(Option.getOrThrow(yield* store.get("older")).recordRevision).toBe(4)
            // The 16 pairs shared statements: without the folding, at least one more per batch in SQLite.
            const batches = counting.batches() - before.batches
            expect(counting.statements() - before.statements).toBeLessThanOrEqual(batches * 2)
          })
        ).pipe(Effect.withTracer(counting.tracer))
      }))

    it.live("a write nobody waits for is seen by the store's reads", () =>
      over(
        make,
        Effect.gen(function*() {
          const store = yield* ExecutionStore.ExecutionStore
          const runtime = yield* Effect.runtime<never>()
          for (let i = 0; i < 20; i++) {
            Runtime.runFork(runtime, store.create(record(`detached-${i}`, 0, { status: "running" })))
            expect(Option.getOrThrow(yield* store.get(`detached-${i}`)).lifecycle?.status).toBe("running")
          }
          Runtime.runFork(runtime, store.create(record("listed", 0, { status: "running" })))
          const page = yield* store.list({ status: ["running"] })
          expect(page.records.map((r) => r.requestId)).toContain("listed")
        })
      ))
  })

suite("sqlite", sqlite)
if (unavailable("postgres") === undefined) suite("postgres", postgres)

describe("record write path: the SQLite WAL", () => {
  it.live("is checkpointed into the database file by the worker thread", () =>
    Effect.suspend(() => {
      const backend = sqlite()
      return Effect.gen(function*() {
        const store = yield* ExecutionStore.ExecutionStore
        const filler = "x".repeat(8_000)
        yield* Effect.forEach(
          Array.from({ length: 100 }, (_, i) => ({ ...record(`big-${i}`, 1), finalResponse: filler })),
          (r) => store.save(r),
          { concurrency: 16, discard: true }
        )
        // About 800 KB in the WAL, under the client's own threshold (10,000 pages):
        // only the worker copies it into the file.
        let size = 0
        for (let i = 0; i < 50 && size < 800_000; i++) {
          yield* Effect.sleep("100 millis")
          size = fs.statSync(backend.file).size
        }
        expect(size).toBeGreaterThan(800_000)
        expect(Option.getOrThrow(yield* store.get("big-99")).finalResponse).toBe(filler)
      }).pipe(
        Effect.provide(
          SqlStores.layerExecutionStore({ tablePrefix: backend.prefix }).pipe(
            Layer.provide(backend.client),
            Layer.orDie
          )
        ),
        Effect.ensuring(backend.cleanup)
      )
    }))
})

describe("record write path: a request with a generated id", () => {
  it.effect("does not wait for its create, yet its record is running in the store at once and its progress within 500 ms", () =>
    Effect.suspend(() => {
      const backend = sqlite()
      return Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const tool = slowTool(started, release)
        const step = slowStep("s1")
        const agent = Agent.layerTest({
          script: { plans: [{ steps: [step], terminal: true }], synthesis: "answer" },
          tools: [tool],
          hooks: [],
          executionStore: Sqlite.layerExecutionStore({ filename: backend.file, sweepEvery: "1 hour" })
        })
        yield* Effect.gen(function*() {
          const pipeline = yield* Pipeline.Pipeline
          const store = yield* ExecutionStore.ExecutionStore
          const fiber = yield* Effect.fork(pipeline.process({ request: "q" }))
          yield* Deferred.await(started)
          const running = (yield* store.list({ status: ["running"] })).records
          expect(running.length).toBe(1)
          const id = running[0]!.requestId
          expect(running[0]!.phases).toEqual([])
          yield* TestClock.adjust("500 millis")
          const midway = Option.getOrThrow(yield* store.get(id))
          expect(midway.lifecycle?.status).toBe("running")
          expect(midway.phases.map((p) => p.running)).toEqual([["s1"]])
          yield* Deferred.succeed(release, undefined)
          const result = yield* Fiber.join(fiber)
          expect(result._tag === "Completed" && result.response.requestId).toBe(id)
          expect(Option.getOrThrow(yield* store.get(id)).lifecycle?.status).toBe("succeeded")
        }).pipe(Effect.provide(agent))
      }).pipe(Effect.ensuring(backend.cleanup))
    }))

  it.effect("whose create fails: the request is answered, the record and the log say so", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const inner = yield* ExecutionStore.makeMemory()
      const store: ExecutionStore.ExecutionStore.Service = {
        ...inner,
        create: () =>
          Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "create", detail: "database is locked" }))
      }
      const agent = Agent.layerTest({
        script: { plans: [{ steps: [], terminal: true }], synthesis: "answer" },
        tools: [],
        hooks: [],
        executionStore: Layer.succeed(ExecutionStore.ExecutionStore, store)
      })
      const result = yield* Effect.flatMap(Pipeline.Pipeline, (pipeline) => pipeline.process({ request: "q" })).pipe(
        Effect.provide(agent),
        Effect.provide(keepingWarnings(warnings))
      )
      expect(result._tag).toBe("Completed")
      const id = result._tag === "Completed" ? result.response.requestId : ""
      const stored = Option.getOrThrow(yield* inner.get(id))
      expect(stored.lifecycle?.status).toBe("succeeded")
      expect(stored.diagnostics).toContain(
        "record not created at request start: execution store create failed: database is locked"
      )
      expect(warnings.some((w) => w.includes("execution record not created"))).toBe(true)
    }))
})
