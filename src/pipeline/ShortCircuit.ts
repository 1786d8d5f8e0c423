/**
 * Short-circuit decisions (seed 000 §6, C4–C5): a BeforePlanning hook may end
 * the request with a complete answer. Decisions are `authoritative` (policy
 * denials, rate limits) or `cache`. A cache decision is accepted only when
 * cache reads are enabled and every reserved variation dimension matches
 * symmetrically; otherwise the request continues. A legacy short-circuit is
 * authoritative.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Metric } from "effect"
import type { HookDecision } from "../domain/ExecutionRecord.js"
import type { JsonObject } from "../domain/Json.js"
import type { PipelineContext } from "../domain/PipelineContext.js"

/**
 * The legacy short-circuit payload: a complete answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface LegacyShortCircuit {
  readonly response: string
  /** Where the answer came from, e.g. `"semantic_cache"`. Not a metric label. */
  readonly source?: string | undefined
  readonly metadata?: JsonObject | undefined
}

/**
 * Provenance kind of a decision.
 *
 * @since 0.1.0
 * @category models
 */
export type ShortCircuitKind = "authoritative" | "cache"

/**
 * A provenance-aware decision. For `cache`, `cachedAgainst` must be the
 * variation map stored with the cache entry, not the gate's current one.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShortCircuitDecision {
  readonly kind: ShortCircuitKind
  readonly shortCircuit: LegacyShortCircuit
  readonly cachedAgainst?: Readonly<Record<string, string>> | undefined
}

/**
 * What a BeforePlanning hook sees of the cache policy for this request.
 *
 * @since 0.1.0
 * @category models
 */
export interface PipelineGate {
  readonly cacheReadEnabled: boolean
  /** The current value of every reserved variation dimension. */
  readonly cacheVary: Readonly<Record<string, string>>
}

/**
 * Produces the gate for a request. The foundation's default enables cache
 * reads with no reserved dimensions; features that own a dimension (a model
 * version, a policy revision) provide their own Layer.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ShortCircuit } from "effect-agent-pipeline"
 *
 * const GateLive = Layer.succeed(ShortCircuit.Gate, {
 *   forRequest: (ctx) => ({
 *     cacheReadEnabled: ctx.metadata.no_cache !== true,
 *     cacheVary: { model: "offline-1", locale: String(ctx.metadata.locale ?? "en") }
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Gate extends Context.Tag("effect-agent-pipeline/ShortCircuitGate")<
  Gate,
  { readonly forRequest: (context: PipelineContext) => PipelineGate }
>() {}

/**
 * The default gate.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultGate: PipelineGate = { cacheReadEnabled: true, cacheVary: {} }

/**
 * The default gate as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDefaultGate: Layer.Layer<Gate> = Layer.succeed(Gate, { forRequest: () => defaultGate })

/**
 * Symmetric dimension match: both maps have exactly the same reserved keys
 * with equal values; a key present on one side only is a mismatch.
 *
 * @since 0.1.0
 * @category utils
 */
export const dimensionsMatch = (
  current: Readonly<Record<string, string>>,
  cachedAgainst: Readonly<Record<string, string>>
): boolean => {
  const a = Object.keys(current)
  const b = Object.keys(cachedAgainst)
  if (a.length !== b.length) return false
  for (const key of a) {
    if (!Object.prototype.hasOwnProperty.call(cachedAgainst, key) || cachedAgainst[key] !== current[key]) return false
  }
  return true
}

/**
 * The evaluated outcome of a hook's short-circuit.
 *
 * @since 0.1.0
 * @category models
 */
export type Evaluation =
  | {
    readonly _tag: "Accepted"
    readonly kind: ShortCircuitKind
    readonly shortCircuit: LegacyShortCircuit
    readonly decision: HookDecision
    readonly diagnostic?: string | undefined
  }
  | { readonly _tag: "Rejected"; readonly kind: ShortCircuitKind; readonly decision: HookDecision }
  | {
    readonly _tag: "ContractViolation"
    readonly reason: "unknown_kind" | "missing_payload" | "ambiguous_result"
    readonly detail: string
    readonly decision: HookDecision
  }

const contract = (
  reason: "unknown_kind" | "missing_payload" | "ambiguous_result",
  detail: string
): Evaluation => ({
  _tag: "ContractViolation",
  reason,
  detail,
  decision: { policy: "fail_closed", action: "terminate", reason: "contract_error" }
})

/** A kind as the contract error names it; never throws (a `bigint`, a cycle), never long. */
const kindText = (kind: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(kind) ?? String(kind)
  } catch {
    text = typeof kind
  }
  return text.length <= 80 ? text : `${text.slice(0, 79)}…`
}

const validPayload = (u: unknown): u is LegacyShortCircuit =>
  typeof u === "object" && u !== null && typeof (u as { response?: unknown }).response === "string"

const validDimensions = (u: unknown): u is Readonly<Record<string, string>> =>
  typeof u === "object" && u !== null && !Array.isArray(u) &&
  Object.values(u).every((v) => typeof v === "string")

/**
 * Evaluates what a BeforePlanning hook returned against the gate. `legacy`
 * and `decision` are unchecked fields, so JavaScript callers that return
 * the wrong shape get a contract violation, not a crash. (BeforePlanning
 * passes copies already checked as JSON: a payload that is not JSON — a
 * `bigint`, a cycle, a getter that throws — fails that hook run with
 * `invalid_result` before it gets here.)
 *
 * @since 0.1.0
 * @category utils
 */
export const evaluate = (legacy: unknown, decision: unknown, gate: PipelineGate): Evaluation | undefined => {
  if (legacy !== undefined && legacy !== null && decision !== undefined && decision !== null) {
    return contract("ambiguous_result", "returned both a legacy shortCircuit and a decision")
  }
  if (legacy !== undefined && legacy !== null) {
    if (!validPayload(legacy)) return contract("missing_payload", "legacy shortCircuit has no string response")
    return {
      _tag: "Accepted",
      kind: "authoritative",
      shortCircuit: legacy,
      decision: { policy: "fail_closed", action: "short_circuit", reason: "authoritative" },
      diagnostic: Object.keys(gate.cacheVary).length > 0
        ? `legacy short-circuit treated as authoritative while reserved cache dimensions exist (${
          Object.keys(gate.cacheVary).sort().join(", ")
        }); migrate cache hooks to decisions`
        : undefined
    }
  }
  if (decision === undefined || decision === null) return undefined
  if (typeof decision !== "object") return contract("missing_payload", "decision is not an object")
  const { cachedAgainst, kind, shortCircuit } = decision as {
    readonly kind?: unknown
    readonly shortCircuit?: unknown
    readonly cachedAgainst?: unknown
  }
  if (kind !== "authoritative" && kind !== "cache") {
    return contract("unknown_kind", `unknown decision kind ${kindText(kind)}`)
  }
  if (!validPayload(shortCircuit)) {
    return contract("missing_payload", "decision has no shortCircuit with a string response")
  }
  if (kind === "authoritative") {
    return {
      _tag: "Accepted",
      kind,
      shortCircuit,
      decision: { policy: "fail_closed", action: "short_circuit", reason: "authoritative" }
    }
  }
  if (!gate.cacheReadEnabled) {
    return {
      _tag: "Rejected",
      kind,
      decision: { policy: "fail_closed", action: "continue", reason: "cache_read_disabled" }
    }
  }
  const against = cachedAgainst === undefined ? {} : cachedAgainst
  if (!validDimensions(against) || !dimensionsMatch(gate.cacheVary, against)) {
    return {
      _tag: "Rejected",
      kind,
      decision: { policy: "fail_closed", action: "continue", reason: "cache_dimension_mismatch" }
    }
  }
  return {
    _tag: "Accepted",
    kind,
    shortCircuit,
    decision: { policy: "fail_closed", action: "short_circuit", reason: "cache_match" }
  }
}

/**
 * The bounded decision counter. Labels: `kind`, `reason`, `status` only —
 * never hook names or sources (C17).
 *
 * @since 0.1.0
 * @category metrics
 */
export const decisionCounter = Metric.counter("orchestration.pipeline.short_circuit.decision", {
  description: "Short-circuit decisions by provenance kind, reason and status",
  incremental: true
})

/**
 * The trace event an evaluated decision adds to the deciding hook's span:
 * the metric's labels plus what the metric leaves out on purpose — the hook
 * and the answer's source — so an accepted decision stays identifiable
 * (seed 000 §6).
 *
 * @since 0.1.0
 * @category utils
 */
export const decisionEvent = (hookName: string, evaluation: Evaluation): {
  readonly name: "pipeline.short_circuit.decision"
  readonly attributes: Readonly<Record<string, string>>
} => {
  const attributes: Record<string, string> = { "pipeline.short_circuit.hook": hookName }
  switch (evaluation._tag) {
    case "Accepted":
      attributes["pipeline.short_circuit.kind"] = evaluation.kind
      attributes["pipeline.short_circuit.reason"] = evaluation.decision.reason
      attributes["pipeline.short_circuit.status"] = "accepted"
      if (evaluation.shortCircuit.source !== undefined) {
        attributes["pipeline.short_circuit.source"] = evaluation.shortCircuit.source
      }
      break
    case "Rejected":
      attributes["pipeline.short_circuit.kind"] = evaluation.kind
      attributes["pipeline.short_circuit.reason"] = evaluation.decision.reason
      attributes["pipeline.short_circuit.status"] = "rejected"
      break
    case "ContractViolation":
      attributes["pipeline.short_circuit.kind"] = "invalid"
      attributes["pipeline.short_circuit.reason"] = evaluation.reason
      attributes["pipeline.short_circuit.status"] = "invalid"
  }
  return { name: "pipeline.short_circuit.decision", attributes }
}

/**
 * Records one decision on the counter.
 *
 * @since 0.1.0
 * @category utils
 */
export const recordDecisionMetric = (
  kind: string,
  reason: string,
  status: "accepted" | "rejected" | "invalid"
): Effect.Effect<void> =>
  Metric.increment(
    Metric.tagged(Metric.tagged(Metric.tagged(decisionCounter, "kind", kind), "reason", reason), "status", status)
  )
