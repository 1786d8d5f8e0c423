/**
 * `Agent.layerConfig` picks its stores from configuration: SQLite by default
 * (records survive a restart), memory or PostgreSQL on request, and a clear
 * configuration error for a bad or incomplete choice.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option } from "effect"
import { ActivityStore, Agent, CheckpointKey, ExecutionStore, Pipeline, StoreConfig } from "effect-agent-pipeline"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { postgresUrl, redisUrl, unavailable } from "../support/Backends.js"

const withConfig = (values: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(values))))

/** One "process run": build the agent from config, run one request, read the store. */
const runOnce = (values: Record<string, string>, requestId: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const store = yield* ExecutionStore.ExecutionStore
    const before = (yield* store.list()).records.map((r) => r.requestId)
    const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId })
    return { before, result }
  }).pipe(Effect.provide(Agent.layerConfig({ tools: [] }).pipe(Layer.provide(withConfig(values)))))

describe("stores from configuration", () => {
  it.effect("the default is SQLite: a second run over the same file sees the first run's record", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-config-"))
      const file = path.join(dir, "nested", "agent.db")
      const first = yield* runOnce({ SQLITE_PATH: file }, "run-1")
      expect(first.before).toEqual([])
      expect(first.result._tag).toBe("Completed")
      expect(fs.existsSync(file)).toBe(true)
      const second = yield* runOnce({ SQLITE_PATH: file }, "run-2")
      expect(second.before).toEqual(["run-1"])
      // The id of a stored record stays taken across processes.
      const reused = yield* Effect.flip(runOnce({ SQLITE_PATH: file }, "run-1"))
      expect(reused._tag === "InvalidRequest" && reused.reason).toBe("request_id_in_use")
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  it.effect("AGENT_STORE=memory keeps nothing across runs", () =>
    Effect.gen(function*() {
      yield* runOnce({ AGENT_STORE: "memory" }, "m-1")
      const second = yield* runOnce({ AGENT_STORE: "memory" }, "m-2")
      expect(second.before).toEqual([])
    }))

  it.effect("settings: defaults, and a bad or incomplete choice is a configuration error", () =>
    Effect.gen(function*() {
      const defaults = yield* StoreConfig.settings.pipe(Effect.provide(withConfig({})))
      expect(defaults.backend).toBe("sqlite")
      expect(defaults.sqlitePath).toBe("./data/agent.db")
      expect(Option.isNone(defaults.databaseUrl)).toBe(true)

      const unknown = yield* Effect.flip(
        StoreConfig.settings.pipe(Effect.provide(withConfig({ AGENT_STORE: "mongo" })))
      )
      expect(unknown._op).toBe("InvalidData")
      const missingUrl = yield* Effect.flip(
        Effect.flatMap(StoreConfig.settings, StoreConfig.layers).pipe(
          Effect.provide(withConfig({ AGENT_STORE: "postgres" }))
        )
      )
      expect(missingUrl._op).toBe("MissingData")
      expect(String(missingUrl)).toContain("DATABASE_URL")
    }))

  it.effect("the checkpoint key: AGENT_CHECKPOINT_KEY (hex or base64, ≥ 32 bytes) when set; else a key file beside the SQLite file, random for memory or :memory:; required for postgres", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-key-config-"))
      const file = path.join(dir, "agent.db")
      const originOf = (values: Record<string, string>) =>
        Effect.scoped(
          Effect.flatMap(
            Layer.build(Layer.unwrapEffect(Effect.flatMap(StoreConfig.settings, StoreConfig.checkpointKeyLayer))),
            (context) => Effect.succeed(Context.get(context, CheckpointKey.CheckpointKey).origin)
          )
        ).pipe(Effect.provide(withConfig(values)))
      const hex = "0123456789abcdef".repeat(4)
      expect(yield* originOf({ AGENT_CHECKPOINT_KEY: hex, SQLITE_PATH: file })).toBe("given")
      expect(fs.existsSync(`${file}.checkpoint-key`)).toBe(false)
      expect(yield* originOf({ AGENT_CHECKPOINT_KEY: Buffer.alloc(32, 7).toString("base64"), AGENT_STORE: "postgres" }))
        .toBe("given")
      expect(yield* originOf({ SQLITE_PATH: file })).toBe(`file ${file}.checkpoint-key`)
      expect(fs.statSync(`${file}.checkpoint-key`).mode & 0o777).toBe(0o600)
      expect(yield* originOf({ SQLITE_PATH: ":memory:" })).toContain("random")
      expect(yield* originOf({ AGENT_STORE: "memory" })).toContain("random")
      const missing = yield* Effect.flip(originOf({ AGENT_STORE: "postgres" }))
      expect(missing._op).toBe("MissingData")
      expect(String(missing)).toContain("AGENT_CHECKPOINT_KEY")
      for (const bad of ["ab".repeat(31), "", "not a key!".repeat(8), Buffer.alloc(31).toString("base64")]) {
        const refused = yield* Effect.flip(originOf({ AGENT_CHECKPOINT_KEY: bad }))
        expect(refused._op).toBe("InvalidData")
        expect(String(refused)).toContain("AGENT_CHECKPOINT_KEY")
        if (bad.length > 0) expect(String(refused)).not.toContain(bad)
      }
      // A key file that is not a key is refused, naming the file (never its content).
      fs.writeFileSync(path.join(dir, "bad.db.checkpoint-key"), "short\n", { mode: 0o600 })
      const badFile = yield* Effect.flip(originOf({ SQLITE_PATH: path.join(dir, "bad.db") }))
      expect(String(badFile)).toContain("bad.db.checkpoint-key")
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  const skipped = unavailable("postgres")
  it.effect.skipIf(skipped !== undefined)(
    `AGENT_STORE=postgres with DATABASE_URL${skipped ? ` (skipped: ${skipped})` : ""}`,
    () =>
      Effect.gen(function*() {
        const id = `pg-config-${Date.now()}`
        const config = {
          AGENT_STORE: "postgres",
          DATABASE_URL: postgresUrl ?? "",
          AGENT_CHECKPOINT_KEY: "ab".repeat(32)
        }
        const first = yield* runOnce(config, id)
        expect(first.result._tag).toBe("Completed")
        const second = yield* runOnce(config, `${id}-b`)
        expect(second.before).toContain(id)
      })
  )

  /** Announces a signal through the configured activity store and lists it back. */
  const roundTrip = (values: Record<string, string>) =>
    Effect.gen(function*() {
      const store = yield* ActivityStore.ActivityStore
      const domain = `config-${Date.now()}-${Math.random()}`
      yield* store.announce(
        { signalId: `${domain}-s`, domain, agent: "a", requestId: "r", summary: "working" },
        "1 minute"
      )
      const active = yield* store.listActive(domain)
      yield* store.remove(`${domain}-s`)
      return active.map((s) => s.summary)
    }).pipe(Effect.provide(StoreConfig.layerActivityStore.pipe(Layer.provide(withConfig(values)))))

  it.effect("the activity store follows AGENT_STORE unless ACTIVITY_STORE says otherwise; redis needs REDIS_URL", () =>
    Effect.gen(function*() {
      const read = (values: Record<string, string>) => StoreConfig.settings.pipe(Effect.provide(withConfig(values)))
      expect((yield* read({})).activityBackend).toBe("sqlite")
      expect((yield* read({ AGENT_STORE: "postgres" })).activityBackend).toBe("postgres")
      expect((yield* read({ AGENT_STORE: "postgres", ACTIVITY_STORE: "redis" })).activityBackend).toBe("redis")
      expect(yield* roundTrip({ AGENT_STORE: "memory" })).toEqual(["working"])
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-activity-config-"))
      expect(yield* roundTrip({ ACTIVITY_STORE: "sqlite", SQLITE_PATH: path.join(dir, "a.db") })).toEqual(["working"])
      fs.rmSync(dir, { recursive: true, force: true })
      const missing = yield* Effect.flip(roundTrip({ ACTIVITY_STORE: "redis" }))
      expect(String(missing)).toContain("REDIS_URL")
    }))

  const noRedis = unavailable("redis")
  it.effect.skipIf(noRedis !== undefined)(
    `ACTIVITY_STORE=redis with REDIS_URL${noRedis ? ` (skipped: ${noRedis})` : ""}`,
    () =>
      Effect.gen(function*() {
        expect(yield* roundTrip({ ACTIVITY_STORE: "redis", REDIS_URL: redisUrl ?? "" })).toEqual(["working"])
      })
  )
})
