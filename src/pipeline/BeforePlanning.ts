/**
 * The BeforePlanning stage (seed 000 §4.1, §6; C4–C6): hooks run in
 * registration order, each seeing a snapshot of the enrichments accumulated
 * so far, returning changes and optionally a short-circuit. The first
 * accepted short-circuit wins and later hooks are not called. Every change to
 * an enrichment is recorded as a `planning_enrichment:<key>` effect with the
 * exact before/after values.
 *
 * A hook's result is read once, where it enters, into checked copies:
 * enrichments and short-circuit payloads as JSON values (at most
 * `Json.MAX_DEPTH` levels; each enrichment measured on the way for
 * `maxEnrichmentBytes`), tool entries rebuilt from their fields and
 * described. A value that is not JSON (a `bigint`, a cycle, a `Date`…) or
 * that throws when read (a getter, a Proxy) fails only that hook run with
 * `invalid_result` — a result that is not the stage's shape at all with
 * `wrong_shape` — under its failure policy; nothing of it is applied.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type * as ToolRegistry from "../ai/ToolRegistry.js"
import type { Json, JsonObject } from "../domain/Json.js"
import type { PipelineContext } from "../domain/PipelineContext.js"
import { HookContractError, type HookFailed } from "../domain/PipelineError.js"
import { allows } from "../runtime/Capability.js"
import {
  dependencyFailed,
  failedClosed,
  guarded,
  type Inflight,
  type InvocationSpec,
  invoke,
  syncOnly,
  undeclaredContribution,
  type Verdict
} from "../runtime/internal/invoke.js"
import { failureDecision } from "../runtime/internal/run.js"
import { skipped } from "../runtime/internal/skip.js"
import type { Participant } from "../runtime/Subscription.js"
import type { StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"
import {
  applyChanges,
  readChanges,
  sizesAfter,
  sizesOf,
  toolEffect,
  toolKey,
  totalSize
} from "./internal/enrichmentChanges.js"
import * as ShortCircuit from "./ShortCircuit.js"

/**
 * The accepted short-circuit that ended BeforePlanning.
 *
 * @since 0.1.0
 */
export interface AcceptedShortCircuit {
  readonly hookName: string
  readonly kind: ShortCircuit.ShortCircuitKind
  readonly reason: "authoritative" | "cache_match"
  readonly shortCircuit: ShortCircuit.LegacyShortCircuit
}

/**
 * The stage's outcome.
 *
 * @since 0.1.0
 */
export interface Outcome {
  readonly enrichments: JsonObject
  readonly shortCircuit?: AcceptedShortCircuit | undefined
  /** Tools hooks added for this request (`extra_tools`). */
  readonly tools?: ReadonlyArray<ToolRegistry.ToolEntry<never>> | undefined
}

/**
 * What the stage needs besides the request: the short-circuit gate, the
 * enrichment size limit and the registered tools (a hook may not add one
 * that is already there).
 *
 * @since 0.1.0
 */
export interface RunOptions {
  readonly gate: ShortCircuit.PipelineGate
  readonly maxEnrichmentBytes: number
  readonly hasTool: (namespace: string, agent: string, capability: string) => boolean
}

/**
 * The stage service.
 *
 * @since 0.1.0
 */
export class BeforePlanning extends Context.Tag("effect-agent-pipeline/BeforePlanning")<
  BeforePlanning,
  BeforePlanning.Service
>() {}

/** @since 0.1.0 */
export declare namespace BeforePlanning {
  /** @since 0.1.0 */
  export interface Service {
    readonly hookCount: number
    /**
     * Runs the hooks. `maxEnrichmentBytes` bounds the JSON size of all
     * enrichments together; a hook whose changes would exceed it fails open.
     */
    readonly run: (request: StageRequest, options: RunOptions) => Effect.Effect<Outcome, HookContractError | HookFailed>
  }
}

type Step =
  | { readonly _tag: "Continue"; readonly rejectedReason?: string | undefined }
  | {
    readonly _tag: "ShortCircuit"
    readonly accepted: AcceptedShortCircuit
    readonly diagnostic?: string | undefined
  }
  | { readonly _tag: "Violation"; readonly error: HookContractError }

/**
 * A BeforePlanning handler, its requirements provided.
 *
 * @since 0.1.0
 */
export type Handler = NonNullable<Hook.Hook<never>["beforePlanning"]>

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`).
 *
 * @since 0.1.0
 */
export const make = (participants: ReadonlyArray<Participant<Handler>>): BeforePlanning.Service => {
  // Defined once per stage, not per request: a generator created per call
  // loses its optimized code whenever a full GC finds none in flight.
  const body = Effect.fnUntraced(function*(
    request: StageRequest,
    { gate, hasTool, maxEnrichmentBytes }: RunOptions,
    inflight: Inflight
  ) {
    const enrichments: Record<string, Json> = { ...request.context.enrichments }
    // The frozen snapshot hooks see, rebuilt only after a hook changed the
    // enrichments (most hooks add nothing).
    let version = 0
    let view: PipelineContext | undefined
    let viewVersion = -1
    const snapshot = (): PipelineContext => {
      if (view === undefined || viewVersion !== version) {
        view = Object.freeze({ ...request.context, enrichments: Object.freeze({ ...enrichments }) })
        viewVersion = version
      }
      return view
    }
    const tools: Array<ToolRegistry.ToolEntry<never>> = []
    const toolKeys = new Set<string>()
    // Per-key JSON sizes, measured when a hook first changes something.
    let sizes: Map<string, number> | undefined
    const clock = yield* Effect.clock
    const completed: Array<boolean> = []
    for (let sequence = 0; sequence < participants.length; sequence++) {
      const participant = participants[sequence]!
      const { failure, grant, handler, id: hookName } = participant
      const onError = failureDecision(failure, "hook_error")
      const spec: InvocationSpec<Step> = {
        point: "before_planning",
        hookName,
        spanName: participant.spanName,
        metricLabels: participant.metricLabels,
        sequence,
        recorder: request.recorder,
        inflight,
        failure,
        execution: participant.execution,
        limit: participant.limit,
        // The hook sees a snapshot of the enrichments accumulated so far.
        call: () => handler(snapshot(), gate),
        plain: participant.plain === undefined ? undefined : () => participant.plain?.(snapshot(), gate),
        accept: (value): Verdict<Step> => {
          // Read once into checked copies: nothing of the hook's own value is used after this.
          const changes = readChanges(value, maxEnrichmentBytes)
          if ("error" in changes) {
            return { _tag: "Reject", error: changes.error, decision: onError, reason: changes.reason }
          }
          const enriches = changes.remove.length > 0 || Object.keys(changes.set).length > 0
          const decides = (changes.legacy !== undefined && changes.legacy !== null) ||
            (changes.decision !== undefined && changes.decision !== null)
          const addsTools = changes.tools.length > 0
          const undeclared = enriches && !allows(grant, "enrichments")
            ? "enrichments"
            : decides && !allows(grant, "short_circuit")
            ? "short_circuit"
            : addsTools && !allows(grant, "extra_tools")
            ? "extra_tools"
            : undefined
          if (undeclared !== undefined) {
            const what = undeclared === "enrichments"
              ? "changed enrichments"
              : undeclared === "short_circuit"
              ? "decided a short-circuit"
              : "added tools"
            return undeclaredContribution(failure, what, undeclared)
          }
          const clash = changes.tools.find((t, i) =>
            hasTool(t.namespace, t.agent, t.tool.name) || toolKeys.has(toolKey(t)) ||
            changes.tools.findIndex((u) => toolKey(u) === toolKey(t)) !== i
          )
          if (clash !== undefined) {
            return {
              _tag: "Reject",
              error: `wrong result shape: tool ${toolKey(clash)} is already available to this request`,
              decision: onError,
              reason: "wrong_shape"
            }
          }
          if (enriches) {
            const next = sizesAfter(sizes ?? sizesOf(enrichments), changes)
            const total = totalSize(next)
            if (total > maxEnrichmentBytes) {
              return {
                _tag: "Reject",
                error: `enrichments would total ${total} bytes, over the limit of ${maxEnrichmentBytes} bytes ` +
                  "(PipelineOptions.maxEnrichmentBytes); the hook's changes were dropped",
                decision: onError
              }
            }
            sizes = next
          }
          // What actually changed (not what was returned): re-setting a value
          // to what it was contributes nothing.
          const now = clock.unsafeCurrentTimeMillis()
          const applied = applyChanges(enrichments, changes, now)
          if (applied.applied.length > 0) version++
          const effects = [...applied.effects, ...changes.tools.map((t) => toolEffect(t, now))]
          for (const t of changes.tools) {
            tools.push(t)
            toolKeys.add(toolKey(t))
          }
          const added = changes.tools.map(toolKey).sort()
          const contribution = applied.applied.length > 0 || decides || addsTools
            ? {
              enrichments: applied.applied,
              ...(addsTools ? { tools: added } : {}),
              ...(decides ? { decision: changes.decision ?? changes.legacy } : {})
            }
            : undefined
          const evaluation = ShortCircuit.evaluate(changes.legacy, changes.decision, gate)
          if (evaluation === undefined) return { _tag: "Accept", value: { _tag: "Continue" }, effects, contribution }
          switch (evaluation._tag) {
            case "Accepted":
              return {
                _tag: "Accept",
                value: {
                  _tag: "ShortCircuit",
                  accepted: {
                    hookName,
                    kind: evaluation.kind,
                    reason: evaluation.decision.reason === "cache_match" ? "cache_match" : "authoritative",
                    shortCircuit: evaluation.shortCircuit
                  },
                  diagnostic: evaluation.diagnostic
                },
                decision: evaluation.decision,
                effects,
                event: ShortCircuit.decisionEvent(hookName, evaluation),
                contribution
              }
            case "Rejected":
              return {
                _tag: "Accept",
                value: { _tag: "Continue", rejectedReason: evaluation.decision.reason },
                decision: evaluation.decision,
                effects,
                event: ShortCircuit.decisionEvent(hookName, evaluation),
                contribution
              }
            case "ContractViolation":
              return {
                _tag: "Reject",
                error: `hook contract error (${evaluation.reason}): ${evaluation.detail}`,
                decision: evaluation.decision,
                effects,
                event: ShortCircuit.decisionEvent(hookName, evaluation),
                value: {
                  _tag: "Violation",
                  error: new HookContractError({
                    hookName,
                    stage: "before_planning",
                    reason: evaluation.reason,
                    detail: evaluation.detail
                  })
                }
              }
          }
        }
      }
      const skip = skipped(participant, participants, completed, spec, dependencyFailed)
      if (skip !== undefined) {
        yield* skip
        continue
      }
      const result = yield* invoke(spec)
      if (result._tag === "Detached") {
        completed[sequence] = true
        continue
      }
      completed[sequence] = result._tag === "Accepted"
      const step = result.value
      if (step?._tag === "Violation") {
        yield* ShortCircuit.recordDecisionMetric("invalid", step.error.reason, "invalid")
        return yield* Effect.fail(step.error)
      }
      if (result._tag === "Rejected") {
        // A fail-closed hook's failure stops the request here (seed 001).
        if (failure === "fail_closed") return yield* Effect.fail(failedClosed(spec, result))
        continue
      }
      if (step === undefined) continue
      switch (step._tag) {
        case "Continue":
          if (step.rejectedReason !== undefined) {
            yield* ShortCircuit.recordDecisionMetric("cache", step.rejectedReason, "rejected")
          }
          continue
        case "ShortCircuit":
          yield* ShortCircuit.recordDecisionMetric(step.accepted.kind, step.accepted.reason, "accepted")
          if (step.diagnostic !== undefined) {
            const diagnostic = `${hookName}: ${step.diagnostic}`
            yield* Effect.logWarning(diagnostic)
            yield* request.recorder.modify((r) => ({ ...r, diagnostics: [...r.diagnostics, diagnostic] }))
          }
          return { enrichments, shortCircuit: step.accepted, tools }
      }
    }
    return { enrichments, tools }
  })
  // Sync-only points run without an exit hook while spans are not collected.
  const sync = syncOnly(participants)
  return {
    hookCount: participants.length,
    run: (request, options) =>
      participants.length === 0
        ? Effect.succeed({ enrichments: request.context.enrichments })
        : guarded((inflight) => body(request, options, inflight), sync)
  }
}
