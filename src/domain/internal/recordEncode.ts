/**
 * A record's encoded forms, for the stores:
 *
 * - {@link encodeBody} / {@link decodeBody}: the stored body — format 2, the
 *   compact form every store writes (`recordCompact.ts`), decoded together
 *   with format 1, the form every earlier version wrote (`recordBody.ts`);
 * - {@link encodeDirect}: the record Schema's encoded form (format 1),
 *   written without the Schema interpreter: the Schema's encoding of a
 *   record only renames `recordRevision` to `record_revision` (every other
 *   field encodes as itself). Property-tested equal to
 *   `ExecutionRecord.encode` (test/record/RoundTrip.test.ts).
 */
import type { ExecutionRecord, ExecutionRecordEncoded } from "../ExecutionRecord.js"

export {
  type BodyDecodeFailure,
  /** The record's stored body text (format 2, with its writer stamp): what a store writes. */
  bodyText as encodeBody,
  /** A parsed stored body of any format back into its record, or why it is not one. */
  decodeBody
} from "./recordBody.js"

/** The encoded form of a record the pipeline built. */
export const encodeDirect = (record: ExecutionRecord): ExecutionRecordEncoded => {
  const { recordRevision, ...rest } = record
  return { ...rest, record_revision: recordRevision }
}
