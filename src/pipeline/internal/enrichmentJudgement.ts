/**
 * How BeforePlanning judges one hook's result (seed 000 §4.1, §6; C4–C6):
 * read it once into checked copies, refuse contributions the hook did not
 * declare and tools that clash, keep the enrichments within their byte
 * limit, apply what actually changed (with the exact before/after effects)
 * and evaluate a short-circuit or decision against the gate. The stage
 * (`BeforePlanning.ts`) folds the verdicts; this module is the judgement.
 */
import type { Clock } from "effect"
import type * as ToolRegistry from "../../ai/ToolRegistry.js"
import type { Json } from "../../domain/Json.js"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import { HookContractError } from "../../domain/PipelineError.js"
import { allows } from "../../runtime/Capability.js"
import { failureDecision } from "../../runtime/internal/failures.js"
import { undeclaredContribution, type Verdict } from "../../runtime/internal/invoke.js"
import type { Participant } from "../../runtime/Subscription.js"
import * as ShortCircuit from "../ShortCircuit.js"
import { applyChanges, readChanges, sizesAfter, sizesOf, toolEffect, toolKey, totalSize } from "./enrichmentChanges.js"

/**
 * The accepted short-circuit that ended BeforePlanning.
 */
export interface AcceptedShortCircuit {
  readonly hookName: string
  readonly kind: ShortCircuit.ShortCircuitKind
  readonly reason: "authoritative" | "cache_match"
  readonly shortCircuit: ShortCircuit.LegacyShortCircuit
}

/** What one accepted (or refused) run means for the stage. */
export type Step =
  | { readonly _tag: "Continue"; readonly rejectedReason?: string | undefined }
  | {
    readonly _tag: "ShortCircuit"
    readonly accepted: AcceptedShortCircuit
    readonly diagnostic?: string | undefined
  }
  | { readonly _tag: "Violation"; readonly error: HookContractError }

/** One request's pass through BeforePlanning: what the hooks have contributed so far. */
export interface Accumulated {
  readonly context: PipelineContext
  readonly gate: ShortCircuit.PipelineGate
  readonly maxEnrichmentBytes: number
  readonly hasTool: (namespace: string, agent: string, capability: string) => boolean
  readonly clock: Clock.Clock
  readonly enrichments: Record<string, Json>
  readonly tools: Array<ToolRegistry.ToolEntry<never>>
  readonly toolKeys: Set<string>
  /** Per-key JSON sizes, measured when a hook first changes something. */
  sizes: Map<string, number> | undefined
  /** Bumped by every applied change: the snapshot hooks see is rebuilt only then. */
  version: number
  view: PipelineContext | undefined
  viewVersion: number
  shortCircuit: AcceptedShortCircuit | undefined
}

/** The frozen snapshot of the enrichments accumulated so far, which the next hook sees. */
export const snapshot = (state: Accumulated): PipelineContext => {
  if (state.view === undefined || state.viewVersion !== state.version) {
    state.view = Object.freeze({ ...state.context, enrichments: Object.freeze({ ...state.enrichments }) })
    state.viewVersion = state.version
  }
  return state.view
}

const undeclaredWhat = {
  enrichments: "changed enrichments",
  short_circuit: "decided a short-circuit",
  extra_tools: "added tools"
} as const

/**
 * Judges one BeforePlanning result and, when it is taken, applies it to
 * `state`: nothing of a refused result is applied, and nothing of the
 * hook's own value is used after this.
 */
export const judge = (value: unknown, state: Accumulated, participant: Participant<unknown>): Verdict<Step> => {
  const { failure, grant, id: hookName } = participant
  const onError = failureDecision(failure, "hook_error")
  const changes = readChanges(value, state.maxEnrichmentBytes)
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
  if (undeclared !== undefined) return undeclaredContribution(failure, undeclaredWhat[undeclared], undeclared)
  const clash = changes.tools.find((t, i) =>
    state.hasTool(t.namespace, t.agent, t.tool.name) || state.toolKeys.has(toolKey(t)) ||
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
    const next = sizesAfter(state.sizes ?? sizesOf(state.enrichments), changes)
    const total = totalSize(next)
    if (total > state.maxEnrichmentBytes) {
      return {
        _tag: "Reject",
        error: `enrichments would total ${total} bytes, over the limit of ${state.maxEnrichmentBytes} bytes ` +
          "(PipelineOptions.maxEnrichmentBytes); the hook's changes were dropped",
        decision: onError
      }
    }
    state.sizes = next
  }
  // What actually changed (not what was returned): re-setting a value to
  // what it was contributes nothing.
  const now = state.clock.unsafeCurrentTimeMillis()
  const applied = applyChanges(state.enrichments, changes, now)
  if (applied.applied.length > 0) state.version++
  const effects = [...applied.effects, ...changes.tools.map((t) => toolEffect(t, now))]
  for (const t of changes.tools) {
    state.tools.push(t)
    state.toolKeys.add(toolKey(t))
  }
  const contribution = applied.applied.length > 0 || decides || addsTools
    ? {
      enrichments: applied.applied,
      ...(addsTools ? { tools: changes.tools.map(toolKey).sort() } : {}),
      ...(decides ? { decision: changes.decision ?? changes.legacy } : {})
    }
    : undefined
  const evaluation = ShortCircuit.evaluate(changes.legacy, changes.decision, state.gate)
  if (evaluation === undefined) return { _tag: "Accept", value: { _tag: "Continue" }, effects, contribution }
  const event = ShortCircuit.decisionEvent(hookName, evaluation)
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
        event,
        contribution
      }
    case "Rejected":
      return {
        _tag: "Accept",
        value: { _tag: "Continue", rejectedReason: evaluation.decision.reason },
        decision: evaluation.decision,
        effects,
        event,
        contribution
      }
    case "ContractViolation":
      return {
        _tag: "Reject",
        error: `hook contract error (${evaluation.reason}): ${evaluation.detail}`,
        decision: evaluation.decision,
        effects,
        event,
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
