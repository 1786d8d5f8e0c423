/**
 * The README's deployment examples (`examples/readme/deploy-*.ts`), run:
 * from configuration, the embedded SQLite file, PostgreSQL.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Console, Effect, Layer, Option } from "effect"
import { ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as DeployConfig from "../../examples/readme/deploy-config.js"
import * as DeployPostgres from "../../examples/readme/deploy-postgres.js"
import * as DeploySqlite from "../../examples/readme/deploy-sqlite.js"
import { postgresUrl, redisUrl, unavailable } from "../support/Backends.js"

const withConfig = (values: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(values))))

const processOnce = (requestId: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    const store = yield* ExecutionStore.ExecutionStore
    const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId })
    expect(result._tag).toBe("Completed")
    return Option.getOrThrow(yield* store.get(requestId))
  })

describe("README: stores and deployments", () => {
  it.effect("from configuration: SQLITE_PATH picks the file; the listing shows the stored request", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-deploy-"))
      const lines: Array<string> = []
      const base = yield* Effect.console
      yield* Console.withConsole(DeployConfig.program, {
        ...base,
        log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.map(String).join(" ")))
      }).pipe(Effect.provide(withConfig({ SQLITE_PATH: path.join(dir, "agent.db") })))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^[0-9a-f-]{36} succeeded$/)
      expect(fs.existsSync(path.join(dir, "agent.db"))).toBe(true)
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  it.effect("the embedded SQLite file: records and checkpoints in ./data/agent.db", () =>
    Effect.gen(function*() {
      const id = `readme-sqlite-${Date.now()}`
      const record = yield* processOnce(id).pipe(Effect.provide(DeploySqlite.AgentLive))
      expect(record.lifecycle?.status).toBe("succeeded")
      // Another agent over the same file (another process, or a restart) reads it.
      const again = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get(id)).pipe(
        Effect.provide(DeploySqlite.AgentLive)
      )
      expect(Option.isSome(again)).toBe(true)
    }))

  const skipped = unavailable("postgres") ?? unavailable("redis")
  it.effect.skipIf(skipped !== undefined)(
    `PostgreSQL and Redis from DATABASE_URL and REDIS_URL${skipped ? ` (skipped: ${skipped})` : ""}`,
    () =>
      Effect.gen(function*() {
        const id = `readme-pg-${Date.now()}`
        // Every process shares one checkpoint key (the README's deployment reads it from the environment).
        const key = "a1".repeat(32)
        const urls = { DATABASE_URL: postgresUrl ?? "", REDIS_URL: redisUrl ?? "", AGENT_CHECKPOINT_KEY: key }
        const record = yield* processOnce(id).pipe(
          Effect.provide(DeployPostgres.AgentLive),
          Effect.provide(withConfig(urls))
        )
        expect(record.lifecycle?.status).toBe("succeeded")
        // The activity hooks ran over Redis: their signal was announced and cleaned up.
        expect(record.hookInvocations.map((i) => i.name)).toContain("activity-announcement")
        const cleanup = record.hookInvocations.flatMap((i) => i.effects).find((e) =>
          e.effectId === "activity_signal_cleanup"
        )
        expect(cleanup?.status).toBe("succeeded")
        const missing = yield* Effect.flip(
          processOnce(`${id}-x`).pipe(
            Effect.provide(DeployPostgres.AgentLive),
            Effect.provide(withConfig({ REDIS_URL: redisUrl ?? "", AGENT_CHECKPOINT_KEY: key }))
          )
        )
        expect(String(missing)).toContain("DATABASE_URL")
      })
  )
})
