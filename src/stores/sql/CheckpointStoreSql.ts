/**
 * The CheckpointStore over `@effect/sql` (SQLite and PostgreSQL). A claim
 * is one conditional `UPDATE` (the checkpoint is unclaimed, or its claim's
 * lease ran out), so two processes resuming the same checkpoint can never
 * both hold it; `complete` and `release` act only for the claim's owner.
 * A stored body that does not decode is never handed out and never left
 * claimed: `get` and `claim` fail with `CheckpointDecodeError` (a claim
 * that took is released first); the row stays, for forensics.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Option, ParseResult, Schema } from "effect"
import { Checkpoint } from "../../domain/Checkpoint.js"
import { CheckpointDecodeError, CheckpointStore, type Claim, ClaimResult } from "../contract/CheckpointStore.js"
import { ExecutionStoreError } from "../contract/ExecutionStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import type { Tables } from "./migrations.js"

const encode = Schema.encodeEither(Checkpoint)
const decode = Schema.decodeUnknownEither(Checkpoint)

// The driver's own cause in the detail (SQLITE_BUSY, ECONNRESET…), not only "Failed to execute statement".
const storeError = (operation: string) => (error: SqlError) =>
  new ExecutionStoreError({ operation: `checkpoint ${operation}`, detail: errorDetail(error), cause: error })

/** A stored row: the body and the request it is filed under. */
interface Row {
  readonly body: unknown
  readonly request_id: unknown
}

// A rewritten body may be huge: the error says what is wrong, not all of it.
const excerpt = (
  text: string
): string => (text.length > 1_000 ? `${text.slice(0, 1_000)}… (${text.length} characters)` : text)

/** A stored body back into a checkpoint; one that does not decode is a `CheckpointDecodeError` naming it. */
const decodeBody = (checkpointId: string, row: Row) => {
  const undecodable = (detail: string) =>
    new CheckpointDecodeError({
      checkpointId,
      ...(typeof row.request_id === "string" ? { requestId: row.request_id } : {}),
      detail: excerpt(detail)
    })
  return Effect.try({
    try: (): unknown => {
      if (typeof row.body !== "string") {
        throw new Error(`the body is a ${row.body === null ? "null" : typeof row.body}, not JSON text`)
      }
      return JSON.parse(row.body)
    },
    catch: (error) => undecodable(`not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }).pipe(
    Effect.flatMap((json) =>
      Effect.mapError(decode(json), (error) => undecodable(ParseResult.TreeFormatter.formatErrorSync(error)))
    )
  )
}

/**
 * Builds the store over the current `SqlClient`, on tables the migrations
 * made (`SqlStores.layerCheckpointStore` migrates first, then calls it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (tables: Tables): Effect.Effect<CheckpointStore.Service, never, SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const table = sql(tables.checkpoints)

    const save = (checkpoint: Checkpoint) =>
      Effect.gen(function*() {
        const encoded = yield* Effect.mapError(encode(checkpoint), (error) =>
          new ExecutionStoreError({
            operation: "checkpoint save",
            detail: ParseResult.TreeFormatter.formatErrorSync(error)
          }))
        const body = JSON.stringify(encoded)
        yield* sql`INSERT INTO ${table} (checkpoint_id, request_id, body, created_at, claim_owner, claim_expires_at)
          VALUES (${checkpoint.checkpointId}, ${checkpoint.requestId}, ${body}, ${checkpoint.createdAt}, NULL, NULL)
          ON CONFLICT (checkpoint_id) DO UPDATE SET
            request_id = excluded.request_id, body = excluded.body, created_at = excluded.created_at,
            claim_owner = NULL, claim_expires_at = NULL`.pipe(Effect.mapError(storeError("save")))
      })

    const get = (checkpointId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT body, request_id FROM ${table}
          WHERE checkpoint_id = ${checkpointId}`.pipe(Effect.mapError(storeError("get")))
        const row = rows[0]
        return row === undefined ? Option.none() : Option.some(yield* decodeBody(checkpointId, row))
      })

    const claim: CheckpointStore.Service["claim"] = (checkpointId, { leaseFor, owner }) =>
      Effect.gen(function*() {
        // The conditional claim, then — when it did not take — who holds it.
        // A claim released in between is tried again.
        for (let attempt = 0; attempt < 10; attempt++) {
          const now = yield* Clock.currentTimeMillis
          const expiresAt = now + Duration.toMillis(leaseFor)
          const claimed = yield* sql<Row>`UPDATE ${table}
            SET claim_owner = ${owner}, claim_expires_at = ${expiresAt}
            WHERE checkpoint_id = ${checkpointId}
              AND (claim_owner IS NULL OR claim_expires_at <= ${now})
            RETURNING body, request_id`.pipe(Effect.mapError(storeError("claim")))
          const row = claimed[0]
          if (row !== undefined) {
            // An undecodable body is not ours to hold: the claim is released
            // before the failure is reported (a release that fails too still
            // runs out with its lease).
            const checkpoint = yield* decodeBody(checkpointId, row).pipe(
              Effect.tapError(() =>
                release(checkpointId, owner).pipe(
                  Effect.catchAll((error) =>
                    Effect.logWarning("undecodable checkpoint's claim not released", error.message).pipe(
                      Effect.annotateLogs({ checkpointId, owner })
                    )
                  )
                )
              )
            )
            const held: Claim = { owner, expiresAt }
            return ClaimResult.Claimed({ checkpoint, claim: held })
          }
          const holders = yield* sql<{
            readonly claim_owner: string | null
            readonly claim_expires_at: number | string | null
          }>`SELECT claim_owner, claim_expires_at FROM ${table}
            WHERE checkpoint_id = ${checkpointId}`.pipe(Effect.mapError(storeError("claim")))
          const holder = holders[0]
          if (holder === undefined) return ClaimResult.NotFound()
          if (
            holder.claim_owner !== null && holder.claim_expires_at !== null && Number(holder.claim_expires_at) > now
          ) {
            return ClaimResult.AlreadyClaimed({ owner: holder.claim_owner, expiresAt: Number(holder.claim_expires_at) })
          }
        }
        return yield* new ExecutionStoreError({
          operation: "checkpoint claim",
          detail: `${checkpointId}: the claim kept changing; gave up after 10 attempts`
        })
      })

    const complete = (checkpointId: string, owner: string) =>
      Effect.map(
        sql`DELETE FROM ${table} WHERE checkpoint_id = ${checkpointId} AND claim_owner = ${owner}
          RETURNING checkpoint_id`.pipe(Effect.mapError(storeError("complete"))),
        (rows) => rows.length > 0
      )

    const release = (checkpointId: string, owner: string) =>
      Effect.map(
        sql`UPDATE ${table} SET claim_owner = NULL, claim_expires_at = NULL
          WHERE checkpoint_id = ${checkpointId} AND claim_owner = ${owner}
          RETURNING checkpoint_id`.pipe(Effect.mapError(storeError("release"))),
        (rows) => rows.length > 0
      )

    return CheckpointStore.of({ save, get, claim, complete, release })
  })
