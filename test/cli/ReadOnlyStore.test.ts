/**
 * The viewer command's stores (`src/cli/internal/ReadOnlyStore.ts`): they
 * read what an agent's stores wrote — SQLite and PostgreSQL — and can write
 * nothing: every writing operation fails in the database driver, and a
 * SQLite file keeps its bytes. A store without an agent's tables is a clear
 * error, not a fresh migration.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { ExecutionRecord, ExecutionStore } from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ReadOnlyStore from "../../src/cli/internal/ReadOnlyStore.js"
import { dropTables, postgresClient, postgresUrl, unavailable, uniquePrefix } from "../support/Backends.js"

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex")

const record = (requestId: string, lifecycle: object = { status: "succeeded", endedAt: Date.now() }) =>
  ExecutionRecord.decodeUnknown({
    requestId,
    request: "What is the stock quote for ACME?",
    lifecycle: { startedAt: Date.now() - 10, ...lifecycle }
  }).pipe(Effect.orDie)

/**
 * What an agent leaves for its own store to clean up: an expired record
 * (`purgeExpired` must delete it) and a running one whose owner's lease ran
 * out (`sweepAbandoned` must mark it) — so both are writes a read-only store
 * has to refuse, not no-ops.
 */
const leftovers = (store: ExecutionStore.ExecutionStore.Service, expiring: ExecutionStore.ExecutionStore.Service) =>
  Effect.gen(function*() {
    yield* expiring.save(yield* record("expired-1"))
    yield* store.save(yield* record("orphan-1", { status: "running", owner: "gone:1", leaseExpiresAt: Date.now() - 1 }))
    yield* store.save(yield* record("written-1"))
    // The short retention's record has expired by the time the reader looks.
    yield* Effect.sleep("20 millis")
  })

const shortRetention = { retention: { normal: "1 millis", error: "1 millis" } } as const

/** Every write the store has, each expected to fail. */
const writes = (
  store: ExecutionStore.ExecutionStore.Service,
  sample: ExecutionRecord.ExecutionRecord
): ReadonlyArray<Effect.Effect<unknown, { readonly message: string }>> => [
  store.create({ ...sample, requestId: "new-one" }),
  store.save({ ...sample, recordRevision: sample.recordRevision + 10 }),
  store.update(sample.requestId, (r) => ({ ...r, request: "changed" })),
  store.purgeExpired,
  store.sweepAbandoned
]

const readBack = (layer: Layer.Layer<ExecutionStore.ExecutionStore, ExecutionStore.ExecutionStoreError>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(layer)
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    const page = yield* store.list()
    const found = yield* store.get("written-1")
    const refused: Array<string> = []
    for (const write of writes(store, Option.getOrThrow(found))) {
      const outcome = yield* Effect.either(write)
      refused.push(outcome._tag === "Left" ? outcome.left.message : `written: ${String(outcome.right)}`)
    }
    return { ids: page.records.map((r) => r.requestId).sort(), found: Option.map(found, (r) => r.request), refused }
  })

describe("ReadOnlyStore: SQLite", () => {
  it.scopedLive("reads an agent's file, writes nothing: every write fails, the file keeps its bytes", () =>
    Effect.gen(function*() {
      const folder = mkdtempSync(join(tmpdir(), "eap-readonly-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(folder, { recursive: true, force: true })))
      const file = join(folder, "agent.db")
      // An agent's stores write the file, then close it.
      yield* Effect.scoped(
        Effect.gen(function*() {
          const store = Context.get(yield* Layer.build(Sqlite.layer({ filename: file })), ExecutionStore.ExecutionStore)
          const expiring = Context.get(
            yield* Layer.build(Sqlite.layerExecutionStore({ filename: file, ...shortRetention })),
            ExecutionStore.ExecutionStore
          )
          yield* leftovers(store, expiring)
        })
      ).pipe(Effect.orDie)
      const before = sha256(file)
      const read = yield* readBack(ReadOnlyStore.layer(ReadOnlyStore.parse(file)))
      expect(read.ids).toEqual(["orphan-1", "written-1"])
      expect(read.found).toEqual(Option.some("What is the stock quote for ACME?"))
      expect(read.refused).toHaveLength(5)
      for (const message of read.refused) expect(message).toMatch(/SQLITE_READONLY/)
      expect(sha256(file)).toBe(before)
    }))

  it.scopedLive("a missing file, or a database no agent wrote: an error that says so, nothing created", () =>
    Effect.gen(function*() {
      const folder = mkdtempSync(join(tmpdir(), "eap-readonly-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(folder, { recursive: true, force: true })))
      const missing = yield* Effect.flip(Layer.build(ReadOnlyStore.layer(ReadOnlyStore.parse(join(folder, "none.db")))))
      expect(missing.message).toContain("none.db does not exist: nothing was recorded there yet")
      const empty = join(folder, "empty.db")
      writeFileSync(empty, "")
      const notAgents = yield* Effect.flip(Layer.build(ReadOnlyStore.layer(ReadOnlyStore.parse(`sqlite:${empty}`))))
      expect(notAgents.message).toMatch(/SQLite file .*empty\.db holds no agent records \(tables eap_execution_records/)
      expect(readFileSync(empty).length).toBe(0)
    }))
})

describe("ReadOnlyStore: locations", () => {
  it.effect("--store values and the store configuration name a location; memory names none", () =>
    Effect.gen(function*() {
      expect(ReadOnlyStore.parse("./data/agent.db")).toEqual({ _tag: "sqlite", path: "./data/agent.db" })
      expect(ReadOnlyStore.parse("sqlite:/tmp/a.db")).toEqual({ _tag: "sqlite", path: "/tmp/a.db" })
      const pg = ReadOnlyStore.parse("postgresql://u:secret@db.example:5433/agents")
      expect(pg._tag).toBe("postgres")
      expect(ReadOnlyStore.describe(pg)).toBe("PostgreSQL db.example:5433/agents")
      const settings = {
        backend: "sqlite" as const,
        sqlitePath: "./x.db",
        databaseUrl: Option.none(),
        checkpointKey: Option.none(),
        activityBackend: "sqlite" as const,
        redisUrl: Option.none()
      }
      expect(yield* ReadOnlyStore.fromSettings(settings)).toEqual({ _tag: "sqlite", path: "./x.db" })
      const url = Redacted.make("postgres://a@b/c")
      expect(yield* ReadOnlyStore.fromSettings({ ...settings, backend: "postgres", databaseUrl: Option.some(url) }))
        .toEqual({ _tag: "postgres", url })
      expect((yield* Effect.flip(ReadOnlyStore.fromSettings({ ...settings, backend: "postgres" }))).message).toContain(
        "AGENT_STORE=postgres needs DATABASE_URL"
      )
      expect((yield* Effect.flip(ReadOnlyStore.fromSettings({ ...settings, backend: "memory" }))).message).toContain(
        "AGENT_STORE=memory keeps records inside the agent's own process"
      )
    }))
})

const skipped = unavailable("postgres")
if (skipped !== undefined) {
  describe("ReadOnlyStore: PostgreSQL", () => it.skip(`skipped: ${skipped}`, () => {}))
} else {
  describe("ReadOnlyStore: PostgreSQL", () => {
    it.scopedLive("reads an agent's tables in read-only sessions: every write is refused by the server", () =>
      Effect.gen(function*() {
        const prefix = uniquePrefix()
        yield* Effect.scoped(
          Effect.gen(function*() {
            const client = postgresClient()
            yield* Layer.build(Layer.scopedDiscard(dropTables(prefix)).pipe(Layer.provide(client)))
            const context = yield* Layer.build(
              Postgres.SqlStores.layer({ tablePrefix: prefix }).pipe(Layer.provide(client), Layer.orDie)
            )
            const expiring = yield* Layer.build(
              Postgres.SqlStores.layerExecutionStore({ tablePrefix: prefix, ...shortRetention }).pipe(
                Layer.provide(client),
                Layer.orDie
              )
            )
            yield* leftovers(
              Context.get(context, ExecutionStore.ExecutionStore),
              Context.get(expiring, ExecutionStore.ExecutionStore)
            )
            const read = yield* readBack(ReadOnlyStore.layer(ReadOnlyStore.parse(postgresUrl!), prefix))
            expect(read.ids).toEqual(["orphan-1", "written-1"])
            expect(read.found).toEqual(Option.some("What is the stock quote for ACME?"))
            expect(read.refused).toHaveLength(5)
            for (const message of read.refused) expect(message).toMatch(/read-only transaction/)
            // Nothing changed: the agent's own store reads the record as it wrote it.
            const again = yield* Context.get(context, ExecutionStore.ExecutionStore).get("written-1")
            expect(Option.map(again, (r) => [r.request, r.recordRevision])).toEqual(Option.some([
              "What is the stock quote for ACME?",
              0
            ]))
          })
        ).pipe(Effect.orDie)
      }))
  })
}
