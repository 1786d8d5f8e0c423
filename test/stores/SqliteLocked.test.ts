/**
 * The database locked by another process: recording fails open — the
 * answer is unchanged and a warning says what was not written, and why in
 * SQLite's own words (`SQLITE_BUSY: database is locked`) — while the
 * required plan boundary still fails closed. Once the lock is gone,
 * recording resumes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { agentWithBoundary, keepingWarnings } from "../support/StoreTrouble.js"

/** The part of better-sqlite3 this test uses: a second connection holding the write lock. */
interface Connection {
  exec(sql: string): void
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new(file: string) => Connection

describe("the SQLite file locked by another connection", () => {
  it.effect(
    "recording fails open with a warning naming SQLite's cause (SQLITE_BUSY); the answer is unchanged; the required boundary still fails closed",
    () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-locked-"))
        const file = path.join(dir, "agent.db")
        const stores = Sqlite.layer({ filename: file, busyTimeout: "100 millis" })
        const agent = agentWithBoundary(stores)
        const warnings: Array<string> = []
        yield* Effect.gen(function*() {
          const pipeline = yield* Pipeline.Pipeline
          const store = yield* ExecutionStore.ExecutionStore
          const unlockedAnswer = yield* pipeline.process({
            request: "What is the stock quote for ACME?",
            requestId: "before"
          })
          expect(unlockedAnswer._tag).toBe("Completed")

          const other = new Database(file)
          other.exec("BEGIN EXCLUSIVE")
          const locked = yield* pipeline.process({
            request: "What is the stock quote for ACME?",
            requestId: "while-locked"
          })
          expect(locked._tag === "Completed" && locked.response.response).toBe(
            unlockedAnswer._tag === "Completed" ? unlockedAnswer.response.response : "?"
          )
          // Each warning names the driver's own cause, not only "Failed to execute statement".
          const driver = "SQLITE_BUSY: database is locked"
          expect(
            warnings.some((w) => w.includes("execution record not created") && w.includes(driver)),
            JSON.stringify(warnings)
          )
            .toBe(true)
          expect(
            warnings.some((w) => w.includes("execution record not written") && w.includes(driver)),
            JSON.stringify(warnings)
          )
            .toBe(true)
          const denied = yield* Effect.flip(
            pipeline.process({ request: "Buy 10 shares of ACME stock", requestId: "trade" })
          )
          expect(denied._tag).toBe("RequiredAfterPlanningError")
          other.exec("COMMIT")
          other.close()

          // The lock is gone: recording resumes.
          yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId: "after" })
          expect(Option.getOrThrow(yield* store.get("after")).lifecycle?.status).toBe("succeeded")
          expect(Option.isNone(yield* store.get("while-locked"))).toBe(true)
        }).pipe(
          Effect.provide(agent),
          Effect.provide(keepingWarnings(warnings))
        )
        fs.rmSync(dir, { recursive: true, force: true })
      }),
    30_000
  )
})
