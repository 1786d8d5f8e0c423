/**
 * The execution store as the pipeline writes to it under the redaction
 * guardrail: every record is redacted on its way in (create, save, update),
 * so no writer — the recorder, a resume, a late effect update — can store a
 * text the guardrail would redact. Reads return what is stored. The
 * store's fast paths for a request's create (`stores/internal/`) are kept.
 */
import type { Redactor } from "../../runtime/Redaction.js"
import type { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import { detachedCreateOf, withDetachedCreate } from "../../stores/internal/detachedCreates.js"
import { isSynchronous, markSynchronous } from "../../stores/internal/synchronousStores.js"
import { redactRecord, textRedaction } from "./redactValues.js"

/** `store`, redacting each record it writes. */
export const redactingStore = (store: ExecutionStore.Service, redactor: Redactor): ExecutionStore.Service => {
  const redact = textRedaction(redactor)
  const wrapped: ExecutionStore.Service = {
    ...store,
    create: (record) => store.create(redactRecord(record, redact)),
    save: (record) => store.save(redactRecord(record, redact)),
    update: (requestId, f) =>
      store.update(requestId, (record) => {
        const next = f(record)
        return next === undefined ? undefined : redactRecord(next, redact)
      })
  }
  // The store's own fast paths for a request's create stay, redacting too.
  const detached = detachedCreateOf(store)
  if (detached !== undefined) {
    withDetachedCreate(wrapped, (record, now, onFailure) => detached(redactRecord(record, redact), now, onFailure))
  }
  return isSynchronous(store) ? markSynchronous(wrapped) : wrapped
}
