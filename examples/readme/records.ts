/**
 * README "Reading execution records": the evidence a request leaves in the
 * ExecutionStore — completion, steps, hook invocations with their decisions,
 * and the effects hooks reported.
 */
// #region readme
import { Console, Effect, Option } from "effect"
import { ExecutionRecord, ExecutionStore } from "effect-agent-pipeline"

export const printEvidence = (requestId: string) =>
  Effect.gen(function*() {
    const store = yield* ExecutionStore.ExecutionStore
    const found = yield* store.get(requestId)
    if (Option.isNone(found)) return yield* Console.log(`${requestId}: no record (unknown, expired, or recording off)`)
    const record = found.value
    // "succeeded" | "failed" | "interrupted" | "suspended" | "rejected" | "running" | "unknown" (legacy record)
    const completion = ExecutionRecord.requestCompletion(record)
    yield* Console.log(`${record.requestId}: ${completion}, revision ${record.recordRevision}, mode ${record.mode}`)
    if (record.lifecycle?.status === "failed") {
      yield* Console.log(`  failed with ${record.lifecycle.errorTag}: ${record.lifecycle.errorMessage}`)
    }
    for (const phase of record.phases) {
      for (const step of phase.steps) {
        yield* Console.log(`  phase ${phase.phase} step ${step.step_id} ${step.capability}: ${step.status}`)
      }
    }
    for (const hook of record.hookInvocations) {
      // A missing decision means "not recorded", never "succeeded".
      const decision = hook.decision === undefined
        ? "no decision recorded"
        : `${hook.decision.policy}/${hook.decision.action}/${hook.decision.reason}`
      yield* Console.log(
        `  ${hook.stage} ${hook.name}: ${hook.outcome} (${decision})${hook.error ? ` ${hook.error}` : ""}`
      )
      for (const effect of hook.effects) {
        yield* Console.log(`    effect ${effect.effectId}: ${effect.status} ${JSON.stringify(effect.data ?? null)}`)
      }
    }
    if (record.shortCircuit !== undefined) {
      yield* Console.log(`  short-circuited by ${record.shortCircuit.hookName} (${record.shortCircuit.reason})`)
    }
  })
// #endregion readme
