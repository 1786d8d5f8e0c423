/**
 * Issue class 6, stores start safely:
 *
 * - several agent processes starting at once on a fresh database all come
 *   up. Their migrations are serialized across processes — SQLite by a
 *   `BEGIN IMMEDIATE` transaction (the write lock, waited for under the busy
 *   timeout), PostgreSQL by an advisory lock — so no process uses a table
 *   another one is still creating (`no such table`) or gives up on a lock it
 *   should have waited for (`database is locked`). Each worker is a real OS
 *   process (`test/support/processes/storeStartup.ts`) that stays alive
 *   across trials and opens every trial's fresh database at one shared
 *   instant, so the processes really do race;
 * - a store that cannot write or open says why: its warnings and errors carry
 *   the driver's own message (`SQLITE_READONLY: attempt to write a readonly
 *   database`), not only the wrapper's "Failed to execute statement". The
 *   read-only cases run in a process file modes apply to (an unprivileged
 *   user when this test runs as root).
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ExecutionStore } from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tablesFor } from "../../src/stores/sql/migrations.js"
import { dropTablesNow, postgresClient, postgresUrl, unavailable, uniquePrefix } from "../support/Backends.js"
import { start, type StartOptions, type TestProcess } from "../support/processes/ChildProcess.js"
import type { Trial } from "../support/processes/storeStartup.js"

/** The part of better-sqlite3 this test uses to read what the processes left. */
interface Connection {
  prepare(sql: string): { all(): Array<Record<string, unknown>> }
  exec(sql: string): void
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new(
  file: string,
  options?: { readonly readonly?: boolean }
) => Connection

/** Every migration the stores have, by id. */
const allMigrations = [1, 2, 3, 4, 5]

interface Outcome {
  readonly trial: number
  readonly failures: ReadonlyArray<string>
}

/**
 * Runs `trials` trials over `workers`: each trial's store is opened by every
 * worker at one instant; returns what went wrong in each (nothing, when all
 * opened and read back their own record and signal).
 */
const race = async (
  workers: ReadonlyArray<TestProcess>,
  trials: number,
  storeOf: (trial: number) => Trial["store"],
  check: (trial: number, store: Trial["store"]) => Promise<ReadonlyArray<string>>
): Promise<ReadonlyArray<Outcome>> => {
  const outcomes: Array<Outcome> = []
  for (let trial = 0; trial < trials; trial++) {
    const store = storeOf(trial)
    // Far enough ahead that every worker has the line before the instant comes.
    const command: Trial = { trial, store, startAt: Date.now() + 40 }
    for (const worker of workers) worker.send(command)
    const events = await Promise.all(workers.map((w) => w.next(["opened", "failed"], 60_000)))
    const failures: Array<string> = []
    for (const event of events) {
      if (event.event === "failed") failures.push(`process ${event.pid}: ${event.error}`)
      else if (!(event.created === "created" && event.readBack && event.noCheckpoint && event.sawOwnSignal)) {
        failures.push(`process ${event.pid}: opened but read back ${JSON.stringify(event)}`)
      }
    }
    failures.push(...await check(trial, store))
    outcomes.push({ trial, failures })
  }
  return outcomes
}

const summary = (outcomes: ReadonlyArray<Outcome>): string => {
  const failed = outcomes.filter((o) => o.failures.length > 0)
  return failed.length === 0
    ? `${outcomes.length} trials, all processes started`
    : `${failed.length} of ${outcomes.length} trials failed:\n` +
      failed.map((o) => `  trial ${o.trial}: ${o.failures.join("; ")}`).join("\n")
}

const startWorkers = async (count: number): Promise<ReadonlyArray<TestProcess>> => {
  const workers = Array.from({ length: count }, () => start("./storeStartup.ts"))
  // Generous: eight processes loading at once on a busy two-core machine are slow to start.
  await Promise.all(workers.map((w) => w.next("ready", 150_000)))
  return workers
}

const stopWorkers = async (workers: ReadonlyArray<TestProcess>) => {
  for (const w of workers) w.end()
  await Promise.all(workers.map((w) => w.exited))
}

const postgresSkipped = unavailable("postgres")

describe("store startup: processes racing on a fresh database", () => {
  // One pool of worker processes for both backends: starting eight tsx
  // processes is most of this file's time.
  const processes = 8
  let workers: ReadonlyArray<TestProcess> = []
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-startup-"))
  const prefixes: Array<string> = []
  beforeAll(async () => {
    workers = await startWorkers(processes)
  }, 180_000)
  afterAll(async () => {
    await stopWorkers(workers)
    fs.rmSync(dir, { recursive: true, force: true })
    if (prefixes.length > 0) {
      await Effect.runPromise(
        Effect.provide(Effect.forEach(prefixes, dropTablesNow, { discard: true }), postgresClient())
      )
    }
  })

  const sqliteTrials = 20
  it(
    `store startup: ${processes} processes opening one fresh SQLite file at once all succeed (${sqliteTrials} trials)`,
    async () => {
      const outcomes = await race(
        workers,
        sqliteTrials,
        (trial) => ({ sqlite: path.join(dir, `trial-${trial}`, "agent.db") }),
        async (_trial, store) => {
          if (!("sqlite" in store)) return ["not a SQLite trial"]
          const db = new Database(store.sqlite, { readonly: true })
          try {
            const tables = tablesFor()
            const migrations = db.prepare(`SELECT migration_id FROM ${tables.migrations} ORDER BY migration_id`).all()
            const records = db.prepare(`SELECT request_id FROM ${tables.records}`).all()
            const problems: Array<string> = []
            const ids = migrations.map((m) => Number(m.migration_id))
            if (JSON.stringify(ids) !== JSON.stringify(allMigrations)) {
              problems.push(
                `migrations ${JSON.stringify(ids)}`
              )
            }
            if (records.length !== processes) problems.push(`${records.length} records, not ${processes}`)
            return problems
          } finally {
            db.close()
          }
        }
      )
      expect(summary(outcomes)).toBe(`${sqliteTrials} trials, all processes started`)
    },
    120_000
  )

  const postgresTrials = 10
  it.skipIf(postgresSkipped !== undefined)(
    `store startup: ${processes} processes migrating one fresh PostgreSQL table prefix at once all succeed (${postgresTrials} trials)${
      postgresSkipped === undefined ? "" : ` (skipped: ${postgresSkipped})`
    }`,
    async () => {
      const outcomes = await race(
        workers,
        postgresTrials,
        () => {
          const tablePrefix = uniquePrefix()
          prefixes.push(tablePrefix)
          return { postgres: postgresUrl ?? "", tablePrefix }
        },
        (_trial, store) => {
          if (!("postgres" in store)) return Promise.resolve(["not a PostgreSQL trial"])
          const tables = tablesFor(store.tablePrefix)
          return Effect.runPromise(
            Effect.gen(function*() {
              const sql = yield* SqlClient
              const migrations = yield* sql<{ readonly migration_id: number }>`
                SELECT migration_id FROM ${sql(tables.migrations)} ORDER BY migration_id`
              const records = yield* sql`SELECT request_id FROM ${sql(tables.records)}`
              const problems: Array<string> = []
              const ids = migrations.map((m) => Number(m.migration_id))
              if (JSON.stringify(ids) !== JSON.stringify(allMigrations)) {
                problems.push(`migrations ${JSON.stringify(ids)}`)
              }
              if (records.length !== processes) problems.push(`${records.length} records, not ${processes}`)
              return problems
            }).pipe(
              Effect.catchAll((error) => Effect.succeed([`cannot read the tables: ${error.message}`])),
              Effect.provide(postgresClient())
            )
          )
        }
      )
      expect(summary(outcomes)).toBe(`${postgresTrials} trials, all processes started`)
    },
    120_000
  )
})

/**
 * How to start a process that file modes apply to: as root, an unprivileged
 * user (who must be able to read this checkout); otherwise as ourselves.
 * Undefined options and a reason when neither is possible here.
 */
const unprivileged = (): { readonly options: StartOptions } | { readonly skip: string } => {
  if (process.getuid?.() !== 0) return { options: {} }
  const nobody = 65534
  // Every folder down to the checkout must be searchable, and its files readable, by others.
  const root = fileURLToPath(new URL("../..", import.meta.url))
  for (let at = root;; at = path.dirname(at)) {
    if ((fs.statSync(at).mode & 0o005) !== 0o005) return { skip: `running as root and ${at} is not readable by others` }
    if (path.dirname(at) === at) break
  }
  return { options: { uid: nobody, gid: nobody } }
}

/** A migrated SQLite file with one record in it, in a fresh folder of its own (closed again). */
const migratedFile = async (
  parent: string,
  name: string
): Promise<{ readonly folder: string; readonly file: string }> => {
  const folder = path.join(parent, name)
  fs.mkdirSync(folder)
  const file = path.join(folder, "agent.db")
  await Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get("nothing")),
        Sqlite.layerExecutionStore({ filename: file })
      )
    )
  )
  return { folder, file }
}

describe("store warnings carry the driver's cause", () => {
  const who = unprivileged()
  const skip = "skip" in who ? who.skip : undefined
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "eap-readonly-"))
  /** What the agent process reported, by database file. */
  const reported = new Map<string, Record<string, unknown>>()
  const cases = { file444: "file-444", folder555: "folder-555", fresh555: "fresh-555" } as const
  const fileOf = (name: string) => path.join(parent, name, "agent.db")

  // One agent process goes through every case (a process start is most of a case's time).
  beforeAll(async () => {
    if (skip !== undefined || !("options" in who)) return
    // The unprivileged process must reach the folders below.
    fs.chmodSync(parent, 0o755)
    // The folder stays writable (SQLite's -wal and -shm files live there); the file is not.
    const file444 = await migratedFile(parent, cases.file444)
    fs.chmodSync(file444.folder, 0o777)
    fs.chmodSync(file444.file, 0o444)
    const folder555 = await migratedFile(parent, cases.folder555)
    fs.chmodSync(folder555.file, 0o444)
    fs.chmodSync(folder555.folder, 0o555)
    fs.mkdirSync(path.join(parent, cases.fresh555))
    fs.chmodSync(path.join(parent, cases.fresh555), 0o555)
    const names = Object.values(cases)
    const agent = start("./readOnlyStore.ts", names.map(fileOf), who.options)
    for (const _ of names) {
      const event = await agent.next(["answered", "open-failed"], 60_000)
      reported.set(String(event.file), event)
    }
    await agent.exited
  }, 90_000)
  afterAll(() => {
    for (const entry of fs.readdirSync(parent)) fs.chmodSync(path.join(parent, entry), 0o755)
    fs.rmSync(parent, { recursive: true, force: true })
  })
  const named = (name: string) => (skip === undefined ? name : `${name} (skipped: ${skip})`)

  it.skipIf(skip !== undefined)(
    named(
      "store warnings: a read-only SQLite file (chmod 444): the answer is unchanged and every warning and error says SQLITE_READONLY: attempt to write a readonly database"
    ),
    () => {
      const event = reported.get(fileOf(cases.file444))
      expect(event?.event, JSON.stringify(event)).toBe("answered")
      expect(event?.tag).toBe("Completed")
      const driver = "SQLITE_READONLY: attempt to write a readonly database"
      expect(event?.createError).toContain(driver)
      const warnings = Array.isArray(event?.warnings) ? event.warnings.map(String) : []
      const created = warnings.filter((w) => w.includes("execution record not created"))
      expect(created.length, JSON.stringify(warnings)).toBe(1)
      // Every warning the store caused names the driver's cause.
      for (const warning of warnings.filter((w) => w.includes("execution record"))) expect(warning).toContain(driver)
    }
  )

  it.skipIf(skip !== undefined)(
    named("store warnings: an existing SQLite file in a read-only folder: opening fails with SQLite's own message"),
    () => {
      const event = reported.get(fileOf(cases.folder555))
      expect(event?.event, JSON.stringify(event)).toBe("open-failed")
      expect(event?.message).toContain(
        `execution store open failed: ${fileOf(cases.folder555)}: cannot open the database:`
      )
      expect(event?.message).toMatch(/SQLITE_READONLY\w*: attempt to write a readonly database/)
    }
  )

  it.skipIf(skip !== undefined)(
    named(
      "store warnings: a fresh SQLite file in a read-only folder: opening fails with SQLITE_CANTOPEN: unable to open database file"
    ),
    () => {
      const event = reported.get(fileOf(cases.fresh555))
      expect(event?.event, JSON.stringify(event)).toBe("open-failed")
      expect(event?.message).toBe(
        `execution store open failed: ${
          fileOf(cases.fresh555)
        }: cannot open the database: SQLITE_CANTOPEN: unable to open database file`
      )
    }
  )

  it("store warnings: a migration that fails names SQLite's cause, and leaves nothing half-applied", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "eap-migration-"))
    try {
      const file = path.join(folder, "agent.db")
      // A table of the store's name that is not the store's: the first migration cannot create it.
      const other = new Database(file)
      other.exec(`CREATE TABLE ${tablesFor().records} (something_else TEXT)`)
      other.close()
      const error = await Effect.runPromise(
        Effect.flip(
          Effect.scoped(Effect.provide(ExecutionStore.ExecutionStore, Sqlite.layerExecutionStore({ filename: file })))
        )
      )
      expect(error.message).toBe(
        `execution store migrate failed: Migration "1_execution_records" failed: Failed to prepare statement: SQLITE_ERROR: table "${tablesFor().records}" already exists`
      )
      // The failed run was one transaction, rolled back: no table of it is left, none recorded as applied.
      const db = new Database(file, { readonly: true })
      try {
        expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all()).toEqual([
          { name: tablesFor().records }
        ])
      } finally {
        db.close()
      }
    } finally {
      fs.rmSync(folder, { recursive: true, force: true })
    }
  })

  it.skipIf(postgresSkipped !== undefined)(
    "store warnings: an unreachable PostgreSQL fails the Layer with the driver's message (ECONNREFUSED)",
    async () => {
      const error = await Effect.runPromise(
        Effect.flip(
          Effect.scoped(
            Effect.provide(
              ExecutionStore.ExecutionStore,
              Postgres.layerExecutionStore({ url: "postgres://eap:eap@127.0.0.1:1/eap" })
            )
          )
        )
      )
      expect(error.message).toContain("execution store open failed: cannot connect to PostgreSQL: ")
      expect(error.message).toContain("ECONNREFUSED 127.0.0.1:1")
    }
  )
})
