/**
 * The retention job for finished workflow rows (issue 24), on SQLite and on
 * PostgreSQL: finished executions older than the cutoff are deleted (every
 * row of theirs), newer finished ones and suspended ones (awaiting a
 * `DurableDeferred`) are kept; a deleted execution's idempotency is gone.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import { Duration, Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { layerPostgres, layerSqlite } from "../../src/durable/internal/durableEngine.js"
import { layerRetention, sweepFinished } from "../../src/durable/internal/durableRetention.js"
import { postgresUrl, unavailable } from "../support/Backends.js"
import { dropClusterTables, uniqueClusterPrefix } from "./durableSupport.js"

const Order = Workflow.make({
  name: "Order",
  payload: { id: Schema.String, approval: Schema.Boolean },
  success: Schema.String,
  idempotencyKey: (p) => p.id
})
const Approved = DurableDeferred.make("approved", { success: Schema.String })

const orderLive = (runs: Array<string>) =>
  Order.toLayer(({ approval, id }) =>
    Effect.gen(function*() {
      const step = (name: string) =>
        Activity.make({
          name,
          success: Schema.String,
          execute: Effect.sync(() => runs.push(`${id}:${name}`)).pipe(Effect.as(`${name}-${id}`))
        })
      const reserved = yield* step("reserve")
      const approvedBy = approval ? yield* DurableDeferred.await(Approved) : "auto"
      const shipped = yield* step("ship")
      return `${reserved}|${approvedBy}|${shipped}`
    })
  )

/** Rows of an execution, in messages and in replies. */
const rowsOf = (prefix: string, id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const executionId = yield* Order.executionId({ id, approval: false })
    const messages = yield* sql<{ id: string }>`SELECT id FROM ${
      sql(`${prefix}_messages`)
    } WHERE entity_id = ${executionId}`
    const replies = yield* sql<{ id: string }>`SELECT r.id FROM ${sql(`${prefix}_replies`)} r JOIN ${
      sql(`${prefix}_messages`)
    } m ON r.request_id = m.id WHERE m.entity_id = ${executionId}`
    return messages.length + replies.length
  })

/**
 * The scenario over an engine: `old` finished, then (after `gap`) `recent`
 * finished and `waiting` suspended on its approval; a sweep with a cutoff
 * between the two; then `old` submitted again.
 */
const scenario = (prefix: string) =>
  Effect.gen(function*() {
    const runs: Array<string> = []
    return yield* Effect.gen(function*() {
      yield* Order.execute({ id: "old", approval: false })
      yield* Effect.sleep(Duration.millis(1_200))
      yield* Order.execute({ id: "recent", approval: false })
      yield* Order.execute({ id: "waiting", approval: true }, { discard: true })
      // Wait until `waiting` is suspended (its reserve activity ran, its run replied Suspended).
      const waitingId = yield* Order.executionId({ id: "waiting", approval: true })
      for (let i = 0; i < 200; i++) {
        const state = yield* Order.poll(waitingId)
        if (state !== undefined && state._tag === "Suspended") break
        yield* Effect.sleep(Duration.millis(25))
      }
      const before = { old: yield* rowsOf(prefix, "old"), recent: yield* rowsOf(prefix, "recent") }
      const waitingRowsBefore = yield* rowsWaiting(prefix)
      // Batch size 1: several batches for the one old execution (the loop ends on a short batch).
      const deleted = yield* sweepFinished({ prefix, olderThan: Duration.millis(600), batchSize: 1 })
      const after = { old: yield* rowsOf(prefix, "old"), recent: yield* rowsOf(prefix, "recent") }
      const waitingRowsAfter = yield* rowsWaiting(prefix)
      const sweptAgain = yield* sweepFinished({ prefix, olderThan: Duration.millis(600) })
      // The waiting one still completes after the sweep.
      yield* DurableDeferred.succeed(Approved, {
        token: DurableDeferred.tokenFromExecutionId(Approved, { workflow: Order, executionId: waitingId }),
        value: "alice"
      })
      const waitingResult = yield* Order.execute({ id: "waiting", approval: true })
      const runsBeforeResubmit = runs.length
      yield* Order.execute({ id: "old", approval: false })
      return {
        before,
        after,
        deleted,
        sweptAgain,
        waitingRowsBefore,
        waitingRowsAfter,
        waitingResult,
        resubmitRuns: runs.slice(runsBeforeResubmit)
      }
    }).pipe(Effect.provide(orderLive(runs)))
  })

const rowsWaiting = (prefix: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const executionId = yield* Order.executionId({ id: "waiting", approval: true })
    const rows = yield* sql<{ id: string }>`SELECT id FROM ${
      sql(`${prefix}_messages`)
    } WHERE entity_id = ${executionId}`
    return rows.length
  })

const expectRetention = (r: Effect.Effect.Success<ReturnType<typeof scenario>>) => {
  expect(r.before.old).toBeGreaterThan(0)
  expect(r.before.recent).toBeGreaterThan(0)
  expect(r.deleted).toBe(1)
  expect(r.after.old).toBe(0)
  expect(r.after.recent).toBe(r.before.recent)
  expect(r.waitingRowsBefore).toBeGreaterThan(0)
  expect(r.waitingRowsAfter).toBe(r.waitingRowsBefore)
  expect(r.sweptAgain).toBe(0)
  expect(r.waitingResult).toBe("reserve-waiting|alice|ship-waiting")
  // Deleting forgot the idempotency: the same request id runs again, from the start.
  expect(r.resubmitRuns).toEqual(["old:reserve", "old:ship"])
}

const dirs: Array<string> = []
const prefixes: Array<string> = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
  for (const prefix of prefixes.splice(0)) await dropClusterTables(prefix)
})

describe("durable retention", () => {
  it("SQLite: finished executions older than the cutoff are deleted, newer and suspended ones kept", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-durable-retention-"))
    dirs.push(dir)
    const engine = layerSqlite({ filename: path.join(dir, "durable.db") })
    expectRetention(await Effect.runPromise(scenario("eap_cluster").pipe(Effect.provide(engine))))
  }, 30_000)

  const skip = unavailable("postgres")
  it.skipIf(skip !== undefined)(
    "PostgreSQL: finished executions older than the cutoff are deleted, newer and suspended ones kept",
    async () => {
      const prefix = uniqueClusterPrefix()
      prefixes.push(prefix)
      const engine = layerPostgres({ url: postgresUrl ?? "", prefix, runner: "single" })
      expectRetention(await Effect.runPromise(scenario(prefix).pipe(Effect.provide(engine))))
    },
    30_000
  )

  it("the scheduled job sweeps at start and then on its schedule, while the engine runs", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-durable-retention-"))
    dirs.push(dir)
    const engine = layerSqlite({ filename: path.join(dir, "durable.db") })
    const runs: Array<string> = []
    const remaining = await Effect.runPromise(
      Effect.gen(function*() {
        yield* Order.execute({ id: "a", approval: false })
        yield* Order.execute({ id: "b", approval: false })
        // The job (olderThan 0, every 100 ms) started with the engine: both gone within a few sweeps.
        yield* Effect.sleep(Duration.millis(400))
        const sql = yield* SqlClient
        return yield* sql<
          { n: number }
        >`SELECT count(*) AS n FROM eap_cluster_messages WHERE entity_type LIKE 'Workflow/%'`
      }).pipe(
        Effect.provide(
          Layer.mergeAll(orderLive(runs), layerRetention({ olderThan: Duration.zero, every: Duration.millis(100) }))
            .pipe(
              Layer.provideMerge(engine)
            )
        )
      )
    )
    expect(runs.length).toBe(4)
    expect(Number(remaining[0]?.n)).toBe(0)
  }, 30_000)
})
