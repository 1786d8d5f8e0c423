/**
 * PostgreSQL going down under a running agent: recording fails open — the
 * answers are unchanged and warnings say what was not written, and why in
 * the driver's words — while the required plan boundary still fails closed.
 * When the database is back, recording resumes.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"
import { postgresClient, postgresUrl, unavailable } from "../support/Backends.js"
import { agentWithBoundary, keepingWarnings } from "../support/StoreTrouble.js"

const skipped = unavailable("postgres")

/** Runs `sql` on the test database (as its superuser). */
const admin = (statement: (sql: SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.orDie(Effect.provide(Effect.flatMap(SqlClient, statement), postgresClient()))

describe("PostgreSQL down under a running agent", () => {
  it.effect.skipIf(skipped !== undefined)(
    `recording fails open with warnings naming the driver's cause; answers are unchanged; the required boundary still fails closed${
      skipped ? ` (skipped: ${skipped})` : ""
    }`,
    () =>
      Effect.gen(function*() {
        const database = `eap_down_${process.pid}_${Date.now().toString(36)}`
        yield* admin((sql) => sql`CREATE DATABASE ${sql(database)}`)
        const url = new URL(postgresUrl ?? "")
        url.pathname = `/${database}`
        const stores = Postgres.layer({ url: url.toString(), maxConnections: 2 })
        const agent = agentWithBoundary(stores)
        const warnings: Array<string> = []
        const setConnections = (allow: boolean) =>
          admin((sql) =>
            Effect.zipRight(
              sql`ALTER DATABASE ${sql(database)} ALLOW_CONNECTIONS ${sql.literal(allow ? "true" : "false")}`,
              allow
                ? Effect.void
                : sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database}`
            )
          )
        yield* Effect.gen(function*() {
          const pipeline = yield* Pipeline.Pipeline
          const store = yield* ExecutionStore.ExecutionStore
          const quote = "What is the stock quote for ACME?"
          const before = yield* pipeline.process({ request: quote, requestId: "before" })
          expect(before._tag).toBe("Completed")
          expect(Option.isSome(yield* store.get("before"))).toBe(true)

          yield* setConnections(false)
          const down = yield* pipeline.process({ request: quote, requestId: "while-down" })
          expect(down._tag === "Completed" && down.response.response).toBe(
            before._tag === "Completed" ? before.response.response : "?"
          )
          // Each warning says why in the driver's words, not only "Failed to execute statement".
          // (node-postgres's and PostgreSQL's own messages, under @effect/sql's "Connection error").
          // A connection cut mid-read surfaces as the socket's own error (ECONNRESET).
          const driver =
            /Connection terminated unexpectedly|is not currently accepting connections|terminating connection due to administrator command|ECONNRESET/
          const created = warnings.filter((w) => w.includes("execution record not created"))
          const written = warnings.filter((w) => w.includes("execution record not written"))
          expect(created.some((w) => driver.test(w)), JSON.stringify(created)).toBe(true)
          expect(written.some((w) => driver.test(w)), JSON.stringify(written)).toBe(true)
          const denied = yield* Effect.flip(
            pipeline.process({ request: "Buy 10 shares of ACME stock", requestId: "trade" })
          )
          expect(denied._tag).toBe("RequiredAfterPlanningError")
          // Reading fails too, with the store's typed error.
          const read = yield* Effect.flip(store.get("before"))
          expect(read._tag).toBe("ExecutionStoreError")

          yield* setConnections(true)
          yield* pipeline.process({ request: quote, requestId: "after" })
          expect(Option.getOrThrow(yield* store.get("after")).lifecycle?.status).toBe("succeeded")
          expect(Option.isSome(yield* store.get("before"))).toBe(true)
        }).pipe(Effect.provide(agent), Effect.provide(keepingWarnings(warnings)))
        yield* admin((sql) => sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database}`)
        yield* admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(database)}`)
      }),
    60_000
  )
})
