/**
 * Retention of finished workflow executions (issue 24). The cluster keeps
 * every execution's rows forever: a `run` request in `<prefix>_messages`
 * with its reply in `<prefix>_replies`, plus one request and reply per
 * activity, deferred and durable clock. Nothing in `@effect/cluster` 0.60
 * deletes them (`MessageStorage.clearAddress` clears one address), so this
 * job does, in batches:
 *
 * - an execution is finished when the reply to its `run` request is a
 *   `Complete` result (`{"_tag":"Success","value":{"_tag":"Complete",…`),
 *   succeeded or failed; a suspended execution (awaiting a `DurableDeferred`
 *   or a clock) replies `Suspended`, a running one has no reply: both kept;
 * - its age is the time of that reply: reply ids are the cluster's
 *   Snowflakes, whose top bits are milliseconds since 2025-01-01
 *   (`(id >> 22) + Snowflake.constEpochMillis`);
 * - all rows of that execution id under `Workflow/…` entity types go (the
 *   workflow's own, and its `Workflow/-/DurableClock` rows).
 *
 * Deleting an execution also forgets its idempotency: the same request id
 * submitted again afterwards runs again, from the start, as a new execution.
 * So `olderThan` must be longer than any window in which a client may
 * re-submit a request (retries, at-least-once queues) and expect the stored
 * result back.
 */
import * as Snowflake from "@effect/cluster/Snowflake"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Layer, Schedule } from "effect"
import { defaultPrefix } from "./durableEngineConfig.js"
import { clusterTables } from "./durableStorage.js"

/** How many executions one sweep deletes per transaction. */
export const defaultBatchSize = 500

/** What a sweep deletes. */
export interface RetentionOptions {
  /** The cluster's table prefix (default `eap_cluster`). */
  readonly prefix?: string | undefined
  /** Executions finished longer ago than this are deleted. */
  readonly olderThan: Duration.DurationInput
  /** Executions per batch (default 500): each batch is one short transaction. */
  readonly batchSize?: number | undefined
}

/** The reply payload of a finished `run`, as the cluster stores it (JSON text). */
const completePrefix = `{"_tag":"Success","value":{"_tag":"Complete"%`

/** The execution ids of one batch of finished executions older than the cutoff. */
const finishedBefore = (sql: SqlClient, prefix: string, cutoffMillis: number, limit: number) => {
  const t = clusterTables(prefix)
  return sql<{ readonly entity_id: string }>`
    SELECT DISTINCT m.entity_id AS entity_id
    FROM ${sql(t.messages)} m
    JOIN ${sql(t.replies)} r ON r.request_id = m.id AND r.kind = 0
    WHERE m.entity_type LIKE 'Workflow/%' AND m.tag = 'run'
      AND r.payload LIKE ${completePrefix}
      AND (r.id >> 22) + ${Snowflake.constEpochMillis} < ${cutoffMillis}
    LIMIT ${limit}`
}

/** Deletes the rows of these executions (replies first: they point at the requests). */
const deleteExecutions = (sql: SqlClient, prefix: string, ids: ReadonlyArray<string>) => {
  const t = clusterTables(prefix)
  return Effect.zipRight(
    sql`DELETE FROM ${sql(t.replies)} WHERE request_id IN (
      SELECT id FROM ${sql(t.messages)} WHERE entity_type LIKE 'Workflow/%' AND ${sql.in("entity_id", ids)}
    )`,
    sql`DELETE FROM ${sql(t.messages)} WHERE entity_type LIKE 'Workflow/%' AND ${sql.in("entity_id", ids)}`
  )
}

/**
 * One sweep: deletes, batch by batch, every execution that finished longer
 * than `olderThan` ago; returns how many executions it deleted. Suspended
 * and running executions are kept. Runs over the engine's `SqlClient`
 * (SQLite or PostgreSQL), while runners are live: a finished execution gets
 * no new rows.
 */
export const sweepFinished = (options: RetentionOptions): Effect.Effect<number, SqlError, SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const prefix = options.prefix ?? defaultPrefix
    const limit = Math.max(1, Math.floor(options.batchSize ?? defaultBatchSize))
    const cutoffMillis = Date.now() - Duration.toMillis(Duration.decode(options.olderThan))
    let deleted = 0
    for (;;) {
      const batch = yield* sql.withTransaction(
        Effect.gen(function*() {
          const rows = yield* finishedBefore(sql, prefix, cutoffMillis, limit)
          const ids = rows.map((row) => String(row.entity_id))
          if (ids.length > 0) yield* deleteExecutions(sql, prefix, ids)
          return ids.length
        })
      )
      deleted += batch
      if (batch < limit) return deleted
    }
  }).pipe(Effect.withSpan("durable.retention.sweep"))

/** A retention job on a schedule. */
export interface RetentionJobOptions extends RetentionOptions {
  /** How often to sweep (first sweep at start). */
  readonly every: Duration.DurationInput
}

/**
 * The retention job as a scoped Layer: sweeps at start and then every
 * `every`, in a fiber that lives as long as the Layer. A failed sweep is
 * logged as a warning and the job goes on (the next sweep retries).
 */
export const layerRetention = (options: RetentionJobOptions): Layer.Layer<never, never, SqlClient> =>
  Layer.scopedDiscard(
    sweepFinished(options).pipe(
      Effect.tap((deleted) =>
        deleted > 0 ? Effect.logDebug(`durable retention: deleted ${deleted} finished executions`) : Effect.void
      ),
      Effect.catchAllCause((cause) => Effect.logWarning("durable retention: sweep failed", cause)),
      Effect.repeat(Schedule.spaced(options.every)),
      Effect.annotateLogs({ module: "durableRetention", prefix: options.prefix ?? defaultPrefix }),
      Effect.forkScoped
    )
  )
