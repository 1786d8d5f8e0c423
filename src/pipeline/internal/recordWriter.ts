/**
 * How a request's record reaches its store: the writer a request's
 * recorder uses, observed as `record_write` runs when a hook watches them,
 * and — for a durable request — merging so that another execution's late
 * evidence is kept.
 */
import { Effect } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { keepConcurrentEvidence, mergeStoredEvidence } from "../../domain/internal/recordMerge.js"
import type { CallRef } from "../../domain/Operation.js"
import type * as RequestRecorder from "../../runtime/internal/requestRecorder.js"
import type { Operations } from "../../runtime/Operations.js"
import type { ExecutionStore } from "../../stores/ExecutionStore.js"

/**
 * How a request's record is written: straight to the store, or — when a
 * hook observes `record_write` — as one run of that operation per write.
 * Those observers' own runs are not recorded in the record they watch being
 * written (that would write it again, forever); their spans are their
 * evidence.
 */
export const recordWriter = (
  store: ExecutionStore.Service,
  operations: Operations,
  requestId: string,
  parent: CallRef | undefined
): RequestRecorder.Writer => {
  if (!operations.observes("record_write")) return { save: store.save, update: store.update }
  const observed = <A, E>(
    payload: { readonly revision: number; readonly status: string },
    write: Effect.Effect<A, E>
  ) =>
    Effect.flatMap(
      operations.call("record_write", { coordinates: { requestId }, parent, payload }),
      (call) => operations.run(call, write)
    )
  return {
    save: (record) =>
      observed({ revision: record.recordRevision, status: record.lifecycle?.status ?? "unknown" }, store.save(record)),
    update: (id, f, about) => observed(about ?? { revision: -1, status: "merge" }, store.update(id, f))
  }
}

/**
 * The writer of a durable request's record, which two executions may write
 * at once (a runner handing its shards over finishes what it runs while
 * another takes the request over): every write is merged into the stored
 * record (`mergeStoredEvidence`, then `keepConcurrentEvidence`) — never a
 * blind overwrite, whichever execution's revision is ahead.
 */
export const concurrentWriter = (writer: RequestRecorder.Writer, requestId: string): RequestRecorder.Writer => {
  const update = writer.update
  if (update === undefined) return writer
  const merging = (record: ExecutionRecord) => (stored: ExecutionRecord) =>
    keepConcurrentEvidence(stored, mergeStoredEvidence(stored, record))
  return {
    // A record that is not there (its create failed) is written as it is.
    save: (record) =>
      Effect.flatMap(
        update(requestId, merging(record), {
          revision: record.recordRevision,
          status: record.lifecycle?.status ?? "unknown"
        }),
        (result) => (result === "missing" ? writer.save(record) : Effect.succeed("written" as const))
      ),
    update: (id, f, about) =>
      update(id, (stored) => {
        const merged = f(stored)
        return merged === undefined ? undefined : keepConcurrentEvidence(stored, merged)
      }, about)
  }
}
