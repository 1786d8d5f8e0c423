/**
 * Prompt-value preparation of a request's snapshot (seed 000 §5.2–5.3):
 * the enrichments every prompt of the request is built from, prepared once
 * where the snapshot is fixed (after BeforePlanning, on a resume, in
 * workflow mode). A value the preparer fails on is left out, and the
 * failure is logged and recorded as a diagnostic. Callers skip this
 * entirely when the preparer is the identity (`undefined` here).
 */
import { Effect } from "effect"
import type { JsonObject } from "../../domain/Json.js"
import * as PromptPreparation from "../PromptPreparation.js"
import type { RequestState } from "./requestRecord.js"

/** The preparer the pipeline runs: `undefined` for the identity (nothing to do). */
export type ActivePreparer = PromptPreparation.PromptValuePreparer.Service | undefined

/** The preparer in context, `undefined` when it is the identity. */
export const activePreparer: Effect.Effect<ActivePreparer> = Effect.map(
  PromptPreparation.currentPreparer,
  (preparer) => (preparer === PromptPreparation.identity ? undefined : preparer)
)

/** The prompt enrichments of `enrichments`; failures are logged and recorded on the request's record. */
export const preparePromptEnrichments = (
  state: RequestState,
  preparer: PromptPreparation.PromptValuePreparer.Service,
  enrichments: JsonObject
): Effect.Effect<JsonObject> => {
  const prepared = PromptPreparation.prepare(enrichments, preparer)
  if (prepared.failures.length === 0) return Effect.succeed(prepared.enrichments)
  const notes = prepared.failures.map(PromptPreparation.failureText)
  return Effect.as(
    Effect.zipRight(
      Effect.forEach(notes, (note) => Effect.logWarning(note), { discard: true }),
      state.recorder.modify((r) => ({ ...r, diagnostics: [...r.diagnostics, ...notes] }))
    ),
    prepared.enrichments
  )
}
