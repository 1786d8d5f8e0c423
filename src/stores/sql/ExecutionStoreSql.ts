/**
 * The ExecutionStore over `@effect/sql` — one implementation for SQLite and
 * PostgreSQL. A record is one row: its encoded snapshot (`body`, JSON) and
 * the columns queries need (revision, status, start, retention, lease, hook
 * names). Revision gating is a conditional write in the database
 * (`INSERT … ON CONFLICT … DO UPDATE … WHERE revision < excluded.revision`),
 * so writers in different processes can never regress a record (C15).
 * A row that does not decode fails only its own read.
 *
 * The hot writes — `create` at a request's start, `save` at its end — are
 * one statement each and group-committed (`internal/recordWrites.ts`): the
 * writes of concurrent requests share statements and commits, each caller
 * waiting for its own answer; a request's create that nobody waits for is
 * handed over with no fiber (`stores/internal/detachedCreates.ts`). A save needing
 * a merge (another writer's evidence in the stored row) falls back to a
 * read-modify-write.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Clock, Duration, Effect, Either, Exit, Option, type Scope } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { encodeBody } from "../../domain/internal/recordEncode.js"
import { mergeStoredEvidence } from "../../domain/internal/recordMerge.js"
import {
  type CreateResult,
  defaultPageSize,
  defaultRetention,
  ExecutionStore,
  ExecutionStoreError,
  maxPageSize,
  type RecordDecodeError,
  type RecordPage,
  type RetentionSettings,
  type SaveResult,
  type UpdateResult
} from "../contract/ExecutionStore.js"
import { createFailure, withDetachedCreate } from "../internal/detachedCreates.js"
import { errorDetail } from "../internal/errorDetail.js"
import { abandoned, decodeCursor, encodeCursor, pageSize } from "../internal/recordQuery.js"
import { columnsOf, decodeRow, type StoredRow } from "./internal/recordRow.js"
import * as RecordWrites from "./internal/recordWrites.js"
import type { RecordColumns } from "./internal/recordWrites.js"
import type { Tables } from "./migrations.js"

/**
 * Options of the SQL execution store.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqlExecutionStoreOptions {
  readonly retention?: RetentionSettings | undefined
  /** Most writes group-committed together (default 64). */
  readonly maxBatch?: number | undefined
  /** See {@link SqlStoreOptions}' `asyncCommit` (`SqlStores.ts`). */
  readonly asyncCommit?: boolean | undefined
}

const storeError = (operation: string) => (error: SqlError) =>
  new ExecutionStoreError({ operation, detail: errorDetail(error), cause: error })

/**
 * Builds the store over the current `SqlClient`, on tables the migrations
 * made (`SqlStores.layerExecutionStore` migrates first, then calls it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  tables: Tables,
  options: SqlExecutionStoreOptions = {}
): Effect.Effect<ExecutionStore.Service, never, SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const retention = options.retention ?? defaultRetention
    const millis: RetentionSettings = {
      normal: Duration.millis(Duration.toMillis(retention.normal)),
      error: Duration.millis(Duration.toMillis(retention.error))
    }
    const table = sql(tables.records)
    const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
    // Reads wait for the writes submitted before them (`settled`): a write
    // whose caller does not wait for it — a request's create — is still seen.
    const writes = yield* RecordWrites.make(sql, tables.records, {
      maxBatch: options.maxBatch,
      asyncCommit: options.asyncCommit
    })

    /** The columns of a record stored at `now` (`pure`: see `columnsOf`). */
    const columns = (record: ExecutionRecord, now: number, pure = true) =>
      Effect.map(
        Effect.try({
          try: () => encodeBody(record),
          catch: (error) => new ExecutionStoreError({ operation: "encode", detail: String(error) })
        }),
        (body) => columnsOf(record, now, millis, body, pure)
      )

    const hookNamesValue = (c: RecordColumns) => isPg ? sql`${c.hookNames}::jsonb` : sql`${c.hookNames}`

    const insert = (c: RecordColumns) =>
      sql`INSERT INTO ${table}
        (request_id, revision, status, started_at, stored_at, expires_at, lease_expires_at, hook_names, writer_id, schema_version, body)
        VALUES (${c.requestId}, ${c.revision}, ${c.status}, ${c.startedAt}, ${c.storedAt}, ${c.expiresAt}, ${c.lease}, ${
        hookNamesValue(c)
      }, ${c.writer}, ${c.version}, ${c.body})`

    // One statement, group-committed with other requests' writes: an absent
    // id is inserted, an expired record replaced (it does not hold its id),
    // a live one left alone; two creates racing are decided by the unique key.
    const create = (record: ExecutionRecord) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(columns(record, now), (c) =>
          Effect.map(
            writes.submit({ kind: "create", columns: c }),
            (written): CreateResult => (written ? "created" : "exists")
          )))

    /** The stored row of a request (live or expired), if any. */
    const readRow = (requestId: string, operation: string) =>
      Effect.map(
        Effect.zipRight(
          writes.settled,
          sql<StoredRow & { readonly revision: number | string; readonly expires_at: number | string }>`
          SELECT seq, request_id, revision, expires_at, schema_version, body FROM ${table}
          WHERE request_id = ${requestId}`
        ).pipe(Effect.mapError(storeError(operation))),
        (rows) => rows[0]
      )

    /**
     * Writes `c` over the row read at `readRevision` (or as a new row when
     * none was read): false when another writer changed the row meanwhile.
     */
    const writeOver = (
      c: RecordColumns,
      read: { readonly revision: number; readonly expired: boolean } | undefined,
      operation: string
    ) =>
      Effect.map(
        read === undefined
          ? sql`${insert(c)} ON CONFLICT (request_id) DO NOTHING RETURNING seq`
          : sql`UPDATE ${table} SET
              revision = ${c.revision}, status = ${c.status}, started_at = ${c.startedAt},
              stored_at = ${read.expired ? sql`${c.storedAt}` : sql`stored_at`},
              expires_at = ${c.expiresAt}, lease_expires_at = ${c.lease}, hook_names = ${hookNamesValue(c)},
              writer_id = ${c.writer}, schema_version = ${c.version}, body = ${c.body}
            WHERE request_id = ${c.requestId} AND revision = ${read.revision}
            RETURNING seq`,
        (rows) => rows.length > 0
      ).pipe(Effect.mapError(storeError(operation)))

    /** A read-modify-write, retried while other writers get there first. */
    const readModifyWrite = <A>(
      requestId: string,
      operation: string,
      step: (now: number, row: Effect.Effect.Success<ReturnType<typeof readRow>>) => Effect.Effect<
        | { readonly done: A }
        | { readonly write: ExecutionRecord; readonly result: A; readonly pure: boolean },
        ExecutionStoreError | RecordDecodeError
      >
    ): Effect.Effect<A, ExecutionStoreError | RecordDecodeError> =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < 50; attempt++) {
          const now = yield* Clock.currentTimeMillis
          const row = yield* readRow(requestId, operation)
          const next = yield* step(now, row)
          if ("done" in next) return next.done
          const c = yield* columns(next.write, now, next.pure)
          const read = row === undefined
            ? undefined
            : { revision: Number(row.revision), expired: Number(row.expires_at) <= now }
          if (yield* writeOver(c, read, operation)) return next.result
        }
        return yield* new ExecutionStoreError({
          operation,
          detail: "too many concurrent writers; gave up after 50 attempts"
        })
      })

    /**
     * One statement for the common case, group-committed — the stored row
     * is absent, expired, or an older snapshot that needs no merge (the
     * same writer's: a writer's snapshots are cumulative; or one with no
     * hook runs, such as the record `create` wrote) — else the
     * read-modify-write below.
     */
    const saveOneStatement = (record: ExecutionRecord) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(columns(record, now), (c) => writes.submit({ kind: "save", columns: c })))

    const save = (record: ExecutionRecord) =>
      Effect.flatMap(saveOneStatement(record), (written) =>
        written ? Effect.succeed<SaveResult>("written") : saveMerging(record))

    const saveMerging = (record: ExecutionRecord) =>
      readModifyWrite<SaveResult>(record.requestId, "save", (now, row) => {
        if (row === undefined || Number(row.expires_at) <= now) {
          return Effect.succeed({ write: record, result: "written", pure: true })
        }
        if (Number(row.revision) >= record.recordRevision) {
          return Effect.succeed({ done: "stale" })
        }
        // A stored row that does not decode is replaced by the newer snapshot.
        const stored = decodeRow(row)
        const merged = Either.isRight(stored) ? mergeStoredEvidence(stored.right, record) : record
        return Effect.succeed({ write: merged, result: "written", pure: merged === record })
      }).pipe(
        // Decode errors are handled above; only store errors remain.
        Effect.catchTag(
          "RecordDecodeError",
          (error) =>
            new ExecutionStoreError({ operation: "save", detail: error.message, cause: error })
        )
      )

    const update: ExecutionStore.Service["update"] = (requestId, f) =>
      readModifyWrite<UpdateResult>(requestId, "update", (now, row) => {
        if (row === undefined || Number(row.expires_at) <= now) {
          return Effect.succeed({ done: "missing" })
        }
        return Effect.map(decodeRow(row), (stored) => {
          const next = f(stored)
          return next === undefined
            ? { done: "unchanged" }
            : {
              write: { ...next, recordRevision: Math.max(Number(row.revision) + 1, next.recordRevision) },
              result: "written",
              pure: false
            }
        })
      })

    const get = (requestId: string) =>
      Effect.gen(function*() {
        yield* writes.settled
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<StoredRow>`SELECT seq, request_id, schema_version, body FROM ${table}
          WHERE request_id = ${requestId} AND expires_at > ${now}`.pipe(Effect.mapError(storeError("get")))
        const row = rows[0]
        if (row === undefined) {
          return Option.none()
        }
        return Option.some(yield* decodeRow(row))
      })

    const list: ExecutionStore.Service["list"] = (query = {}) =>
      Effect.gen(function*() {
        yield* writes.settled
        const now = yield* Clock.currentTimeMillis
        const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
        if (query.cursor !== undefined && before === undefined) {
          return yield* new ExecutionStoreError({ operation: "list", detail: `not a cursor: ${query.cursor}` })
        }
        const size = pageSize(query.limit, defaultPageSize, maxPageSize)
        if (size === 0) {
          return { records: [], undecodable: [] } satisfies RecordPage
        }
        const where: Array<Fragment> = [sql`expires_at > ${now}`]
        if (before !== undefined) {
          where.push(sql`seq < ${before}`)
        }
        if (query.status !== undefined) {
          if (query.status.length === 0) {
            return { records: [], undecodable: [] } satisfies RecordPage
          }
          where.push(sql.in("status", query.status))
        }
        if (query.startedFrom !== undefined) {
          where.push(sql`started_at >= ${query.startedFrom}`)
        }
        if (query.startedBefore !== undefined) {
          where.push(sql`started_at < ${query.startedBefore}`)
        }
        if (query.hook !== undefined) {
          where.push(
            isPg
              ? sql`hook_names @> ${JSON.stringify([query.hook])}::jsonb`
              : sql`EXISTS (SELECT 1 FROM json_each(hook_names) WHERE json_each.value = ${query.hook})`
          )
        }
        const rows = yield* sql<StoredRow>`SELECT seq, request_id, schema_version, body FROM ${table}
          WHERE ${sql.and(where)} ORDER BY seq DESC LIMIT ${size + 1}`.pipe(Effect.mapError(storeError("list")))
        const page = rows.slice(0, size)
        const records: Array<ExecutionRecord> = []
        const undecodable: Array<RecordDecodeError> = []
        for (const row of page) {
          Either.match(decodeRow(row), {
            onLeft: (error) =>
              undecodable.push(error),
            onRight: (record) =>
              records.push(record)
          })
        }
        const last = page[page.length - 1]
        return {
          records,
          undecodable,
          next: rows.length > size && last !== undefined ? encodeCursor(Number(last.seq)) : undefined
        } satisfies RecordPage
      })

    const purgeExpired = Effect.gen(function*() {
      yield* writes.settled
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql`DELETE FROM ${table} WHERE expires_at <= ${now} RETURNING seq`.pipe(
        Effect.mapError(storeError("purgeExpired"))
      )
      return rows.length
    })

    const sweepAbandoned = Effect.gen(function*() {
      yield* writes.settled
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql<StoredRow & { readonly revision: number | string }>`
        SELECT seq, request_id, revision, schema_version, body FROM ${table}
        WHERE status = 'running' AND lease_expires_at IS NOT NULL AND lease_expires_at <= ${now}
          AND expires_at > ${now}`.pipe(Effect.mapError(storeError("sweepAbandoned")))
      let marked = 0
      for (const row of rows) {
        const decoded = decodeRow(row)
        // An undecodable row stays as it is: its reader gets the decode error.
        if (Either.isLeft(decoded)) continue
        const next = abandoned(decoded.right, now)
        const c = yield* columns(next, now)
        // Conditional on the revision read: a renewal or a final write that
        // got there first wins, and this row is left alone.
        const updated = yield* sql`UPDATE ${table} SET
            revision = ${c.revision}, status = ${c.status}, expires_at = ${c.expiresAt},
            lease_expires_at = NULL, writer_id = NULL, body = ${c.body}
          WHERE request_id = ${row.request_id} AND revision = ${Number(row.revision)}
          RETURNING seq`.pipe(Effect.mapError(storeError("sweepAbandoned")))
        marked += updated.length
      }
      return marked
    })

    const service = ExecutionStore.of({ create, save, update, get, list, purgeExpired, sweepAbandoned })
    // A generated id's create, with no fiber waiting for it, its body encoded only if needed.
    return withDetachedCreate(service, (record, now, onFailure) =>
      writes.submitDetached(
        { kind: "create", columns: columnsOf(record, now, millis, () => encodeBody(record), true) },
        (exit) => Exit.isFailure(exit) && onFailure(createFailure(exit.cause))
      ))
  })
