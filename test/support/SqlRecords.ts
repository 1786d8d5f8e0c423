/**
 * Records for the SQL stores' write-path tests: as the pipeline writes
 * them — running or finished, with `hooks` hook runs, stamped by a writer.
 */
import { Schema } from "effect"
import { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"

/** A record as the pipeline writes it: running at first, `hooks` runs, the writer that wrote it. */
export const record = (
  requestId: string,
  revision: number,
  options: { readonly hooks?: number; readonly writer?: string; readonly status?: "running" | "succeeded" } = {}
): ExecutionRecord =>
  Schema.decodeUnknownSync(ExecutionRecord)({
    requestId,
    request: `request ${requestId}`,
    record_revision: revision,
    lifecycle: { status: options.status ?? "succeeded", startedAt: 1 },
    hookInvocations: Array.from({ length: options.hooks ?? 0 }, (_, sequence) => ({
      name: `hook-${sequence}`,
      stage: "before_planning",
      outcome: "succeeded",
      sequence,
      startedAt: 1,
      duration: 1,
      effects: []
    })),
    ...(options.writer === undefined ? {} : { writer: { id: options.writer, seq: revision } }),
    finalResponse: `rev-${revision}`
  })
