/**
 * The audit hook: an Around observer of `inference`. Its begin opens a
 * watch on the attempts of the run it observes (modelRecord.ts: each
 * attempt is handed over as it ends, retries, the fallback and a
 * stream's attempts included) — synchronously, so the begin costs no
 * fiber; its finish closes the watch and delivers each attempt as an
 * audit event three ways: an effect of the hook's run in the execution
 * record (`model_call_<n>`; a no-op with recording off), one log line
 * through Effect's `Logger`, and the audit metrics.
 */
import { Effect, LogLevel } from "effect"
import { type SeenAttempt, watchAttempts } from "../../ai/internal/modelRecord.js"
import type { Hook } from "../../pipeline/Hook.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import { type AuditEvent, eventOf, fieldsOf, summaryOf } from "./auditEvent.js"
import { unsafeRecord } from "./auditMetrics.js"
import type { AuditConfig } from "./auditOptions.js"

/** The effect id of the `sequence`-th model call of an inference run. */
export const effectIdOf = (sequence: number): string => `model_call_${sequence}`

/** The message of the audit log line (its fields are annotations). */
export const logMessage = "model call"

/** Delivers one event: the record's effect, the log line, the metrics. */
const deliver = (config: AuditConfig, event: AuditEvent): Effect.Effect<void> => {
  const fields = fieldsOf(event)
  const reported = Effect.ignore(HookEffects.report({
    effectId: effectIdOf(event.sequence),
    name: "Model call",
    status: event.outcome === "succeeded" ? "succeeded" : "failed",
    data: fields,
    startedAt: event.startedAt,
    duration: event.latencyMs,
    summary: summaryOf(event),
    ...(event.outcome === "succeeded" ? {} : { error: event.errorType ?? event.outcome })
  }))
  const logged = config.logLevel === LogLevel.None
    ? Effect.void
    : Effect.annotateLogs(Effect.logWithLevel(config.logLevel, logMessage), fields)
  const counted = config.metrics ? Effect.sync(() => unsafeRecord(event)) : Effect.void
  return Effect.zipRight(Effect.zipRight(reported, logged), counted)
}

/** The audit hook of `config`. */
export const make = (config: AuditConfig): Hook => ({
  name: config.name,
  around: {
    inference: (call) => {
      const seen: Array<SeenAttempt> = []
      const unwatch = watchAttempts(call.coordinates.requestId, {
        run: call.callId,
        purpose: call.payload.purpose,
        phase: call.coordinates.phase,
        streamed: call.payload.streamed,
        seen: (attempt) => void seen.push(attempt)
      })
      return Effect.succeed(() =>
        Effect.suspend(() => {
          unwatch()
          const { requestId } = call.coordinates
          return Effect.forEach(seen, (attempt, i) => deliver(config, eventOf(config, requestId, i + 1, attempt)), {
            discard: true
          })
        })
      )
    }
  }
})
