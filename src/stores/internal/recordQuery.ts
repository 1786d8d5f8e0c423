/**
 * What every ExecutionStore backend shares about a stored record: the
 * columns derived from it (completion, start time, hook names, lease) and
 * how a `list` query and its cursor are read.
 */
import { type ExecutionRecord, requestCompletion } from "../../domain/ExecutionRecord.js"

/** The completion a record is listed under (`unknown` for a legacy record). */
export const listedStatus = (record: ExecutionRecord) => requestCompletion(record)

/** When the request started: its lifecycle's start, else when it was first stored. */
export const startedAtOf = (record: ExecutionRecord, storedAt: number): number =>
  record.lifecycle?.startedAt ?? storedAt

/** The distinct names of the hooks with an invocation in the record. */
export const hookNamesOf = (record: ExecutionRecord): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const invocation of record.hookInvocations) names.add(invocation.name)
  return [...names]
}

/** The lease of a running record (epoch ms), if it has one. */
export const leaseOf = (record: ExecutionRecord): number | undefined =>
  record.lifecycle?.status === "running" ? record.lifecycle.leaseExpiresAt : undefined

/** The record marked abandoned at `now`, one revision on. */
export const abandoned = (record: ExecutionRecord, now: number): ExecutionRecord => {
  const { leaseExpiresAt: _lease, ...lifecycle } = record.lifecycle ?? { startedAt: now }
  // Written by the sweep, not by the record's writer.
  const { writer: _writer, ...rest } = record
  return {
    ...rest,
    recordRevision: record.recordRevision + 1,
    lifecycle: {
      ...lifecycle,
      status: "abandoned",
      endedAt: now,
      errorTag: "Abandoned",
      errorMessage: "the process running this request stopped renewing its lease"
    }
  }
}

/** A page size from a query's `limit`. */
export const pageSize = (limit: number | undefined, defaultSize: number, maxSize: number): number =>
  limit === undefined || Number.isNaN(limit) ? defaultSize : Math.max(0, Math.min(maxSize, Math.floor(limit)))

/** A cursor is the creation sequence number of the last record of a page. */
export const encodeCursor = (sequence: number): string => `s${sequence}`

/** The sequence a cursor names, or undefined when it is not a cursor. */
export const decodeCursor = (cursor: string): number | undefined => {
  const match = /^s(\d{1,15})$/.exec(cursor)
  return match === null ? undefined : Number(match[1])
}
