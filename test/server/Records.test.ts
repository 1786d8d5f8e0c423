/**
 * `GET /v1/records` and `GET /v1/records/{id}` over a real socket, against
 * the in-memory store and SQLite (`effect-agent-pipeline/sqlite`), served
 * by the read-only (viewer) server: summaries, every filter, paging with
 * the cursor, each bad parameter as 400 naming it, 404 for an unknown
 * record, and stored rows that do not decode (`undecodable`, 422).
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { CheckpointStore, ExecutionRecord, ExecutionStore } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { tablesFor } from "../../src/stores/sql/migrations.js"
import { post, type Running, start } from "./ServerHarness.js"

const longRequest = `${"é".repeat(150)}${"x".repeat(150)}`

const record = (requestId: string, fields: Record<string, unknown>) =>
  Schema.decodeUnknownSync(ExecutionRecord.ExecutionRecord)({
    schemaVersion: 1,
    requestId,
    request: `request ${requestId}`,
    ...fields
  })

const invocation = (name: string, sequence: number, action?: string) => ({
  name,
  stage: "before_planning",
  outcome: "succeeded",
  sequence,
  startedAt: 0,
  duration: 1,
  effects: [],
  ...(action === undefined ? {} : { decision: { policy: "fail_open", action, reason: "accepted" } })
})

const modelCall = (modelId: string | undefined) => ({
  purpose: "planning",
  reask: 0,
  attempt: 1,
  model: "primary",
  ...(modelId === undefined ? {} : { modelId }),
  streamed: false,
  startedAt: 1000,
  durationMs: 5,
  outcome: "succeeded"
})

/** Five records, created a → e (so listed e → a). */
const seed = [
  record("a", {
    request: longRequest,
    lifecycle: { status: "succeeded", startedAt: 1000, endedAt: 1500 },
    hookInvocations: [invocation("audit", 0, "continue"), invocation("cache", 1, "short_circuit")],
    modelCalls: [modelCall("gpt-x"), modelCall("gpt-x"), modelCall(undefined)],
    metadata: { traceId: "0af7651916cd43dd8448eb211c80319c" }
  }),
  record("b", {
    lifecycle: { status: "failed", startedAt: 2000, endedAt: 2100 },
    hookInvocations: [invocation("guard", 0, "deny")]
  }),
  record("c", { lifecycle: { status: "running", startedAt: 3000 }, mode: "stream" }),
  record("d", { lifecycle: { status: "suspended", startedAt: 4000 }, checkpointId: "cp-d" }),
  record("e", {})
]

const ids = (body: { readonly records: ReadonlyArray<{ readonly requestId: string }> }) =>
  body.records.map((r) => r.requestId)

const serveStore = (store: Layer.Layer<ExecutionStore.ExecutionStore, unknown>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(store)
    const service = Context.get(context, ExecutionStore.ExecutionStore)
    for (const r of seed) {
      expect(yield* Effect.orDie(service.create(r))).toBe("created")
      // Creation order is the listing order: keep the creation times apart.
      yield* Effect.sleep("2 millis")
    }
    return yield* start(
      AgentServer.layer({ port: 0, readOnly: true, rateLimit: false }),
      Layer.merge(Layer.succeedContext(context), CheckpointStore.layerMemory)
    )
  })

const suite = (name: string, store: () => Layer.Layer<ExecutionStore.ExecutionStore, unknown>) =>
  describe(`GET /v1/records (${name})`, () => {
    const withServer = (f: (server: Running) => Effect.Effect<void>) => Effect.flatMap(serveStore(store()), f)

    it.scopedLive("lists summaries newest first, with undecodable 0 and no next", () =>
      withServer((server) =>
        Effect.gen(function*() {
          const { body, status } = yield* server.json("/v1/records")
          expect(status).toBe(200)
          expect(ids(body)).toEqual(["e", "d", "c", "b", "a"])
          expect(body.undecodable).toBe(0)
          expect(body.next).toBeUndefined()
          const a = body.records[4]
          expect(a).toEqual({
            requestId: "a",
            status: "succeeded",
            mode: "pipeline",
            startedAt: 1000,
            endedAt: 1500,
            request: longRequest.slice(0, 200),
            models: ["gpt-x", "primary"],
            hookCount: 2,
            decisions: 1,
            traceId: "0af7651916cd43dd8448eb211c80319c"
          })
          expect(body.records[1]).toMatchObject({ requestId: "d", status: "suspended", checkpointId: "cp-d" })
          expect(body.records[0]).toMatchObject({ requestId: "e", status: "unknown", hookCount: 0, models: [] })
          expect(body.records[2]).toMatchObject({ requestId: "c", mode: "stream" })
        })
      ))

    it.scopedLive("filters by status (a comma list, unknown included), hook and start time", () =>
      withServer((server) =>
        Effect.gen(function*() {
          expect(ids((yield* server.json("/v1/records?status=failed,running")).body)).toEqual(["c", "b"])
          expect(ids((yield* server.json("/v1/records?status=unknown")).body)).toEqual(["e"])
          expect(ids((yield* server.json("/v1/records?hook=audit")).body)).toEqual(["a"])
          expect(ids((yield* server.json("/v1/records?startedFrom=2000&startedBefore=4000")).body)).toEqual(["c", "b"])
          expect(ids((yield* server.json("/v1/records?status=succeeded&hook=guard")).body)).toEqual([])
        })
      ))

    it.scopedLive("pages with limit and the next cursor until the last page", () =>
      withServer((server) =>
        Effect.gen(function*() {
          const first = (yield* server.json("/v1/records?limit=2")).body
          expect(ids(first)).toEqual(["e", "d"])
          expect(first.next).toEqual(expect.any(String))
          const second = (yield* server.json(`/v1/records?limit=2&cursor=${encodeURIComponent(first.next)}`)).body
          expect(ids(second)).toEqual(["c", "b"])
          const third = (yield* server.json(`/v1/records?limit=2&cursor=${encodeURIComponent(second.next)}`)).body
          expect(ids(third)).toEqual(["a"])
          expect(third.next).toBeUndefined()
        })
      ))

    it.scopedLive("a bad parameter: 400 malformed naming it", () =>
      withServer((server) =>
        Effect.gen(function*() {
          for (
            const [query, param] of [
              ["status=done", "status"],
              ["status=failed,", "status"],
              ["limit=-1", "limit"],
              ["limit=ten", "limit"],
              ["startedFrom=yesterday", "startedFrom"],
              ["startedBefore=1.5", "startedBefore"],
              ["hook=", "hook"],
              ["cursor=not-a-cursor", "cursor"],
              ["limit=1&limit=2", "limit"]
            ] as const
          ) {
            const { body, status } = yield* server.json(`/v1/records?${query}`)
            expect([query, status]).toEqual([query, 400])
            expect(body).toMatchObject({ _tag: "BadRequest", error: { code: "malformed", param } })
          }
        })
      ))

    it.scopedLive("one record: its ExecutionRecord encoding; an unknown one: 404", () =>
      withServer((server) =>
        Effect.gen(function*() {
          const { body, status } = yield* server.json("/v1/records/a")
          expect(status).toBe(200)
          expect(body).toEqual(Schema.encodeSync(ExecutionRecord.ExecutionRecord)(seed[0]!))
          const missing = yield* server.json("/v1/records/nope")
          expect(missing.status).toBe(404)
          expect(missing.body).toMatchObject({
            _tag: "NotFound",
            error: { type: "not_found_error", code: "not_found" }
          })
        })
      ))

    it.scopedLive("read-only: no request, resume or chat routes (404)", () =>
      withServer((server) =>
        Effect.gen(function*() {
          for (
            const path of ["/v1/requests", "/v1/requests/stream", "/v1/checkpoints/x/resume", "/v1/chat/completions"]
          ) {
            const { body, status } = yield* server.json(path, post({ request: "x" }))
            expect([path, status]).toEqual([path, 404])
            expect(body.error.code).toBe("route_not_found")
          }
        })
      ))
  })

suite("memory", () => ExecutionStore.layerMemory())

const sqliteFile = () => join(mkdtempSync(join(tmpdir(), "eap-server-")), "agent.db")
suite("sqlite", () => Sqlite.layerExecutionStore({ filename: sqliteFile() }))

describe("GET /v1/records: rows that do not decode (sqlite)", () => {
  it.scopedLive("the list counts them in undecodable and goes on; reading one or its events is 422 with its reason", () =>
    Effect.gen(function*() {
      const filename = sqliteFile()
      const server = yield* serveStore(Sqlite.layerExecutionStore({ filename }))
      const raw = yield* Layer.build(Sqlite.layerClient(filename))
      const sql = Context.get(raw, SqlClient)
      const insert = (requestId: string, body: string, version: number) =>
        sql`INSERT INTO ${sql(tablesFor().records)}
          (request_id, revision, status, started_at, stored_at, expires_at, lease_expires_at, hook_names, schema_version, body)
          VALUES (${requestId}, 1, 'succeeded', 0, ${Date.now()}, ${Number.MAX_SAFE_INTEGER}, NULL, '[]', ${version}, ${body})`
      yield* Effect.orDie(insert("broken", "{ not json", 1))
      yield* Effect.orDie(
        insert("future", JSON.stringify({ requestId: "future", request: "q", schemaVersion: 99 }), 99)
      )
      const { body } = yield* server.json("/v1/records")
      expect(body.undecodable).toBe(2)
      expect(ids(body)).toEqual(["e", "d", "c", "b", "a"])
      const broken = yield* server.json("/v1/records/broken")
      expect(broken.status).toBe(422)
      expect(broken.body).toMatchObject({ _tag: "Unprocessable", error: { code: "record_corrupt" } })
      const future = yield* server.json("/v1/records/future")
      expect(future.status).toBe(422)
      expect(future.body.error.code).toBe("record_future_version")
      // Its events: the same status and body, before any stream starts.
      const events = yield* server.json("/v1/records/broken/events")
      expect(events.status).toBe(422)
      expect(events.body).toEqual(broken.body)
      expect(JSON.stringify(events.body)).not.toContain("not json")
    }))
})
