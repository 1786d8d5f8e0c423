/**
 * The activity signal backend over `@effect/sql` — one implementation for
 * SQLite and PostgreSQL. A signal is one row keyed by its id; expiry is a
 * column compared with the time the front service passes in, so the
 * database's own clock never decides liveness. A domain's expired rows are
 * deleted as new signals are announced in it.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { Json } from "../../domain/Json.js"
import { type ActivitySignal, ActivitySignalStore, ActivityStoreError } from "../contract/ActivityStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import type { Tables } from "./migrations.js"

interface SignalRow {
  readonly signal_id: string
  readonly domain: string
  readonly agent: string
  readonly request_id: string
  readonly summary: string
  readonly data: string | null
  readonly announced_at: number | string
  readonly expires_at: number | string
}

const decodeData = Schema.decodeUnknownEither(Schema.parseJson(Json))

const storeError = (operation: string) => (error: SqlError) =>
  new ActivityStoreError({ operation, detail: errorDetail(error), cause: error })

/** A row back into a signal; a row whose data does not decode is skipped (and logged). */
const fromRow = (row: SignalRow): ActivitySignal | undefined => {
  const base = {
    signalId: row.signal_id,
    domain: row.domain,
    agent: row.agent,
    requestId: row.request_id,
    summary: row.summary,
    announcedAt: Number(row.announced_at),
    expiresAt: Number(row.expires_at)
  }
  if (row.data === null) return base
  const data = decodeData(row.data)
  return data._tag === "Right" ? { ...base, data: data.right } : undefined
}

/**
 * Builds the backend over the current `SqlClient`, on the table the
 * migrations made (`SqlStores.layerActivitySignalStore` migrates first,
 * then calls it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  tables: Pick<Tables, "activitySignals">
): Effect.Effect<ActivitySignalStore.Service, never, SqlClient> =>
  Effect.map(SqlClient, (sql) => {
    const table = sql(tables.activitySignals)

    // Expired rows of the domain go first; that clean-up is best effort (a
    // failure there does not fail the announcement, the rows are filtered
    // out on reading anyway).
    const put = (signal: ActivitySignal, now: number) =>
      sql`DELETE FROM ${table} WHERE domain = ${signal.domain} AND expires_at <= ${now}`.pipe(
        Effect.ignore,
        Effect.zipRight(sql`INSERT INTO ${table}
          (signal_id, domain, agent, request_id, summary, data, announced_at, expires_at)
          VALUES (${signal.signalId}, ${signal.domain}, ${signal.agent}, ${signal.requestId}, ${signal.summary},
            ${
          signal.data === undefined ? null : JSON.stringify(signal.data)
        }, ${signal.announcedAt}, ${signal.expiresAt})
          ON CONFLICT (signal_id) DO UPDATE SET
            domain = excluded.domain,
            agent = excluded.agent,
            request_id = excluded.request_id,
            summary = excluded.summary,
            data = excluded.data,
            announced_at = excluded.announced_at,
            expires_at = excluded.expires_at`),
        Effect.asVoid,
        Effect.mapError(storeError("announce"))
      )

    const extend = (signalId: string, expiresAt: number, now: number) =>
      sql`UPDATE ${table} SET expires_at = ${expiresAt}
        WHERE signal_id = ${signalId} AND expires_at > ${now}
        RETURNING signal_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(storeError("renew"))
      )

    const remove = (signalId: string) =>
      sql`DELETE FROM ${table} WHERE signal_id = ${signalId} RETURNING signal_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(storeError("remove"))
      )

    const list = (domain: string, now: number) =>
      sql<SignalRow>`SELECT signal_id, domain, agent, request_id, summary, data, announced_at, expires_at
        FROM ${table} WHERE domain = ${domain} AND expires_at > ${now}`.pipe(
        Effect.mapError(storeError("listActive")),
        Effect.flatMap((rows) => {
          const signals: Array<ActivitySignal> = []
          const skipped: Array<string> = []
          for (const row of rows) {
            const signal = fromRow(row)
            if (signal === undefined) skipped.push(row.signal_id)
            else signals.push(signal)
          }
          return skipped.length === 0
            ? Effect.succeed(signals)
            : Effect.as(Effect.logWarning("activity signals with undecodable data skipped", skipped), signals)
        })
      )

    return ActivitySignalStore.of({ put, extend, delete: remove, list })
  })
