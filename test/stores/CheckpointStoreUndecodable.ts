/**
 * Class 1 of issue 17 (tampered checkpoints), at the store: a SQL row whose
 * body was rewritten so that it no longer decodes is never handed out and
 * never left claimed. `get` and `claim` fail with `CheckpointDecodeError`
 * naming the request it is filed under; the row stays (for forensics),
 * unclaimed, and every later claim is refused the same way. Run against
 * every SQL backend (the memory store keeps decoded values: it has no body
 * to rewrite).
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option, Schema } from "effect"
import { Sealed } from "../../src/domain/Checkpoint.js"
import * as CheckpointKey from "../../src/stores/CheckpointKey.js"
import { CheckpointStore } from "../../src/stores/CheckpointStore.js"

/** A fresh store and the SQL client over its database, with the checkpoints table's name. */
export type MakeSqlCheckpointStore = () => {
  readonly layer: Layer.Layer<CheckpointStore | SqlClient>
  readonly table: string
}

const checkpoint = (checkpointId: string) =>
  CheckpointKey.makeRandom().seal(
    Schema.decodeUnknownSync(Sealed.omit("planDigest"))({
      checkpointId,
      requestId: `request-of-${checkpointId}`,
      request: "Buy 10 shares of ACME",
      metadata: {},
      enrichments: {},
      phase: 1,
      plan: { steps: [{ step_id: "q1", namespace: "demo-tools", agent: "stock-service", capability: "stock_quote" }] },
      priorPhases: [],
      reason: "needs a human",
      createdAt: 1_000
    })
  )

/** Bodies a second connection could leave behind, none of them a checkpoint. */
const rewrites: ReadonlyArray<readonly [string, string]> = [
  ["not JSON", "{not json"],
  ["JSON, not a checkpoint", JSON.stringify({ hello: "world" })],
  ["a checkpoint with a step id that is not one", "PLAN_WITH_BAD_STEP_ID"],
  ["nested deeper than a checkpoint allows", `{"metadata":${"[".repeat(5_000)}${"]".repeat(5_000)}}`]
]

/**
 * Registers the suite for one SQL backend.
 *
 * @param name - the backend's name, shown in the describe block
 * @param make - a fresh store with its SQL client
 */
export const undecodableCheckpoints = (name: string, make: MakeSqlCheckpointStore): void => {
  describe(`tampered checkpoints at the store: ${name}`, () => {
    for (const [label, rewritten] of rewrites) {
      it.effect(`tampered checkpoints: a body rewritten to ${label} is a CheckpointDecodeError for get and claim, and the claim is not left held`, () => {
        const { layer, table } = make()
        return Effect.gen(function*() {
          const store = yield* CheckpointStore
          const sql = yield* SqlClient
          const original = checkpoint("c-1")
          yield* store.save(original)
          const body = rewritten === "PLAN_WITH_BAD_STEP_ID"
            ? JSON.stringify({ ...Schema.encodeSync(Sealed)(original), mac: original.mac }).replace("\"q1\"", "\"q 1\"")
            : rewritten
          yield* sql`UPDATE ${sql(table)} SET body = ${body} WHERE checkpoint_id = ${"c-1"}`

          const read = yield* Effect.flip(store.get("c-1"))
          expect(read).toMatchObject({
            _tag: "CheckpointDecodeError",
            checkpointId: "c-1",
            requestId: "request-of-c-1"
          })
          expect(read.detail.length).toBeLessThan(1_200)

          for (const owner of ["a", "b"]) {
            const claimed = yield* Effect.flip(store.claim("c-1", { owner, leaseFor: "5 minutes" }))
            expect(claimed).toMatchObject({
              _tag: "CheckpointDecodeError",
              checkpointId: "c-1",
              requestId: "request-of-c-1"
            })
            // Released at once: the row is there, with nobody holding it.
            const rows = yield* sql<{ readonly claim_owner: string | null }>`SELECT claim_owner FROM ${sql(table)}
              WHERE checkpoint_id = ${"c-1"}`
            expect(rows).toEqual([{ claim_owner: null }])
          }
          // Nothing to complete: the claims were released.
          expect(yield* store.complete("c-1", "a")).toBe(false)
          expect(yield* store.complete("c-1", "b")).toBe(false)

          // The other checkpoints are untouched.
          yield* store.save(checkpoint("c-2"))
          expect(Option.isSome(yield* store.get("c-2"))).toBe(true)
        }).pipe(Effect.provide(layer))
      })
    }
  })
}
