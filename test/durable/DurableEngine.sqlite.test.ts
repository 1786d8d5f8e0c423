/**
 * The one-process deployment (issue 24): the durable engine over a SQLite
 * file, a single runner, in this process.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { Activity, Workflow } from "@effect/workflow"
import { Effect, Either, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { layerSqlite, layerWithClient } from "../../src/durable/internal/durableEngine.js"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"

const dirs: Array<string> = []
const tempFile = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-durable-sqlite-"))
  dirs.push(dir)
  return path.join(dir, "nested", "durable.db")
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const Greeting = Workflow.make({
  name: "Greeting",
  payload: { id: Schema.String, name: Schema.String },
  success: Schema.String,
  idempotencyKey: (p) => p.id
})

/** The workflow, with a counter of activity runs. */
const greetingLive = (runs: Array<string>) =>
  Greeting.toLayer(({ name }) =>
    Effect.gen(function*() {
      const step = (label: string, value: Effect.Effect<string>) =>
        Activity.make({
          name: label,
          success: Schema.String,
          execute: Effect.sync(() => runs.push(label)).pipe(Effect.zipRight(value))
        })
      const upper = yield* step("upper", Effect.succeed(name.toUpperCase()))
      const greeting = yield* step("greet", Effect.succeed(`hello ${upper}`))
      return yield* step("punctuate", Effect.succeed(`${greeting}!`))
    })
  )

describe("durable engine on SQLite (one process, single runner)", () => {
  it("a workflow with three activities completes; the file, its folder and the prefixed tables are created (WAL)", async () => {
    const filename = tempFile()
    const runs: Array<string> = []
    const result = await Effect.runPromise(
      Effect.gen(function*() {
        const result = yield* Greeting.execute({ id: "r1", name: "ada" })
        const sql = yield* SqlClient
        const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
        const [mode] = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
        return { result, tables: tables.map((t) => t.name), mode: mode?.journal_mode }
      }).pipe(Effect.provide(greetingLive(runs).pipe(Layer.provideMerge(layerSqlite({ filename })))))
    )
    expect(result.result).toBe("hello ADA!")
    expect(runs).toEqual(["upper", "greet", "punctuate"])
    expect(result.mode).toBe("wal")
    expect(result.tables).toEqual(
      expect.arrayContaining(["eap_cluster_messages", "eap_cluster_replies", "eap_cluster_migrations"])
    )
    expect(result.tables.filter((t) => t.startsWith("cluster_"))).toEqual([])
  })

  it("a finished payload re-executes from storage, in a new engine on the same file, without re-running activities", async () => {
    const filename = tempFile()
    const firstRuns: Array<string> = []
    const first = await Effect.runPromise(
      Greeting.execute({ id: "r2", name: "grace" }).pipe(
        Effect.provide(greetingLive(firstRuns).pipe(Layer.provideMerge(layerSqlite({ filename }))))
      )
    )
    const againRuns: Array<string> = []
    const again = await Effect.runPromise(
      Effect.gen(function*() {
        const started = Date.now()
        const result = yield* Greeting.execute({ id: "r2", name: "grace" })
        return { result, millis: Date.now() - started }
      }).pipe(Effect.provide(greetingLive(againRuns).pipe(Layer.provideMerge(layerSqlite({ filename })))))
    )
    expect(first).toBe("hello GRACE!")
    expect(firstRuns.length).toBe(3)
    expect(again.result).toBe(first)
    expect(againRuns).toEqual([])
  })

  it("bad options fail the Layer with a DurableEngineError (invalid_config), before any file is made", async () => {
    const filename = tempFile()
    const attempt = (options: Parameters<typeof layerSqlite>[0]) =>
      Effect.runPromise(Effect.either(Layer.build(layerSqlite(options)).pipe(Effect.scoped)))
    for (
      const options of [
        { filename, prefix: "eap" },
        { filename, prefix: "Bad-Prefix" },
        { filename, failover: { shardLockExpiration: "1 second" as const } },
        { filename, failover: { entityMessagePollInterval: "0 millis" as const } }
      ]
    ) {
      const result = await attempt(options)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left._tag).toBe("DurableEngineError")
        expect(result.left.reason).toBe("invalid_config")
      }
    }
    expect(fs.existsSync(filename)).toBe(false)
  })

  it("a file that cannot be opened fails with a DurableEngineError (storage) that carries SQLite's reason", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-durable-sqlite-"))
    dirs.push(dir)
    // A folder where the file should be: SQLite cannot open it as a database.
    const filename = path.join(dir, "taken")
    fs.mkdirSync(filename)
    const error = await Effect.runPromise(Layer.build(layerSqlite({ filename })).pipe(Effect.scoped, Effect.flip))
    expect(error._tag).toBe("DurableEngineError")
    expect(error.reason).toBe("storage")
    expect(error.detail).toContain(filename)
  })

  it("several runners over SQLite are refused (invalid_config): a socket runner needs PostgreSQL", async () => {
    const filename = tempFile()
    const error = await Effect.runPromise(
      Layer.build(
        layerWithClient({ runner: { host: "127.0.0.1", port: 1 } }).pipe(Layer.provide(Sqlite.layerClient(filename)))
      ).pipe(Effect.scoped, Effect.flip)
    )
    expect(error._tag).toBe("DurableEngineError")
    if (error._tag === "DurableEngineError") expect(error.reason).toBe("invalid_config")
  })
})
