/**
 * SQLite file growth per request of bench-peers' scenario at H=16: N requests into a fresh file,
 * then a WAL checkpoint; bytes of the file (and WAL) per request.
 */
import { Tool } from "@effect/ai"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, ManagedRuntime, Schema, Stream } from "effect"
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { Agent, Hook, ModelProvider, Pipeline, ToolRegistry } from "../src/index.js"
import * as Sqlite from "../src/stores/sql/Sqlite.js"

const N = Number(process.env.N ?? 1000)
const CONTEXT = ("CTX-MARKER-7f3a " + "ctx ".repeat(256)).slice(0, 1024)
const Lookup = Tool.make("lookup", {
  description: "Look up a fact.",
  parameters: { q: Schema.String },
  success: Schema.String
})
const PLAN = {
  steps: [{ step_id: "s1", namespace: "bench", agent: "lookup", capability: "lookup", parameters: { q: "bench" } }],
  terminal: true
}
const model = ModelProvider.layer(ModelProvider.make({
  generateText: (options) =>
    Effect.succeed([
      {
        type: "text",
        text: options.responseFormat.type === "json"
          ? JSON.stringify(PLAN)
          : "The answer is: lookup-result(bench): 42 widgets. Contains SECRET token."
      },
      { type: "finish", reason: "stop", usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 } }
    ]),
  streamText: () => Stream.dieMessage("not used")
}))
const hooks = (kind: string) => {
  const noop = Hook.sync(() => undefined)
  const hs: Array<Hook.Hook<never>> = [
    Hook.make({ name: "enrichment", beforePlanning: Hook.sync(() => ({ enrichments: { rag_context: CONTEXT } })) })
  ]
  for (let i = 0; i < 16; i++) {
    hs.push(
      kind === "stages"
        ? Hook.make({
          name: `noop_${i}`,
          beforePlanning: noop,
          afterPlanning: Hook.sync((_c, plan) => plan),
          afterExecution: noop
        })
        : Hook.make({
          name: `noop_${i}`,
          beforeInference: Hook.sync((_c, p) => p),
          afterInference: Hook.sync((_c, t) => t),
          around: { toolCall: noop }
        })
    )
  }
  hs.push(Hook.make({ name: "redaction", afterSynthesis: Hook.sync((_c, t: string) => t.replace("SECRET", "[x]")) }))
  return hs
}
const tools = [
  ToolRegistry.entry({
    namespace: "bench",
    agent: "lookup",
    tool: Lookup,
    handler: ({ q }) => Effect.succeed(`lookup-result(${q}): 42 widgets`)
  })
]
for (const kind of ["stages", "operations"]) {
  const dir = mkdtempSync(path.join(tmpdir(), "growth-"))
  const filename = path.join(dir, "agent.db")
  const runtime = ManagedRuntime.make(
    Agent.layer({ model, tools, hooks: hooks(kind), executionStore: Sqlite.layerExecutionStore({ filename }) })
  )
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  await runtime.runPromise(pipeline.process({ request: "warm" }))
  const size = () => statSync(filename).size + (existsSync(`${filename}-wal`) ? statSync(`${filename}-wal`).size : 0)
  await runtime.dispose()
  const before = size()
  const runtime2 = ManagedRuntime.make(
    Agent.layer({ model, tools, hooks: hooks(kind), executionStore: Sqlite.layerExecutionStore({ filename }) })
  )
  const p2 = await runtime2.runPromise(Pipeline.Pipeline)
  for (let i = 0; i < N; i++) {
    await runtime2.runPromise(p2.process({ request: "What does the lookup say about bench?" }))
  }
  await runtime2.dispose()
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
