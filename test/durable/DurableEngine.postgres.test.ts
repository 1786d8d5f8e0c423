/**
 * The PostgreSQL deployment (issue 24), in this process: several engines
 * on one database (skipped without EAP_TEST_DATABASE_URL, failed instead
 * under EAP_REQUIRE_BACKENDS=1).
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { Activity, Workflow } from "@effect/workflow"
import { Duration, Effect, Layer, Schedule, Schema } from "effect"
import * as net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { layerPostgres } from "../../src/durable/internal/durableEngine.js"
import { postgresUrl, unavailable } from "../support/Backends.js"
import { freePort } from "./crashHarness.js"
import { dropClusterTables, uniqueClusterPrefix } from "./durableSupport.js"

const skip = unavailable("postgres")
const url = postgresUrl ?? ""

const prefixes: Array<string> = []
const freshPrefix = () => {
  const prefix = uniqueClusterPrefix()
  prefixes.push(prefix)
  return prefix
}
afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await dropClusterTables(prefix)
})

const Echo = Workflow.make({
  name: "Echo",
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: (p) => p.id
})
const EchoLive = Echo.toLayer(({ id }) =>
  Activity.make({ name: "echo", success: Schema.String, execute: Effect.succeed(`echo ${id}`) })
)

/** Executes one request and measures it. */
const timedEcho = (id: string) =>
  Effect.gen(function*() {
    const started = Date.now()
    const result = yield* Echo.execute({ id })
    return { result, millis: Date.now() - started }
  })

describe.skipIf(skip !== undefined)("durable engine on PostgreSQL", () => {
  it(
    "two deployments with different prefixes on one database do not block each other (no shared advisory locks)",
    async () => {
      const [first, second] = [freshPrefix(), freshPrefix()]
      // Two single runners, one per prefix, live at the same time in one process.
      const engine = (prefix: string) =>
        EchoLive.pipe(Layer.provideMerge(layerPostgres({ url, prefix, runner: "single" })))
      const { locks, results } = await Effect.runPromise(
        Effect.gen(function*() {
          const a = yield* Layer.build(engine(first))
          const b = yield* Layer.build(engine(second))
          const results = yield* Effect.all([
            Effect.provide(timedEcho("one"), a),
            Effect.provide(timedEcho("two"), b)
          ], { concurrency: 2 })
          // While both run: each deployment holds all its shards, as rows of its own locks table.
          const sql = yield* Effect.provide(SqlClient, a)
          const locks = yield* Effect.forEach(
            [first, second],
            (prefix) =>
              sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${prefix}_locks`)}`.pipe(
                Effect.map((rows) => rows[0]?.n ?? 0)
              )
          )
          return { locks, results }
        }).pipe(Effect.scoped, Effect.timeout(Duration.seconds(20)))
      )
      expect(results.map((r) => r.result)).toEqual(["echo one", "echo two"])
      // A first execute waits at most about one storage poll (1 s), not for another deployment's locks.
      for (const r of results) expect(r.millis).toBeLessThan(5_000)
      expect(locks).toEqual([300, 300])
    },
    30_000
  )

  it("four runners started at once on a fresh prefix all come up (the first-start migration race)", async () => {
    const rounds = 3
    for (let round = 0; round < rounds; round++) {
      const prefix = freshPrefix()
      const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()])
      const result = await Effect.runPromise(
        Effect.gen(function*() {
          const engines = yield* Effect.all(
            ports.map((port) =>
              Layer.build(
                EchoLive.pipe(
                  Layer.provideMerge(
                    layerPostgres({ url, prefix, runner: { host: "127.0.0.1", port }, maxConnections: 3 })
                  )
                )
              )
            ),
            { concurrency: "unbounded" }
          )
          const sql = yield* Effect.provide(SqlClient, engines[0]!)
          const migrations = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${prefix}_migrations`)}`
          // Each runner registers itself from its background loop, shortly after its Layer is built.
          const runners = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${prefix}_runners`)}`.pipe(
            Effect.map((rows) => rows[0]?.n ?? 0),
            Effect.filterOrFail((n) => n === 4),
            Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(10)))),
            Effect.orElseSucceed(() => -1)
          )
          const echoed = yield* Effect.provide(timedEcho(`round-${round}`), engines[3]!)
          return { engines: engines.length, migrations: migrations[0]?.n, runners, echoed }
        }).pipe(Effect.scoped, Effect.timeout(Duration.seconds(40)))
      )
      expect(result.engines).toBe(4)
      expect(result.runners).toBe(4)
      // Each of the cluster's migrations recorded once.
      expect(result.migrations).toBeGreaterThan(0)
      expect(result.echoed.result).toBe(`echo round-${round}`)
    }
  }, 60_000)

  it("a runner whose port is taken fails with a DurableEngineError (listen)", async () => {
    const port = await freePort()
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve))
    try {
      const result = await Effect.runPromise(
        Layer.build(layerPostgres({ url, prefix: freshPrefix(), runner: { host: "127.0.0.1", port } })).pipe(
          Effect.scoped,
          Effect.flip,
          Effect.timeout(Duration.seconds(20))
        )
      )
      expect(result._tag).toBe("DurableEngineError")
      expect(result.reason).toBe("listen")
      expect(result.detail).toContain(`127.0.0.1:${port}`)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  }, 30_000)
})
