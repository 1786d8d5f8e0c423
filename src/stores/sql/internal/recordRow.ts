/**
 * A row of the execution records table, read back: the encoded snapshot
 * (`body`, JSON text) and the columns a read needs. A row written by a
 * newer version of the library, or whose body is not a record, is a
 * `RecordDecodeError` for that row alone.
 */
import { Either } from "effect"
import { currentSchemaVersion, type ExecutionRecord } from "../../../domain/ExecutionRecord.js"
import { decodeBody } from "../../../domain/internal/recordEncode.js"
import { expiresAt, RecordDecodeError, type RetentionSettings } from "../../contract/ExecutionStore.js"
import { hookNamesOf, leaseOf, listedStatus, startedAtOf } from "../../internal/recordQuery.js"
import type { RecordColumns } from "./recordWrites.js"

/** The columns every read selects. */
export interface StoredRow {
  readonly request_id: string
  readonly schema_version: number | string
  readonly body: string
  readonly seq: number | string
}

/** A row back into a record, or the reason it is not one. */
export const decodeRow = (row: StoredRow): Either.Either<ExecutionRecord, RecordDecodeError> => {
  const version = Number(row.schema_version)
  if (version > currentSchemaVersion) {
    return Either.left(
      new RecordDecodeError({
        requestId: row.request_id,
        reason: "future_version",
        detail: `schema version ${version} is newer than this library's ${currentSchemaVersion}`
      })
    )
  }
  let json: unknown
  try {
    json = JSON.parse(row.body)
  } catch (error) {
    return Either.left(
      new RecordDecodeError({ requestId: row.request_id, reason: "corrupt", detail: `not JSON: ${String(error)}` })
    )
  }
  // Either body format: the compact one this version writes, or the one earlier versions wrote.
  return Either.mapLeft(
    decodeBody(json),
    ({ detail, reason }) => new RecordDecodeError({ requestId: row.request_id, reason, detail })
  )
}

/**
 * The columns of `record` stored at `now`, its encoded snapshot `body`
 * beside it — or a function that encodes it, for a write whose body may
 * never be needed (`DeferredColumns`). `writer_id` names the writer whose
 * snapshot the row is exactly (`pure`: no one else's evidence merged in):
 * only then may that writer's next snapshot replace it without a merge.
 */
export const columnsOf = <B extends string | (() => string)>(
  record: ExecutionRecord,
  now: number,
  retention: RetentionSettings,
  body: B,
  pure: boolean
): Omit<RecordColumns, "body"> & { readonly body: B } => ({
  requestId: record.requestId,
  revision: record.recordRevision,
  status: listedStatus(record),
  startedAt: startedAtOf(record, now),
  storedAt: now,
  expiresAt: expiresAt(record, now, retention),
  lease: leaseOf(record) ?? null,
  hookNames: JSON.stringify(hookNamesOf(record)),
  writer: pure ? record.writer?.id ?? null : null,
  version: record.schemaVersion,
  body
})
