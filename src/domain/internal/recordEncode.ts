/**
 * A record's encoded (wire) form, written without the Schema interpreter:
 * stores encode every record they write, and the Schema's encoding of a
 * record only renames `recordRevision` to `record_revision` (every other
 * field encodes as itself). Property-tested equal to `ExecutionRecord.encode`
 * (test/record/RoundTrip.test.ts).
 */
import type { ExecutionRecord, ExecutionRecordEncoded } from "../ExecutionRecord.js"

/** The encoded form of a record the pipeline built. */
export const encodeDirect = (record: ExecutionRecord): ExecutionRecordEncoded => {
  const { recordRevision, ...rest } = record
  return { ...rest, record_revision: recordRevision }
}
