/**
 * Group commit of execution record writes (issue 20), on a SQLite file and
 * on PostgreSQL: the creates and saves of many concurrent requests go to the
 * database together, and each caller still gets its own answer — `created`
 * or `exists`, `written` or `stale` (C15 gating stays in the database), its
 * own typed error when its row fails. A caller interrupted while it waits
 * does not lose or spoil the batch; closing the store drains what was
 * submitted; a write after that fails as a store error.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Exit, Fiber, Layer, Option, Scope, Tracer } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import type { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"
import { ExecutionStore, type ExecutionStoreError } from "../../src/stores/ExecutionStore.js"
import * as ExecutionStoreSql from "../../src/stores/sql/ExecutionStoreSql.js"
import { migrate, tablesFor } from "../../src/stores/sql/migrations.js"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTablesNow, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"
import { record } from "../support/SqlRecords.js"

const revisionOf = (found: Option.Option<ExecutionRecord>) => Option.getOrUndefined(found)?.recordRevision

interface Backend {
  readonly name: "sqlite" | "postgres"
  readonly prefix: string
  readonly client: Layer.Layer<SqlClient>
  /** A row of this request id fails to insert (a trigger raises), from now on. */
  readonly poison: (requestId: string) => Effect.Effect<void, unknown, SqlClient>
  readonly cleanup: Effect.Effect<void>
}

const sqliteBackend = (options: { readonly busyTimeout?: Duration.DurationInput } = {}) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-group-"))
  const file = path.join(dir, "agent.db")
  const prefix = uniquePrefix()
  const backend: Backend & { readonly file: string } = {
    name: "sqlite",
    file,
    prefix,
    client: Layer.orDie(Sqlite.layerClient(file, options.busyTimeout ?? "5 seconds")),
    poison: (requestId) =>
      Effect.flatMap(SqlClient, (sql) =>
        sql.unsafe(
          `CREATE TRIGGER ${prefix}poison BEFORE INSERT ON ${tablesFor(prefix).records}
           WHEN NEW.request_id = '${requestId}' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END`
        )),
    cleanup: Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  }
  return backend
}

const postgresBackend = (): Backend => {
  const prefix = uniquePrefix()
  const client = postgresClient()
  return {
    name: "postgres",
    prefix,
    client,
    poison: (requestId) =>
      Effect.flatMap(SqlClient, (sql) =>
        Effect.zipRight(
          sql.unsafe(
            `CREATE FUNCTION ${prefix}poison() RETURNS trigger AS $$
             BEGIN
               IF NEW.request_id = '${requestId}' THEN RAISE EXCEPTION 'poisoned row'; END IF;
               RETURN NEW;
             END $$ LANGUAGE plpgsql`
          ),
          sql.unsafe(
            `CREATE TRIGGER ${prefix}poison BEFORE INSERT ON ${tablesFor(prefix).records}
             FOR EACH ROW EXECUTE FUNCTION ${prefix}poison()`
          )
        )),
    cleanup: Effect.flatMap(SqlClient, (sql) =>
      Effect.zipRight(
        dropTablesNow(prefix),
        sql.unsafe(`DROP FUNCTION IF EXISTS ${prefix}poison()`).pipe(Effect.orDie)
      )).pipe(Effect.provide(client))
  }
}

/** The store over a backend's client, and the client. */
const storeOf = (backend: Backend) =>
  SqlStores.layerExecutionStore({ tablePrefix: backend.prefix }).pipe(
    Layer.provideMerge(backend.client),
    Layer.orDie
  )

/** Runs `f` over a fresh backend's store, then removes the backend's tables and files. */
const over = <A, E>(
  make: () => Backend,
  f: (backend: Backend) => Effect.Effect<A, E, ExecutionStore | SqlClient>
) =>
  Effect.suspend(() => {
    const backend = make()
    return f(backend).pipe(Effect.provide(storeOf(backend)), Effect.ensuring(backend.cleanup))
  })

/**
 * A tracer that counts the statements run while it is installed: the
 * statements of the record write batches (`ExecutionStore.writeBatch`,
 * wherever they run) and the `@effect/sql` statements run outside them.
 */
const countingStatements = Effect.map(Effect.tracer, (native) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = native.span(name, parent, context, links, startTime, kind, options)
      spans.push(span)
      return span
    },
    context: (f, fiber) => native.context(f, fiber)
  })
  const batches = () => spans.filter((span) => span.name === "ExecutionStore.writeBatch")
  const inBatch = (span: Tracer.Span) =>
    span.parent._tag === "Some" && span.parent.value._tag === "Span" &&
    span.parent.value.name === "ExecutionStore.writeBatch"
  return {
    tracer,
    statements: () =>
      batches().reduce((n, span) => n + Number(span.attributes.get("db.batch.statements")), 0) +
      spans.filter((span) => span.name === "sql.execute" && !inBatch(span)).length,
    batches: () => batches().length
  }
})

const suite = (name: "sqlite" | "postgres", make: () => Backend) =>
  describe(`group commit of execution records: ${name}`, () => {
    it.live("concurrent creates share statements, and each gets its own answer (created / exists)", () =>
      Effect.gen(function*() {
        const counting = yield* countingStatements
        yield* over(make, () =>
          Effect.gen(function*() {
            const store = yield* ExecutionStore
            yield* Effect.forEach(["a", "b", "c"], (id) => store.create(record(`taken-${id}`, 0)), { discard: true })
            const before = counting.statements()
            const ids = [
              ...Array.from({ length: 29 }, (_, i) => `new-${i}`),
              ...["a", "b", "c"].map((id) => `taken-${id}`)
            ]
            const answers = yield* Effect.forEach(ids, (id) => store.create(record(id, 0, { status: "running" })), {
              concurrency: "unbounded"
            })
            expect(answers).toEqual(ids.map((id) => (id.startsWith("taken-") ? "exists" : "created")))
            // 32 creates, a handful of statements.
            expect(counting.statements() - before).toBeLessThanOrEqual(4)
            expect(counting.statements() - before).toBeGreaterThanOrEqual(1)
            for (const id of ids) {
              const stored = Option.getOrThrow(yield* store.get(id))
              expect(stored.lifecycle?.status).toBe(id.startsWith("taken-") ? "succeeded" : "running")
            }
          })).pipe(Effect.withTracer(counting.tracer))
      }))

    it.live("a save over the record create wrote is one statement (no read, no merge)", () =>
      Effect.gen(function*() {
        const counting = yield* countingStatements
        yield* over(make, () =>
          Effect.gen(function*() {
            const store = yield* ExecutionStore
            expect(yield* store.create(record("r", 0, { status: "running" }))).toBe("created")
            const before = counting.statements()
            const batches = counting.batches()
            expect(yield* store.save(record("r", 7, { hooks: 3, writer: "w" }))).toBe("written")
            expect(counting.statements() - before).toBe(1)
            expect(counting.batches() - batches).toBe(1)
            expect(revisionOf(yield* store.get("r"))).toBe(7)
          })).pipe(Effect.withTracer(counting.tracer))
      }))

    it.live("C15 under batching: one request's snapshots in one batch keep their order; stale ones are refused; a newer one from another writer is merged in", () =>
      over(make, () =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          yield* store.create(record("r", 0, { status: "running" }))
          const snapshots = [
            record("r", 3, { hooks: 1, writer: "w" }),
            record("r", 1, { hooks: 1, writer: "w" }),
            record("r", 5, { hooks: 2, writer: "w" }),
            record("r", 2, { hooks: 1, writer: "w" }),
            record("r", 4, { hooks: 2, writer: "w" }),
            // Another writer (a resumed request): its newer snapshot needs a merge.
            record("r", 6, { hooks: 2, writer: "x" })
          ]
          const answers = yield* Effect.forEach(snapshots, (snapshot) => store.save(snapshot), {
            concurrency: "unbounded"
          })
          expect(answers).toEqual(["written", "stale", "written", "stale", "stale", "written"])
          const stored = Option.getOrThrow(yield* store.get("r"))
          expect(stored.recordRevision).toBe(6)
          expect(stored.finalResponse).toBe("rev-6")
          // Late older snapshots, alone or batched, never regress it.
          const late = yield* Effect.forEach([5, 6, 2], (revision) =>
            store.save(record("r", revision, { writer: "w" })), {
            concurrency: "unbounded"
          })
          expect(late).toEqual(["stale", "stale", "stale"])
          expect(revisionOf(yield* store.get("r"))).toBe(6)
        })))

    it.live("a row that fails in a batch fails only its own write, as an ExecutionStoreError; the others get their results", () =>
      over(make, (backend) =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          yield* backend.poison("poison")
          yield* store.create(record("saved", 0, { status: "running" }))
          const writes: Array<Effect.Effect<string, ExecutionStoreError>> = [
            store.create(record("one", 0, { status: "running" })),
            store.save(record("saved", 4, { hooks: 1, writer: "w" })),
            store.create(record("poison", 0, { status: "running" })),
            store.create(record("two", 0, { status: "running" })),
            store.save(record("three", 2, { writer: "w" }))
          ]
          const exits = yield* Effect.forEach(writes, Effect.exit, { concurrency: "unbounded" })
          expect(exits.map((exit) => (Exit.isSuccess(exit) ? exit.value : "failed"))).toEqual([
            "created",
            "written",
            "failed",
            "created",
            "written"
          ])
          const failed = exits[2]!
          if (Exit.isSuccess(failed)) throw new Error("the poisoned write succeeded")
          const error = yield* Effect.flip(failed)
          expect(error._tag).toBe("ExecutionStoreError")
          expect(error.operation).toBe("create")
          expect(error.detail).toContain("poisoned row")
          expect(Option.isNone(yield* store.get("poison"))).toBe(true)
          expect(revisionOf(yield* store.get("saved"))).toBe(4)
          expect(revisionOf(yield* store.get("one"))).toBe(0)
          expect(revisionOf(yield* store.get("three"))).toBe(2)
        })))

    it.live("a caller interrupted while its write waits: the batch is written whole, the others get their answers", () =>
      over(make, () =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          const fibers = yield* Effect.forEach(
            Array.from({ length: 8 }, (_, i) => i),
            (i) => Effect.fork(store.create(record(`r${i}`, 0, { status: "running" })))
          )
          // Every create is submitted (the forks ran up to their wait), none answered yet.
          yield* Effect.yieldNow()
          const victim = fibers[3]!
          yield* Fiber.interrupt(victim)
          expect(Exit.isInterrupted(yield* Fiber.await(victim))).toBe(true)
          const others = yield* Fiber.joinAll(fibers.filter((fiber) => fiber !== victim))
          expect(others).toEqual(Array.from({ length: 7 }, () => "created"))
          // The interrupted caller's write went with its batch; the store goes on.
          for (let i = 0; i < 8; i++) expect(revisionOf(yield* store.get(`r${i}`))).toBe(0)
          expect(yield* store.save(record("r3", 1, { writer: "w" }))).toBe("written")
          expect(yield* store.create(record("r3", 0))).toBe("exists")
        })))

    it.live("closing the store drains the writes submitted so far; a write after that is an ExecutionStoreError", () =>
      Effect.gen(function*() {
        const backend = make()
        yield* Effect.gen(function*() {
          const tables = tablesFor(backend.prefix)
          yield* migrate(tables)
          // One write per batch: at close, most of them are still waiting.
          const scope = yield* Scope.make()
          const store = yield* ExecutionStoreSql.make(tables, { maxBatch: 1 }).pipe(Scope.extend(scope))
          const fibers = yield* Effect.forEach(
            Array.from({ length: 20 }, (_, i) => i),
            (i) => Effect.fork(store.save(record(`d${i}`, 1, { writer: "w" })))
          )
          yield* Effect.yieldNow()
          yield* Scope.close(scope, Exit.void)
          expect(yield* Fiber.joinAll(fibers)).toEqual(Array.from({ length: 20 }, () => "written"))
          const late = yield* Effect.flip(store.create(record("late", 0)))
          expect(late._tag).toBe("ExecutionStoreError")
          expect(late.detail).toContain("closed")

          // Every drained write is in the database.
          const reopened = yield* ExecutionStoreSql.make(tables)
          for (let i = 0; i < 20; i++) expect(revisionOf(yield* reopened.get(`d${i}`))).toBe(1)
          expect(Option.isNone(yield* reopened.get("late"))).toBe(true)
        }).pipe(Effect.scoped, Effect.provide(backend.client), Effect.ensuring(backend.cleanup))
      }))
  })

suite("sqlite", () => sqliteBackend())

describe("group commit of execution records: sqlite locked by another connection", () => {
  interface Connection {
    exec(sql: string): void
    close(): void
  }
  const Database = createRequire(import.meta.url)("better-sqlite3") as new(file: string) => Connection

  it.live(
    "a database-wide failure (SQLITE_BUSY) fails every write of the batch at once, not one busy wait per write",
    () =>
      Effect.gen(function*() {
        const backend = sqliteBackend({ busyTimeout: "300 millis" })
        yield* Effect.gen(function*() {
          const store = yield* ExecutionStore
          const other = new Database(backend.file)
          other.exec("BEGIN EXCLUSIVE")
          const started = Date.now()
          const exits = yield* Effect.forEach(
            Array.from({ length: 16 }, (_, i) => store.create(record(`locked-${i}`, 0))),
            Effect.exit,
            { concurrency: "unbounded" }
          )
          const elapsed = Date.now() - started
          other.exec("COMMIT")
          other.close()
          for (const exit of exits) {
            if (Exit.isSuccess(exit)) throw new Error("a write succeeded under the lock")
            const error = yield* Effect.flip(exit)
            expect(error.operation).toBe("create")
            expect(error.detail).toContain("SQLITE_BUSY")
          }
          // One write at a time would wait 16 × 300 ms.
          expect(elapsed).toBeLessThan(2_400)
          expect(yield* store.create(record("locked-0", 0))).toBe("created")
        }).pipe(Effect.provide(storeOf(backend)), Effect.ensuring(backend.cleanup))
      }),
    20_000
  )
})

const skipped = unavailable("postgres")
if (skipped === undefined) {
  suite("postgres", postgresBackend)

  describe("group commit of execution records: postgres asyncCommit", () => {
    it.live("record writes commit without waiting for the WAL flush; the store answers as before", () =>
      Effect.gen(function*() {
        const backend = postgresBackend()
        yield* Effect.gen(function*() {
          const store = yield* ExecutionStore
          const answers = yield* Effect.forEach(
            Array.from({ length: 10 }, (_, i) => store.create(record(`a${i}`, 0, { status: "running" }))),
            (create) => create,
            { concurrency: "unbounded" }
          )
          expect(answers).toEqual(Array.from({ length: 10 }, () => "created"))
          expect(yield* store.save(record("a0", 2, { hooks: 1, writer: "w" }))).toBe("written")
          expect(yield* store.save(record("a0", 1, { writer: "w" }))).toBe("stale")
          expect(yield* store.create(record("a1", 0))).toBe("exists")
          expect(revisionOf(yield* store.get("a0"))).toBe(2)
          // Local to the record writes' own transactions: the session is unchanged.
          const sql = yield* SqlClient
          const [setting] = yield* sql<{ readonly synchronous_commit: string }>`SHOW synchronous_commit`
          expect(setting?.synchronous_commit).toBe("on")
        }).pipe(
          Effect.provide(
            SqlStores.layerExecutionStore({ tablePrefix: backend.prefix, asyncCommit: true }).pipe(
              Layer.provideMerge(backend.client),
              Layer.orDie
            )
          ),
          Effect.ensuring(backend.cleanup)
        )
      }))
  })
} else {
  describe("group commit of execution records: postgres", () => {
    it.skip(`skipped: ${skipped}`, () => {})
  })
}
