/**
 * SQLite file growth per request of bench-peers' scenario at H=16: N requests into a fresh file,
 * then a WAL checkpoint; bytes of the file (and WAL) per request.
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, ManagedRuntime } from "effect"
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { Agent, Pipeline } from "../src/index.js"
import * as Sqlite from "../src/stores/sql/Sqlite.js"
import * as Scenario from "./peersScenario.js"

const N = Number(process.env.N ?? 1000)

/** Runs `count` requests of the scenario at 16 `kind` units into the SQLite file `filename`, then closes it. */
const requestsInto = async (filename: string, kind: Scenario.UnitKind, count: number) => {
  const runtime = ManagedRuntime.make(
    Agent.layer({
      model: Scenario.model,
      tools: Scenario.tools,
      hooks: Scenario.hooksOf(16, kind),
      executionStore: Sqlite.layerExecutionStore({ filename })
    })
  )
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  for (let i = 0; i < count; i++) await runtime.runPromise(pipeline.process({ request: Scenario.REQUEST }))
  await runtime.dispose()
}

for (const kind of ["stages", "operations"] as const) {
  const dir = mkdtempSync(path.join(tmpdir(), "growth-"))
  const filename = path.join(dir, "agent.db")
  const size = () => statSync(filename).size + (existsSync(`${filename}-wal`) ? statSync(`${filename}-wal`).size : 0)
  // The tables first (one request), then the requests measured.
  await requestsInto(filename, kind, 1)
  const before = size()
  await requestsInto(filename, kind, N)
  const body = await Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")
      const rows = yield* sql<{ readonly b: number }>`select avg(length(body)) b from eap_execution_records`
      return rows[0]?.b ?? 0
    }).pipe(Effect.provide(SqliteClient.layer({ filename })))
  )
  console.log(
    `${kind}: ${((size() - before) / N).toFixed(0)} B of file per request (after a TRUNCATE checkpoint), body ${
      body.toFixed(0)
    } B`
  )
  rmSync(dir, { recursive: true })
}
