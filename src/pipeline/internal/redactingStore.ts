/**
 * The execution store as the pipeline writes to it under the redaction
 * guardrail: every record is redacted on its way in (create, save, update),
 * so no writer — the recorder, a resume, a late effect update — can store a
 * text the guardrail would redact. Reads return what is stored.
 */
import type { Redactor } from "../../runtime/Redaction.js"
import type { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import { redactRecord, textRedaction } from "./redactValues.js"

/** `store`, redacting each record it writes. */
export const redactingStore = (store: ExecutionStore.Service, redactor: Redactor): ExecutionStore.Service => {
  const redact = textRedaction(redactor)
  return {
    ...store,
    create: (record) => store.create(redactRecord(record, redact)),
    save: (record) => store.save(redactRecord(record, redact)),
    update: (requestId, f) =>
      store.update(requestId, (record) => {
        const next = f(record)
        return next === undefined ? undefined : redactRecord(next, redact)
      })
  }
}
