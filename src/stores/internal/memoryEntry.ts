/**
 * A record as the memory store keeps it: its stored body (format 2, without
 * the writer stamp — one flat string, about a third of the record's object
 * graph on the heap), decoded when it is read, and the few fields that
 * writes, caps and queries need without decoding it.
 */
import { Effect } from "effect"
import type { ExecutionRecord, LifecycleStatus } from "../../domain/ExecutionRecord.js"
import { encoded } from "../../domain/internal/recordBody.js"
import { fromCompactTrusted } from "../../domain/internal/recordCompactDecode.js"
import { ExecutionStoreError } from "../contract/ExecutionStore.js"
import { leaseOf, listedStatus, startedAtOf } from "./recordQuery.js"

/** A stored record. */
export interface Entry {
  readonly body: string
  /** The writer stamp, apart from the body (kept as its two members: no object of its own). */
  readonly writerId: string | undefined
  readonly writerSeq: number
  /**
   * Whether this is exactly the writer's snapshot (no one else's evidence
   * merged in): only then may its next snapshot replace it without a merge.
   */
  readonly pure: boolean
  readonly revision: number
  /** Whether the record has hook runs (a snapshot over one without has nothing to merge). */
  readonly hasRuns: boolean
  readonly status: LifecycleStatus | "unknown"
  readonly startedAt: number
  readonly lease: number | undefined
  readonly expiresAt: number
  readonly sequence: number
  readonly storedAt: number
  /** The body's UTF-8 size, measured once as it was written. */
  readonly bytes: number
}

/**
 * The entry of `record`. The pipeline's recorder encoded what it writes
 * when it measured it; anything else is encoded here (and may throw, for a
 * record too long to be a string: see {@link attempt}).
 */
export const entryOf = (
  record: ExecutionRecord,
  place: {
    readonly pure: boolean
    readonly expiresAt: number
    readonly sequence: number
    readonly storedAt: number
  }
): Entry => {
  const { bytes, text } = encoded(record)
  return {
    body: text,
    writerId: record.writer?.id,
    writerSeq: record.writer?.seq ?? 0,
    pure: place.pure,
    revision: record.recordRevision,
    hasRuns: record.hookInvocations.length > 0,
    status: listedStatus(record),
    startedAt: startedAtOf(record, place.storedAt),
    lease: leaseOf(record),
    expiresAt: place.expiresAt,
    sequence: place.sequence,
    storedAt: place.storedAt,
    bytes
  }
}

/** The record an entry holds (a new object on every read). */
export const recordOf = (entry: Entry): ExecutionRecord => {
  const record = fromCompactTrusted(JSON.parse(entry.body))
  return entry.writerId === undefined ? record : { ...record, writer: { id: entry.writerId, seq: entry.writerSeq } }
}

/**
 * A write at `now`, its failure to encode (a record longer than a string
 * can be, or not JSON) an {@link ExecutionStoreError} like a SQL store's.
 */
export const attempt = <A>(write: (now: number) => A) => (now: number): Effect.Effect<A, ExecutionStoreError> => {
  try {
    return Effect.succeed(write(now))
  } catch (error) {
    return Effect.fail(new ExecutionStoreError({ operation: "encode", detail: String(error) }))
  }
}
