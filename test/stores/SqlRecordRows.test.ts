/**
 * Stored rows that do not decode, on the SQL backends: a corrupt row or one
 * from a future schema version fails only its own read (`RecordDecodeError`),
 * listing goes on past it, and a legacy row (no lifecycle) decodes with
 * completion `unknown`.
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { ExecutionRecord } from "effect-agent-pipeline"
import { ExecutionStore } from "../../src/stores/ExecutionStore.js"
import { tablesFor } from "../../src/stores/sql/migrations.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTables, postgresClient, unavailable, uniquePrefix } from "../support/Backends.js"

/** Inserts a raw row, as an older / newer / broken writer could have left it. */
const insertRaw = (
  prefix: string,
  requestId: string,
  body: string,
  options: { version?: number; status?: string } = {}
) =>
  Effect.flatMap(SqlClient, (sql) => {
    const table = sql(tablesFor(prefix).records)
    const hooks = sql.onDialectOrElse({ pg: () => sql`'[]'::jsonb`, orElse: () => sql`'[]'` })
    return sql`INSERT INTO ${table}
      (request_id, revision, status, started_at, stored_at, expires_at, lease_expires_at, hook_names, schema_version, body)
      VALUES (${requestId}, 1, ${options.status ?? "succeeded"}, 0, 0, ${Number.MAX_SAFE_INTEGER}, NULL, ${hooks},
        ${options.version ?? 1}, ${body})`
  })

const suite = (name: string, client: () => Layer.Layer<SqlClient>) =>
  describe(`stored rows that do not decode: ${name}`, () => {
    const prefix = uniquePrefix()
    const layer = SqlStores.layerExecutionStore({ tablePrefix: prefix }).pipe(
      Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
      Layer.provideMerge(client()),
      Layer.orDie
    )

    it.effect("a corrupt row, a future-version row and a legacy row: each read on its own, the listing goes on", () =>
      Effect.gen(function*() {
        const store = yield* ExecutionStore
        yield* store.save(
          ExecutionRecord.decodeUnknown({
            requestId: "good",
            request: "q",
            lifecycle: { status: "succeeded", startedAt: 0 }
          })
            .pipe(Effect.runSync)
        )
        yield* insertRaw(prefix, "not-json", "{ this is not json")
        yield* insertRaw(prefix, "wrong-shape", JSON.stringify({ requestId: "wrong-shape", request: 42 }))
        yield* insertRaw(prefix, "future", JSON.stringify({ requestId: "future", request: "q", schemaVersion: 99 }), {
          version: 99
        })
        yield* insertRaw(prefix, "legacy", JSON.stringify({ requestId: "legacy", request: "q" }), { status: "unknown" })

        const notJson = yield* Effect.flip(store.get("not-json"))
        expect(notJson._tag).toBe("RecordDecodeError")
        expect(notJson._tag === "RecordDecodeError" && notJson.reason).toBe("corrupt")
        const wrongShape = yield* Effect.flip(store.get("wrong-shape"))
        expect(wrongShape._tag === "RecordDecodeError" && wrongShape.reason).toBe("corrupt")
        expect(wrongShape.message).toContain("wrong-shape")
        const future = yield* Effect.flip(store.get("future"))
        expect(future._tag === "RecordDecodeError" && future.reason).toBe("future_version")
        expect(future.message).toContain("schema version 99")

        const legacy = Option.getOrThrow(yield* store.get("legacy"))
        expect(ExecutionRecord.requestCompletion(legacy)).toBe("unknown")
        expect(Option.isSome(yield* store.get("good"))).toBe(true)

        const page = yield* store.list()
        expect(page.records.map((r) => r.requestId)).toEqual(["legacy", "good"])
        expect(page.undecodable.map((e) => [e.requestId, e.reason])).toEqual([
          ["future", "future_version"],
          ["wrong-shape", "corrupt"],
          ["not-json", "corrupt"]
        ])
        expect((yield* store.list({ status: ["unknown"] })).records.map((r) => r.requestId)).toEqual(["legacy"])
        // The sweep leaves undecodable rows alone, and purging still works around them.
        expect(yield* store.sweepAbandoned).toBe(0)
        expect(yield* store.purgeExpired).toBe(0)
      }).pipe(Effect.provide(layer)))
  })

suite("sqlite", () => Layer.orDie(SqliteClient.layer({ filename: ":memory:" })))

const skipped = unavailable("postgres")
if (skipped === undefined) suite("postgres", postgresClient)
else describe("stored rows that do not decode: postgres", () => it.skip(`skipped: ${skipped}`, () => {}))
