/**
 * A request's create with no fiber waiting for it (issue 20,
 * `stores/internal/detachedCreates.ts`): a request whose id the pipeline
 * generates hands its record's create to a SQL store directly — no fiber of
 * its own — and the store encodes the create's body only if its row is
 * written as it is (a create and its save in one batch are one row).
 *
 * - the group commit answers a detached write like any other, in order,
 *   and a callback that throws does not stop it;
 * - a deferred body is not encoded when the create is folded into its save,
 *   encoded once when it is written alone, and a body that cannot be encoded
 *   fails only its own write;
 * - the stores' detached create writes the row (reads see it), and reports a
 *   failed create once;
 * - through the pipeline: no fiber for the create on a SQL store (a wrapped
 *   one gets the forked create), and a create that fails is in the record
 *   and the log.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { Agent, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { encodeBody } from "../../src/domain/internal/recordEncode.js"
import { defaultRetention } from "../../src/stores/contract/ExecutionStore.js"
import { detachedCreateOf } from "../../src/stores/internal/detachedCreates.js"
import * as GroupCommit from "../../src/stores/sql/internal/groupCommit.js"
import { columnsOf } from "../../src/stores/sql/internal/recordRow.js"
import * as RecordWrites from "../../src/stores/sql/internal/recordWrites.js"
import { migrate, tablesFor } from "../../src/stores/sql/migrations.js"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTablesNow, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { slowStep, slowTool } from "../support/SlowTool.js"
import { record } from "../support/SqlRecords.js"
import { StartCounter } from "../support/StartCounter.js"
import { keepingWarnings } from "../support/StoreTrouble.js"

interface Backend {
  readonly prefix: string
  readonly client: Layer.Layer<SqlClient>
  readonly cleanup: Effect.Effect<void>
}

const sqlite = (): Backend => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-detached-"))
  return {
    prefix: uniquePrefix(),
    client: Layer.orDie(Sqlite.layerClient(path.join(dir, "agent.db"))),
    cleanup: Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  }
}

/** The execution store over a backend's client. */
const storeOver = (backend: Backend) =>
  SqlStores.layerExecutionStore({ tablePrefix: backend.prefix }).pipe(Layer.provide(backend.client), Layer.orDie)

const postgres = (): Backend => {
  const prefix = uniquePrefix()
  const client = postgresClient()
  return { prefix, client, cleanup: dropTablesNow(prefix).pipe(Effect.provide(client)) }
}

/** A create whose body counts its encodings (and throws when `broken`). */
const countedCreate = (requestId: string, counter: { encodes: number }, broken = false) => {
  const r = record(requestId, 0, { status: "running" })
  return {
    kind: "create" as const,
    columns: columnsOf(r, Date.now(), defaultRetention, () => {
      counter.encodes++
      if (broken) throw new Error("cannot encode this body")
      return encodeBody(r)
    }, true)
  }
}

const saveOf = (requestId: string, revision: number) => {
  const r = record(requestId, revision, { writer: "w" })
  return { kind: "save" as const, columns: columnsOf(r, Date.now(), defaultRetention, encodeBody(r), true) }
}

const suite = (name: string, make: () => Backend) =>
  describe(`a detached create: ${name}`, () => {
    it.live("folded into its save in one batch, its body is never encoded; alone, once; unencodable, only it fails", () =>
      Effect.suspend(() => {
        const backend = make()
        return Effect.gen(function*() {
          const tables = tablesFor(backend.prefix)
          yield* migrate(tables)
          const sql = yield* SqlClient
          const writes = yield* RecordWrites.make(sql, tables.records)
          const answers: Array<Exit.Exit<boolean, unknown>> = []

          // A create and its save submitted together: one batch, one row, no encoding.
          const folded = { encodes: 0 }
          writes.submitDetached(countedCreate("folded", folded), (exit) => answers.push(exit))
          expect(yield* writes.submit(saveOf("folded", 3))).toBe(true)
          expect(answers.map(Exit.isSuccess)).toEqual([true])
          expect(folded.encodes).toBe(0)

          // A create on its own is written as it is: encoded once.
          const alone = { encodes: 0 }
          writes.submitDetached(countedCreate("alone", alone), (exit) => answers.push(exit))
          yield* writes.settled
          expect(alone.encodes).toBe(1)
          expect(answers.length).toBe(2)
          expect(Exit.isSuccess(answers[1]!) && answers[1].value).toBe(true)

          // A body that cannot be encoded fails its own write; the batch's others are written.
          const broken = { encodes: 0 }
          writes.submitDetached(countedCreate("broken", broken, true), (exit) => answers.push(exit))
          const other = { encodes: 0 }
          writes.submitDetached(countedCreate("other", other), (exit) => answers.push(exit))
          yield* writes.settled
          expect([broken.encodes, other.encodes]).toEqual([1, 1])
          const failed = answers[2]!
          expect(Exit.isFailure(failed)).toBe(true)
          if (Exit.isFailure(failed)) {
            expect(failed.cause.toString()).toContain("cannot encode this body")
          }
          expect(Exit.isSuccess(answers[3]!)).toBe(true)

          const rows = yield* sql<{ readonly request_id: string; readonly revision: number | string }>`
            SELECT request_id, revision FROM ${sql(tables.records)} ORDER BY request_id`
          expect(rows.map((row) => [row.request_id, Number(row.revision)])).toEqual([
            ["alone", 0],
            ["folded", 3],
            ["other", 0]
          ])
        }).pipe(Effect.scoped, Effect.provide(backend.client), Effect.ensuring(backend.cleanup))
      }))

    it.live("the store's detached create: the row is there for reads; a failed one is reported once", () =>
      Effect.suspend(() => {
        const backend = make()
        return Effect.gen(function*() {
          const store = yield* ExecutionStore.ExecutionStore
          const submit = detachedCreateOf(store)
          if (submit === undefined) throw new Error("the SQL store has no detached create")
          const failures: Array<ExecutionStore.ExecutionStoreError> = []
          submit(record("d1", 0, { status: "running" }), Date.now(), (error) => failures.push(error))
          // Reads wait for the writes submitted before them.
          expect(Option.getOrThrow(yield* store.get("d1")).lifecycle?.status).toBe("running")
          // A live row has this id: a create of it is refused — not a failure (a generated id names no row).
          submit(record("d1", 0, { status: "running" }), Date.now(), (error) => failures.push(error))
          expect(Option.getOrThrow(yield* store.get("d1")).lifecycle?.status).toBe("running")
          expect(failures).toEqual([])
          // Below: once the store is closed, a create fails, once.
          return { submit, failures }
        }).pipe(
          Effect.provide(storeOver(backend)),
          Effect.flatMap(({ failures, submit }) =>
            Effect.sync(() => {
              submit(record("late", 0, { status: "running" }), Date.now(), (error) => failures.push(error))
              expect(failures.map((error) => [error.operation, error.detail])).toEqual([[
                "create",
                "the store is closed"
              ]])
            })
          ),
          Effect.ensuring(backend.cleanup)
        )
      }))
  })

suite("sqlite", sqlite)
if (unavailable("postgres") === undefined) suite("postgres", postgres)

describe("a detached write in the group commit", () => {
  it.effect("is answered in order with the others; a callback that throws stops nothing; after close it fails", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const written: Array<number> = []
      const commit = yield* GroupCommit.make<number, number, string>({
        maxBatch: 4,
        write: (items) =>
          Effect.sync(() => {
            written.push(...items)
            return items.map((item) => Exit.succeed(item * 10))
          }),
        closed: (item) => `closed ${item}`
      }).pipe(Scope.extend(scope))
      const answers: Array<Exit.Exit<number, string>> = []
      commit.submitDetached(1, () => {
        throw new Error("a callback that throws")
      })
      commit.submitDetached(2, (exit) => answers.push(exit))
      expect(yield* commit.submit(3)).toBe(30)
      expect(written).toEqual([1, 2, 3])
      expect(answers).toEqual([Exit.succeed(20)])
      yield* Scope.close(scope, Exit.void)
      commit.submitDetached(4, (exit) => answers.push(exit))
      expect(answers[1]).toEqual(Exit.fail("closed 4"))
      expect(written).toEqual([1, 2, 3])
    }))
})

describe("a detached create through the pipeline (SQLite)", () => {
  it.live("a generated id's create starts no fiber on a SQL store; a wrapped store's create is forked", () =>
    Effect.suspend(() => {
      const backend = sqlite()
      return Effect.gen(function*() {
        const store = yield* ExecutionStore.ExecutionStore
        const fibersStarted = (service: ExecutionStore.ExecutionStore.Service) =>
          Effect.gen(function*() {
            const supervisor = new StartCounter()
            const result = yield* Effect.flatMap(Pipeline.Pipeline, (pipeline) => pipeline.process({ request: "q" }))
              .pipe(
                Effect.supervised(supervisor),
                Effect.provide(Agent.layerTest({
                  script: { plans: [{ steps: [], terminal: true }], synthesis: "answer" },
                  tools: [],
                  hooks: [],
                  executionStore: Layer.succeed(ExecutionStore.ExecutionStore, service)
                }))
              )
            const id = result._tag === "Completed" ? result.response.requestId : ""
            expect(Option.getOrThrow(yield* store.get(id)).lifecycle?.status).toBe("succeeded")
            return supervisor.started
          })
        const direct = yield* fibersStarted(store)
        // The same store behind a wrapper: the pipeline cannot hand it the create.
        const forked = yield* fibersStarted({ ...store })
        expect(forked).toBe(direct + 1)
      }).pipe(
        Effect.provide(storeOver(backend)),
        Effect.ensuring(backend.cleanup)
      )
    }))

  it.live("a create the database refuses: the request is answered, the record and the log say so", () =>
    Effect.suspend(() => {
      const backend = sqlite()
      const warnings: Array<string> = []
      return Effect.gen(function*() {
        const sql = yield* SqlClient
        const started = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // Every running row is refused: the create; the final write (succeeded) is not.
        yield* sql.unsafe(
          `CREATE TRIGGER ${backend.prefix}refuse BEFORE INSERT ON ${tablesFor(backend.prefix).records}
           WHEN NEW.status = 'running' BEGIN SELECT RAISE(ABORT, 'running rows refused'); END`
        )
        const tool = slowTool(started, release)
        const step = slowStep("s1")
        const store = yield* ExecutionStore.ExecutionStore
        const result = yield* Effect.gen(function*() {
          const pipeline = yield* Pipeline.Pipeline
          const fiber = yield* Effect.fork(pipeline.process({ request: "q" }))
          yield* Deferred.await(started)
          // The create is written (and refused) while the request waits in its tool.
          for (let i = 0; i < 200 && !warnings.some((w) => w.includes("execution record not created")); i++) {
            yield* Effect.sleep("10 millis")
          }
          yield* Deferred.succeed(release, undefined)
          return yield* Fiber.join(fiber)
        }).pipe(
          Effect.provide(Agent.layerTest({
            script: { plans: [{ steps: [step], terminal: true }], synthesis: "answer" },
            tools: [tool],
            hooks: [],
            executionStore: Layer.succeed(ExecutionStore.ExecutionStore, store)
          }))
        )
        expect(result._tag).toBe("Completed")
        const id = result._tag === "Completed" ? result.response.requestId : ""
        const stored = Option.getOrThrow(yield* store.get(id))
        expect(stored.lifecycle?.status).toBe("succeeded")
        expect(
          stored.diagnostics.some((d) =>
            d.startsWith("record not created at request start:") && d.includes("running rows refused")
          )
        ).toBe(true)
        expect(warnings.filter((w) => w.includes("execution record not created")).length).toBe(1)
      }).pipe(
        Effect.provide(
          SqlStores.layerExecutionStore({ tablePrefix: backend.prefix }).pipe(
            Layer.provideMerge(backend.client),
            Layer.orDie
          )
        ),
        Effect.provide(keepingWarnings(warnings)),
        Effect.ensuring(backend.cleanup)
      )
    }))
})
